// SPDX-License-Identifier: Apache-2.0
// A library that the "baddep" fake plugin links against and that the loader then cannot find, so
// that dlopen fails the way it does for a CUDA plugin on a machine without libcublas.
extern "C" __attribute__((visibility("default"))) int porta_fake_dep_value(void) {
  return 42;
}
