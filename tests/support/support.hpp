// SPDX-License-Identifier: Apache-2.0
// Everything a porta test needs: Catch2, the devices under test, random data, poison, comparisons
// and host references.
#pragma once

#include "porta/porta.hpp"
#include "support/catch.hpp"
#include "support/check.hpp"
#include "support/devices.hpp"
#include "support/random.hpp"
#include "support/reference.hpp"
