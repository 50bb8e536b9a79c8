// SPDX-License-Identifier: Apache-2.0
// The one order of porta's sort, argsort, sort_by_key, argmax and argmin, as unsigned integer keys
// that every backend sorts or compares (the CPU's radix sort, CUB and rocPRIM through their key
// traits, the arg-reduction kernels):
//
//   -inf < ... < -0.0 < +0.0 < ... < +inf < NaN        (every NaN, whatever its sign or payload)
//
// -0.0 sorts below +0.0, as porta::min and porta::max order them (ops.hpp), so sort(x)[0] is min(x)
// bit for bit and x[argmax(x)] is max(x); NumPy instead keeps the two zeros in input order. All NaNs
// are one key: a stable sort keeps them in input order, and sort writes the canonical quiet NaN.
//
// encode(x) is the IEEE twiddle (flip the sign bit of a positive number, every bit of a negative
// one, so that the unsigned order is the numeric order), with NaN sent to a key that no number
// has: all ones (kNanHigh, ascending sorts and argmax) or zero (kNanLow, argmin and descending
// sorts, which then complement the key so that NaN still comes last). Integers flip their sign bit.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "porta/detail/config.hpp"

namespace porta::detail {

template <class T>
using SortBits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// Key of x in porta's order. NanHigh: NaN is the largest key (all ones), else the smallest (zero).
template <class T, bool NanHigh>
struct SortKey {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "porta sorts 4- and 8-byte types");
  using Bits = SortBits<T>;
  static constexpr Bits kSign = Bits(1) << (8 * sizeof(T) - 1);
  static constexpr Bits kNanKey = NanHigh ? ~Bits(0) : Bits(0);

  PORTA_HOST_DEVICE static Bits bits_of(T x) {
    Bits b;
    __builtin_memcpy(&b, &x, sizeof b);  // not std::memcpy: host-only in HIP device code after <cstring>
    return b;
  }
  PORTA_HOST_DEVICE static T value_of(Bits b) {
    T x;
    __builtin_memcpy(&x, &b, sizeof x);
    return x;
  }
  // Exponent all ones (the bits of +inf) for floating point; unused for integers.
  static constexpr Bits kInfBits = std::is_floating_point_v<T> ? (~kSign >> (std::numeric_limits<T>::digits - 1))
                                                                     << (std::numeric_limits<T>::digits - 1)
                                                               : Bits(0);
  static constexpr Bits kPosInf = kInfBits;
  static constexpr Bits kNegInf = kInfBits | kSign;
  // The raw bits of the canonical quiet NaN (what decode gives for the NaN key): +inf's exponent
  // and the top mantissa bit.
  static constexpr Bits kCanonicalNan = kInfBits | (kInfBits >> 1 & ~kInfBits);

  PORTA_HOST_DEVICE static constexpr Bits encode_bits(Bits b) {
    if constexpr (std::is_floating_point_v<T>) {
      if ((b & ~kSign) > kInfBits) return kNanKey;
      return b ^ ((b & kSign) != 0 ? ~Bits(0) : kSign);
    } else {
      return b ^ kSign;
    }
  }
  PORTA_HOST_DEVICE static constexpr Bits decode_bits(Bits k) {
    if constexpr (std::is_floating_point_v<T>) {
      if (k == kNanKey) return kCanonicalNan;
      return k ^ ((k & kSign) != 0 ? kSign : ~Bits(0));
    } else {
      return k ^ kSign;
    }
  }
  PORTA_HOST_DEVICE static Bits encode(T x) { return encode_bits(bits_of(x)); }
  PORTA_HOST_DEVICE static T decode(Bits k) { return value_of(decode_bits(k)); }
};

// The key a sort in the given direction orders by, ascending: a descending sort complements the
// kNanLow key, so that it is stable (equal keys keep their input order) and NaN still comes last.
template <class T>
PORTA_HOST_DEVICE inline SortBits<T> sort_key(T x, bool descending) {
  return descending ? SortBits<T>(~SortKey<T, false>::encode(x)) : SortKey<T, true>::encode(x);
}
template <class T>
PORTA_HOST_DEVICE inline T sort_key_value(SortBits<T> k, bool descending) {
  return descending ? SortKey<T, false>::decode(SortBits<T>(~k)) : SortKey<T, true>::decode(k);
}

}  // namespace porta::detail
