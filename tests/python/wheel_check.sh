#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The wheel, built from a finished CMake build (no second compile), installs into a fresh virtual
# environment without NumPy, imports, reports the CPU backend and computes: it carries libporta
# and the plugins, and finds them through its RPATH.
#   wheel_check.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR
set -eu
python=$1 src=$2 build=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
cd "$src"
PORTA_PREBUILT_DIR="$build" "$python" -m pip wheel --quiet --no-build-isolation --no-deps --wheel-dir "$work/dist" "$src"
wheel=$(ls "$work"/dist/porta-*.whl)
"$python" -m zipfile -l "$wheel" | grep -q 'porta/libporta.so.0'
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps "$wheel"
cd "$work"  # not the source tree, whose python/porta must not shadow the installed package
"$work/venv/bin/python" - <<'PY'
import porta
assert porta.__file__.startswith(__import__("sys").prefix), porta.__file__
info = porta.info()
assert [b for b in info["backends"] if b["name"] == "cpu"][0]["available"], info
x = porta.array([1.0, 2.0, 3.0, 4.0], dtype="float32", device="cpu")  # lists, without NumPy
assert porta.sum(x * 2.0) == 20.0
print("porta", porta.__version__, "from the wheel:", porta.__file__, "backends:",
      ", ".join("%s=%s" % (b["name"], "yes" if b["available"] else "no") for b in info["backends"]))
PY
