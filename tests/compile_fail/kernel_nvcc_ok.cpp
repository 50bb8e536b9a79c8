// SPDX-License-Identifier: Apache-2.0
// Compiled by nvcc: the kernel forms that are fast on the CPU there, PORTA_KERNEL and a functor,
// compile without a warning.
#include <porta/kernels.hpp>

struct Fill {
  porta::View<float> x;
  PORTA_HOST_DEVICE void operator()(std::int64_t i) const { x[i] = 1.0f; }
};

double fast_on_the_cpu(porta::Device dev, porta::Array<float>& x) {
  auto xv = x.view();
  porta::parallel_for(dev, x.size(), PORTA_KERNEL((std::int64_t i) { xv[i] = 1.0f; }));
  porta::parallel_for(dev, x.size(), Fill{xv});
  return porta::transform_reduce(dev, x.size(), 0.0, porta::plus{},
                                 PORTA_KERNEL((std::int64_t i) { return double(xv[i]); }));
}
