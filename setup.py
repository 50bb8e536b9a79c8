# SPDX-License-Identifier: Apache-2.0
"""Builds the wheel of porta's Python module with CMake (pyproject.toml holds the metadata).

    pip install --no-build-isolation --no-deps .     # configure, build, install: offline

The wheel's porta/ folder holds _porta*.so, libporta.so.0 and the GPU plugins (libporta_cuda.so,
libporta_hip.so) that the build made; the module's RPATH is $ORIGIN and libporta looks for plugins
in its own folder, so the wheel finds everything without LD_LIBRARY_PATH. The CUDA and HIP runtime
libraries are not in it: a plugin whose runtime is missing is reported unavailable, with the reason,
by porta.info().

Environment:
  PORTA_CMAKE_ARGS     extra arguments for the CMake configure (e.g. "-DPORTA_ENABLE_CUDA=OFF")
  PORTA_CMAKE_BUILD_DIR  reuse this CMake build folder instead of a fresh one under build/
  PORTA_PREBUILT_DIR   take the files from an existing CMake build that has PORTA_BUILD_PYTHON on,
                       without running CMake (what the CI wheel test does)
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def cmake_version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(porta VERSION ([0-9.]+)", text).group(1)


def pyproject_version():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    return re.search(r'^version = "([0-9.]+)"', text, re.M).group(1)


if cmake_version() != pyproject_version():
    sys.exit("porta: pyproject.toml's version %s differs from CMakeLists.txt's %s" % (pyproject_version(), cmake_version()))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        build_dir = os.environ.get("PORTA_PREBUILT_DIR")
        if not build_dir:
            build_dir = os.environ.get("PORTA_CMAKE_BUILD_DIR") or os.path.join(ROOT, "build", "python-wheel")
            configure = [
                "cmake", "-S", ROOT, "-B", build_dir,
                "-DCMAKE_BUILD_TYPE=Release",
                "-DPORTA_BUILD_PYTHON=ON",
                "-DPORTA_BUILD_TESTS=OFF",
                "-DPORTA_BUILD_EXAMPLES=OFF",
                "-DPORTA_BUILD_BENCH=OFF",
                "-DPORTA_BUILD_TOOLS=OFF",
                # The module is built for the interpreter that runs pip, whatever python3 PATH finds.
                "-DPython_EXECUTABLE=" + sys.executable,
            ]
            if shutil.which("ninja") and not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
                configure += ["-G", "Ninja"]
            configure += shlex.split(os.environ.get("PORTA_CMAKE_ARGS", ""))
            subprocess.check_call(configure)
            jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
            subprocess.check_call(["cmake", "--build", build_dir, "--parallel", jobs])
        modules = glob.glob(os.path.join(build_dir, "python", "porta", "_porta*.so"))
        if len(modules) != 1:
            sys.exit("porta: expected one _porta*.so under %s/python/porta, found %r "
                     "(configure with -DPORTA_BUILD_PYTHON=ON)" % (build_dir, modules))
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(modules[0], os.path.join(dest, os.path.basename(self.get_ext_fullpath(ext.name))))
        # libporta under its SONAME (a wheel holds no symlinks), and every plugin beside it.
        shutil.copyfile(os.path.realpath(os.path.join(build_dir, "lib", "libporta.so.0")),
                        os.path.join(dest, "libporta.so.0"))
        for plugin in glob.glob(os.path.join(build_dir, "lib", "libporta_*.so")):
            shutil.copyfile(plugin, os.path.join(dest, os.path.basename(plugin)))


# setuptools' own folders (build/lib.*, bdist.*, egg-info) go under the CMake build folder that
# is packed, or under build/ (ignored by git): never into python/, and two wheels made from two
# build trees at once do not share them.
_work = os.path.join(os.environ.get("PORTA_PREBUILT_DIR") or os.path.join(ROOT, "build"), "python-setuptools")
os.makedirs(_work, exist_ok=True)

setup(
    ext_modules=[Extension("porta._porta", sources=[])],  # built by CMake; marks the wheel as platform-specific
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": _work}, "egg_info": {"egg_base": _work}},
)
