# SPDX-License-Identifier: Apache-2.0
# Spack package of porta. Kept in porta's repository, next to the CMake options it maps, and checked
# against them offline by tests/packaging/check_recipes.py (ctest -L packaging). packaging/README.md
# says how to install it from a checkout.

from spack.package import *

try:  # Spack 1.0 and later: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
    from spack_repo.builtin.build_systems.rocm import ROCmPackage
except ImportError:  # Spack 0.x exports them from spack.package
    pass


class Porta(CMakePackage, CudaPackage, ROCmPackage):
    """One scientific code on NVIDIA GPUs (CUDA), AMD GPUs (HIP) and CPUs (OpenMP): arrays,
    reductions, sorts, GEMM and user kernels that give the same bits on every device."""

    # Placeholders: the project has no public address yet. A version needs a real url/git (and a
    # sha256 for a release tarball) before `spack install` can fetch it; from a checkout, use
    # `spack develop` (packaging/README.md), which never fetches.
    homepage = "https://example.invalid/porta"
    url = "https://example.invalid/porta/porta-0.1.0.tar.gz"
    git = "https://example.invalid/porta.git"

    license("Apache-2.0")

    version("main", branch="main")
    # The release: project(porta VERSION ...) in CMakeLists.txt. Its sha256 is set when a release
    # tarball is published; until then only `spack develop` builds it.
    version("0.1.0")

    # cuda, cuda_arch come from CudaPackage; rocm, amdgpu_target from ROCmPackage.
    variant("mpi", default=False, description="Build the MPI plugin of porta::distributed")
    variant("python", default=False, description="Build the Python module (pybind11)")
    variant("blas", default=True, description="Use a BLAS for CPU float/double matmul")
    variant("openmp", default=True, description="Run the CPU backend on OpenMP threads")
    variant("tools", default=True, description="Build and install porta-info")

    depends_on("cxx", type="build")
    depends_on("c", type="build", when="+mpi")  # CMake's FindMPI probes MPI through C
    depends_on("cmake@3.21:", type="build")
    depends_on("blas", when="+blas")
    depends_on("mpi", when="+mpi")
    extends("python", when="+python")  # `spack load porta+python` puts the module on PYTHONPATH
    depends_on("python@3.8:", when="+python", type=("build", "link", "run"))
    depends_on("py-pybind11@2.6:", when="+python", type="build")
    depends_on("cuda@12:", when="+cuda")
    depends_on("hip", when="+rocm")
    depends_on("rocblas", when="+rocm")
    depends_on("llvm-openmp", when="+openmp %apple-clang")
    # Catch2 and Google Benchmark only build porta's own tests and benchmarks, which a package
    # does not install.
    depends_on("catch2", type="test")

    conflicts("cuda_arch=none", when="+cuda", msg="porta's CUDA plugin needs cuda_arch (e.g. cuda_arch=90)")
    conflicts("amdgpu_target=none", when="+rocm", msg="porta's HIP plugin needs amdgpu_target (e.g. gfx90a)")

    def _switch(self, variant):
        # porta's backend switches take AUTO, ON or OFF: a package says ON or OFF, never AUTO, so
        # that the spec alone decides what is built (ON fails the configure if the toolchain lacks).
        return "ON" if self.spec.satisfies("+" + variant) else "OFF"

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("PORTA_ENABLE_CUDA", self._switch("cuda")),
            self.define("PORTA_ENABLE_HIP", self._switch("rocm")),
            self.define("PORTA_ENABLE_MPI", self._switch("mpi")),
            self.define("PORTA_ENABLE_OPENMP", self._switch("openmp")),
            self.define("PORTA_BUILD_PYTHON", self._switch("python")),
            self.define_from_variant("PORTA_USE_BLAS", "blas"),
            self.define_from_variant("PORTA_BUILD_TOOLS", "tools"),
            self.define("PORTA_BUILD_TESTS", self.run_tests),
            self.define("PORTA_BUILD_EXAMPLES", False),
            self.define("PORTA_BUILD_BENCH", False),
        ]
        if spec.satisfies("+cuda"):
            # Machine code for each listed GPU, and the PTX of the newest so that later GPUs
            # run it too: what the default "90-real;90-virtual" does for one architecture.
            cuda_archs = spec.variants["cuda_arch"].value
            archs = ["%s-real" % a for a in cuda_archs]
            archs.append("%s-virtual" % max(cuda_archs, key=int))
            args.append(self.define("PORTA_CUDA_ARCHITECTURES", archs))
        if spec.satisfies("+rocm"):
            args.append(self.define("PORTA_HIP_ARCHITECTURES", list(spec.variants["amdgpu_target"].value)))
        if spec.satisfies("+python"):
            # The module goes to Python's site-packages under porta's prefix (platlib is relative
            # to the prefix), where extends("python") makes Spack look for it.
            args.append(self.define("Python_EXECUTABLE", spec["python"].command.path))
            args.append(self.define("PORTA_PYTHON_INSTALL_DIR", spec["python"].package.platlib))
        return args
