// SPDX-License-Identifier: Apache-2.0
// Random numbers: the counter-based Philox4x32-10 generator, the same bits on the CPU, CUDA and HIP
// and for any thread count (docs/random-and-scans.md).
//
//   auto u = porta::random::uniform<float>({n}, 42, dev);           // [0, 1)
//   auto z = porta::random::normal<double>({m, k}, 42, dev);       // mean 0, standard deviation 1
//   auto w = porta::random::normal<porta::complex<float>>({n}, 42, dev);  // E|w|^2 = 1
//   porta::random::normal(z, 42, {/*stream=*/1, /*offset=*/0});     // refill in place, another stream
//
//   // inside a user kernel (porta/kernels.hpp): one independent stream per index
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) {
//     porta::random::Philox rng(seed, /*stream=*/i);
//     xv[i] = rng.normal<float>();
//   }));
//
// A draw is a pure function of (seed, stream, offset, index): value i of an array filled by a
// built-in is the i-th draw of a Philox(seed, at.stream, at.offset) of the same type and
// distribution. Uniform floats have 24 random bits, doubles 53, in [0, 1). Normals come from
// Box-Muller with porta's own log, sin and cos (every multiply-add an explicit fma), not the
// platform's, which differ between glibc, CUDA and ROCm.
#pragma once

#include <cstdint>
#include <type_traits>

#include "porta/array.hpp"
#include "porta/complex.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/philox.hpp"
#include "porta/stream.hpp"

namespace porta::random {

// Where a draw starts: the stream (Philox's upper counter words; cuRAND's "subsequence") and the
// block offset inside it (4 words a block). Disjoint draws of one seed: other streams, or an offset
// advanced by blocks_for<T>(n).
struct Counter {
  std::uint64_t stream = 0;
  std::uint64_t offset = 0;
};

// Philox blocks that n values of T use (uniform or normal): ceil(n / 4) for float, ceil(n / 2)
// for double. `at.offset += porta::random::blocks_for<float>(x.size())` makes the next draw new.
// A complex value takes two draws of its part type (2 per block for complex<float>, 1 for
// complex<double>).
template <class T>
constexpr std::uint64_t blocks_for(std::int64_t n) {
  if constexpr (is_complex_v<T>) {
    using R = detail::real_type_t<T>;
    static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "porta::random draws float or double");
    constexpr std::int64_t k = detail::philox::kPerBlock<R> / 2;
    return n <= 0 ? 0 : static_cast<std::uint64_t>(n / k + (n % k != 0 ? 1 : 0));
  } else if constexpr (is_half_v<T>) {
    return blocks_for<float>(n);  // a 16-bit value is a float draw, rounded
  } else {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "porta::random draws float or double");
    // n / k + (n % k != 0): n + k - 1 would overflow for n near 2^63.
    constexpr std::int64_t k = detail::philox::kPerBlock<T>;
    return n <= 0 ? 0 : static_cast<std::uint64_t>(n / k + (n % k != 0 ? 1 : 0));
  }
}

// Uniform in [0, 1) and standard normal arrays of `shape` on `device`: float, double,
// complex<float>, complex<double>, float16 or bfloat16 (the float draw rounded once; a uniform that
// would round to 1 is the largest value below 1). A complex array is the real draw of its parts in order (part
// 2i and 2i + 1 of the same real draw), so uniform complex values have both parts in [0, 1); a
// complex normal has E|z|^2 = 1, each part a real normal times sqrt(1/2), as torch.randn's.
template <class T>
Array<T> uniform(const Shape& shape, std::uint64_t seed, Device device = default_device(), Counter at = {},
                 const Stream& stream = Stream());
template <class T>
Array<T> normal(const Shape& shape, std::uint64_t seed, Device device = default_device(), Counter at = {},
                const Stream& stream = Stream());
// The same draws written into an existing array (no allocation).
template <class T>
void uniform(Array<T>& out, std::uint64_t seed, Counter at = {}, const Stream& stream = Stream());
template <class T>
void normal(Array<T>& out, std::uint64_t seed, Counter at = {}, const Stream& stream = Stream());

// The generator for user kernels and host code: a small, trivially copyable state that draws the
// words of one stream in order, as cuRAND's curand_init(seed, subsequence, offset) does (the raw
// 32-bit words are the same as curand()'s for the same three numbers; the float and double maps
// are porta's own).
//
//   porta::random::Philox rng(seed, i);   // stream i: independent of every other index's
//   float u = rng.uniform<float>();       // one word
//   double z = rng.normal<double>();      // four words give two normals; the second is kept
class Philox {
 public:
  PORTA_HOST_DEVICE explicit Philox(std::uint64_t seed, std::uint64_t stream = 0, std::uint64_t offset = 0)
      : seed_(seed), stream_(stream), next_block_(offset) {}

  // Block b of this stream (4 words), independent of the state.
  PORTA_HOST_DEVICE detail::philox::Words block(std::uint64_t b) const {
    return detail::philox::block(seed_, stream_, b);
  }

  // The next 32-bit word of the stream.
  PORTA_HOST_DEVICE std::uint32_t next_u32() {
    if (pos_ == 4) {
      words_ = block(next_block_++);
      pos_ = 0;
    }
    return words_.v[pos_++];
  }

  // Uniform in [0, 1): float from one word (24 bits), double from two (53 bits).
  template <class T>
  PORTA_HOST_DEVICE T uniform() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "uniform<float> or uniform<double>");
    if constexpr (std::is_same_v<T, float>) {
      return detail::philox::uniform_float(next_u32());
    } else {
      const std::uint32_t hi = next_u32();
      return detail::philox::uniform_double(hi, next_u32());
    }
  }

  // Standard normal (Box-Muller): a pair from two words (float) or four (double); the pair's
  // second value is returned by the next call of the same type.
  template <class T>
  PORTA_HOST_DEVICE T normal() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "normal<float> or normal<double>");
    if constexpr (std::is_same_v<T, float>) {
      if (has_f_) {
        has_f_ = false;
        return cached_f_;
      }
      const std::uint32_t a = next_u32();
      const auto p = detail::philox::normal_pair<float>(a, next_u32(), 0, 0);
      cached_f_ = p.sin;
      has_f_ = true;
      return p.cos;
    } else {
      if (has_d_) {
        has_d_ = false;
        return cached_d_;
      }
      const std::uint32_t a = next_u32(), b = next_u32(), c = next_u32();
      const auto p = detail::philox::normal_pair<double>(a, b, c, next_u32());
      cached_d_ = p.sin;
      has_d_ = true;
      return p.cos;
    }
  }

 private:
  std::uint64_t seed_, stream_, next_block_;
  detail::philox::Words words_{};
  int pos_ = 4;  // next word of words_; 4: none left
  bool has_f_ = false, has_d_ = false;
  float cached_f_ = 0;
  double cached_d_ = 0;
};

}  // namespace porta::random
