// SPDX-License-Identifier: Apache-2.0
// Random numbers of the front end: validate, allocate, dispatch to the backends' random entry
// (Philox4x32-10 and the maps of include/porta/detail/philox.hpp on every backend).
#include <cstdint>

#include "algorithms/common.hpp"
#include "porta/random.hpp"

namespace porta::random {
namespace {

// A 16-bit array is the float draw rounded once (below). A complex array is drawn as the real array of its parts (real
// part i from draw 2i, imaginary part from draw 2i + 1), so its bits are the real draw's on every device. A complex
// normal has E|z|^2 = 1, as torch.randn's: each part is a real normal times sqrt(1/2), one rounded product.
template <class T>
void fill(const char* fn, porta_random_dist dist, Array<T>& out, std::uint64_t seed, Counter at, const Stream& stream) {
  const Device dev = detail::check_args(fn, {detail::arg("out", out)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (out.size() == 0) return;
  if constexpr (is_complex_v<T>) {
    using R = detail::real_type_t<T>;
    constexpr porta_dtype rt = detail::dtype_of<R>();
    const std::int64_t n = 2 * out.size();  // sizes stay below 2^62 elements: an Array's bytes fit in 64 bits
    c.run(c.table->random, dist, rt, n, seed, at.stream, at.offset, out.data(), c.stream);
    if (dist == PORTA_RANDOM_NORMAL)
      c.run(c.table->binary_scalar, PORTA_BINARY_MUL, rt, n, out.data(),
            detail::to_scalar(static_cast<R>(0.707106781186547524400844362104849039L)), 0, out.data(), c.stream);
  } else if constexpr (is_half_v<T>) {
    // The float draw, rounded once; a uniform value that rounds up to 1 becomes the largest value
    // below 1, so that the result stays in [0, 1) (that value then has 1.5 times the others' mass).
    Array<float> wide(out.shape(), dev, stream);
    c.run(c.table->random, dist, PORTA_F32, out.size(), seed, at.stream, at.offset, wide.data(), c.stream);
    c.run(c.table->cast, PORTA_F32, detail::dtype_of<T>(), out.size(), wide.data(), out.data(), c.stream);
    if (dist == PORTA_RANDOM_UNIFORM)
      c.run(c.table->binary_scalar, PORTA_BINARY_MIN, detail::dtype_of<T>(), out.size(), out.data(),
            detail::to_scalar(T::from_bits(static_cast<std::uint16_t>(T(1.0f).bits - 1u))), 0, out.data(), c.stream);
  } else {
    c.run(c.table->random, dist, detail::dtype_of<T>(), out.size(), seed, at.stream, at.offset, out.data(), c.stream);
  }
}

template <class T>
Array<T> make(const char* fn, porta_random_dist dist, const Shape& shape, std::uint64_t seed, Device device, Counter at,
              const Stream& stream) {
  Array<T> out = detail::new_output<T>(fn, shape, device, stream);
  fill(fn, dist, out, seed, at, stream);
  return out;
}

}  // namespace

template <class T>
Array<T> uniform(const Shape& shape, std::uint64_t seed, Device device, Counter at, const Stream& stream) {
  return make<T>("porta::random::uniform", PORTA_RANDOM_UNIFORM, shape, seed, device, at, stream);
}
template <class T>
Array<T> normal(const Shape& shape, std::uint64_t seed, Device device, Counter at, const Stream& stream) {
  return make<T>("porta::random::normal", PORTA_RANDOM_NORMAL, shape, seed, device, at, stream);
}
template <class T>
void uniform(Array<T>& out, std::uint64_t seed, Counter at, const Stream& stream) {
  fill("porta::random::uniform", PORTA_RANDOM_UNIFORM, out, seed, at, stream);
}
template <class T>
void normal(Array<T>& out, std::uint64_t seed, Counter at, const Stream& stream) {
  fill("porta::random::normal", PORTA_RANDOM_NORMAL, out, seed, at, stream);
}

#define PORTA_INSTANTIATE_RANDOM(T)                                                          \
  template Array<T> uniform<T>(const Shape&, std::uint64_t, Device, Counter, const Stream&); \
  template Array<T> normal<T>(const Shape&, std::uint64_t, Device, Counter, const Stream&);  \
  template void uniform<T>(Array<T>&, std::uint64_t, Counter, const Stream&);                \
  template void normal<T>(Array<T>&, std::uint64_t, Counter, const Stream&);
PORTA_INSTANTIATE_RANDOM(float)
PORTA_INSTANTIATE_RANDOM(double)
PORTA_INSTANTIATE_RANDOM(complex<float>)
PORTA_INSTANTIATE_RANDOM(complex<double>)
PORTA_INSTANTIATE_RANDOM(float16)
PORTA_INSTANTIATE_RANDOM(bfloat16)
#undef PORTA_INSTANTIATE_RANDOM

}  // namespace porta::random
