// SPDX-License-Identifier: Apache-2.0
// Four mistakes that pass on the CPU and break on a GPU, one per argument:
//
//   strict_mistakes host_read           reads an Array's data() on the host
//   strict_mistakes view_after_free     a kernel writes through a View whose Array is gone
//   strict_mistakes read_before_sync    reads a HostArray before the copy into it completed
//   strict_mistakes missing_copy_back   takes a result from data() instead of copying it back
//
// The device is porta::default_device(), so PORTA_DEVICE picks it: on cpu each program runs to
// the end and prints "not caught"; on cpu:strict each must stop with porta's report and exit
// status 70 (tests/strict/CMakeLists.txt runs both and checks; docs/strict.md quotes them).
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

#include "porta/host_array.hpp"
#include "porta/kernels.hpp"
#include "porta/porta.hpp"

namespace {

// example-begin host_read
float host_read(porta::Device dev) {
  auto x = porta::full<float>({3, 4}, 1.5f, dev);
  return x.data()[5];  // the host reads device memory: fine on cpu, garbage or a crash on a GPU
}
// example-end host_read

// example-begin view_after_free
float view_after_free(porta::Device dev) {
  porta::View<float> v;
  {
    auto x = porta::zeros<float>({1000}, dev);
    v = x.view();
  }  // x is freed here; v still points at its memory
  porta::parallel_for(
      dev, 1000, PORTA_LAMBDA(std::int64_t i) { v[i] = 2.0f; });
  porta::synchronize(dev);
  return 2.0f;
}
// example-end view_after_free

// example-begin read_before_sync
float read_before_sync(porta::Device dev) {
  porta::Stream s(dev);
  auto x = porta::full<float>({1 << 16}, 3.0f, dev);
  porta::HostArray<float> h({1 << 16}, dev);
  porta::copy(x, h, s);  // device -> host, asynchronous on a GPU
  return h[0];           // missing s.synchronize(): a GPU may not have written h yet
}
// example-end read_before_sync

// example-begin missing_copy_back
float missing_copy_back(porta::Device dev) {
  auto x = porta::arange<float>(1000, dev);
  auto y = porta::mul(x, x);
  std::vector<float> result(y.data(), y.data() + y.size());  // should be y.to_vector()
  return result[10];
}
// example-end missing_copy_back

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s host_read|view_after_free|read_before_sync|missing_copy_back\n", argv[0]);
    return 2;
  }
  const porta::Device dev = porta::default_device();
  const char* what = argv[1];
  float v = 0.0f;
  if (std::strcmp(what, "host_read") == 0) {
    v = host_read(dev);
  } else if (std::strcmp(what, "view_after_free") == 0) {
    v = view_after_free(dev);
  } else if (std::strcmp(what, "read_before_sync") == 0) {
    v = read_before_sync(dev);
  } else if (std::strcmp(what, "missing_copy_back") == 0) {
    v = missing_copy_back(dev);
  } else {
    std::fprintf(stderr, "unknown mistake %s\n", what);
    return 2;
  }
  std::printf("%s on %s: not caught (value %g)\n", what, dev.to_string().c_str(), static_cast<double>(v));
  return 0;
}
