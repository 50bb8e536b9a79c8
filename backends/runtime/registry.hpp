// SPDX-License-Identifier: Apache-2.0
// The runtime moved to runtime/ (it is a layer, not a backend). This forwarder keeps
// algorithms/common.hpp building until it includes "runtime/registry.hpp"; then delete it.
#pragma once

#include "runtime/registry.hpp"
