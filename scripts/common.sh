# SPDX-License-Identifier: Apache-2.0
# Shared by demo.sh and test.sh: installs what a fresh Debian machine lacks (when run as root)
# and puts the GPU toolchains on PATH, so both scripts work on a clean clone.

porta_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian packages porta's build, tests and benchmarks use (Open MPI: the MPI plugin and the tests
# under mpirun). HIP's are optional (PORTA_WITH_HIP=0 skips).
porta_packages=(cmake ninja-build g++ catch2 libopenblas-dev libopenblas0-openmp libbenchmark-dev python3
  pybind11-dev python3-dev python3-numpy python3-pytest python3-venv python3-setuptools python3-wheel python3-pip
  libopenmpi-dev openmpi-bin libmpfr-dev pkg-config libtrilinos-kokkos-dev)
porta_hip_packages=(hipcc libamdhip64-dev rocm-device-libs librocprim-dev)

porta_install_deps() {
  local want=("${porta_packages[@]}")
  if [ "${PORTA_WITH_HIP:-1}" = 1 ]; then want+=("${porta_hip_packages[@]}"); fi
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "porta: missing packages (${missing[*]}); install them or run as root on Debian/Ubuntu" >&2
    return 0
  fi
  echo "porta: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # One package that is not available (an older distribution without hipcc) must not stop the rest.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    for p in "${missing[@]}"; do
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
        echo "porta: could not install $p (continuing without it)" >&2
    done
}

porta_setup_path() {
  if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
}

porta_jobs() {
  local n
  n=$(nproc 2>/dev/null || echo 2)
  echo "${PORTA_JOBS:-$n}"
}
