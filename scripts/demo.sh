#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main demonstration: sets up a fresh machine, builds porta, says what it found (porta-info),
# and runs the quickstart example (a map, a reduce and a matmul, checked) on the best device.
# PORTA_DEVICE=cpu|cuda|hip|cuda:1 picks another device.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$porta_root"
PORTA_WITH_HIP=${PORTA_WITH_HIP:-0} porta_install_deps
porta_setup_path

build=${PORTA_BUILD_DIR:-build/demo}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPORTA_BUILD_TESTS=OFF -DPORTA_BUILD_EXAMPLES=ON >/dev/null
# Everything (not just quickstart): the GPU plugins are separate targets that nothing links.
cmake --build "$build" -j "$(porta_jobs)"
echo "== porta-info"
"$build/bin/porta-info"
echo "== quickstart"
"$build/bin/quickstart"
