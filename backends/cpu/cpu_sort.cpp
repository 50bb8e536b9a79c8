// SPDX-License-Identifier: Apache-2.0
// Sorting and arg-reductions of the CPU backend.
//
// sort: a parallel, stable LSD radix sort over the keys of porta/detail/sort_key.hpp (the order
// every backend shares: CUB and rocPRIM sort the same keys on GPUs), 8 bits per pass, 11 in large
// sorts (fewer passes). One OpenMP region runs every pass: each thread counts the digits of its own
// contiguous piece, one thread turns the counts into offsets (digit-major, thread-minor, which is
// what makes it stable), and each thread scatters its piece in order, through one 64-byte line per
// bucket that goes to memory whole when full (software write combining; a bucket's first and last
// lines go out partially, as they share memory with the neighbouring bucket or thread). A first
// read counts every digit position at once, so that passes in which all keys share a digit (small
// integers in int64, the exponent bits of numbers in a narrow range) are skipped, and gives the
// first pass its counts. Keys are encoded as the first pass reads them and decoded as the last one
// writes them; the output arrays serve as one of the two buffers.
//
// argreduce: the first index of the largest (argmax) or smallest (argmin) key of sort_key.hpp, NaN
// taking the place that wins, so the answer does not depend on the order of evaluation: threads
// each take a piece and the pieces are combined in index order.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_memory.hpp"
#include "porta/detail/sort_key.hpp"

namespace porta::detail::cpu {
namespace {

// Digits of 8 bits for small sorts; 11 for large ones, which takes a pass in four off 32-bit keys
// (three instead of four) and two in eight off 64-bit keys (six instead of eight) at the price of
// 2048 lines per thread (128 KiB, in L2) and a longer offset step.
constexpr int kSmallDigitBits = 8;
constexpr int kLargeDigitBits = 11;
constexpr std::int64_t kLargeDigitsFrom = std::int64_t(1) << 20;
// Elements per thread below which a sort stays on fewer threads: a pass costs a few ns per element
// and waking a team a few microseconds.
constexpr std::int64_t kGrainSort = std::int64_t(1) << 16;
// Scattered writes go through one cache line per bucket and thread (software write combining):
// 256 buckets times 16 threads are far more write streams than the store buffers and the TLB
// follow, so each key would cost a partial-line write; a whole line at once costs one.
constexpr std::size_t kLine = 64;

// The bits of a decoded key, to be buffered beside encoded ones.
template <class T>
inline SortBits<T> bits_of(T x) {
  SortBits<T> u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Sorts larger than this (bytes of keys) write their full lines around the caches: the next pass
// reads them from memory anyway, and a normal store first reads each line it fills.
constexpr std::size_t kStreamBytes = std::size_t(4) << 20;
// Sorts smaller than this (bytes of keys) scatter directly: their passes stay in the caches, where
// the buffered lines cost more instructions than they save.
constexpr std::size_t kCombineBytes = std::size_t(2) << 20;

// Copies 64 bytes. With `stream`, and `to` 16-byte aligned, as non-temporal stores (SSE2, which
// every x86-64 has); a pass that streamed ends with a fence before its barrier.
inline void put_line(void* to, const void* from, bool stream) {
#if defined(__SSE2__)
  if (stream && (reinterpret_cast<std::uintptr_t>(to) & 15) == 0) {
    auto* d = static_cast<__m128i*>(to);
    const auto* s = static_cast<const __m128i*>(from);
    _mm_stream_si128(d, _mm_load_si128(s));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
    return;
  }
#else
  (void)stream;
#endif
  std::memcpy(to, from, kLine);
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <int Bits, class U>
inline unsigned digit(U key, int pass) {
  return static_cast<unsigned>(key >> (pass * Bits)) & ((1u << Bits) - 1);
}

// V is the value payload (std::uint32_t or std::uint64_t: only its size matters), or void.
template <int Bits, class T, class V>
void radix_sort(std::int64_t n, const T* keys_in, T* keys_out, const void* values_in_v, void* values_out_v,
                bool descending) {
  using U = SortBits<T>;
  constexpr bool kValues = !std::is_void_v<V>;
  using VT = std::conditional_t<kValues, V, unsigned char>;
  constexpr int kBuckets = 1 << Bits;
  constexpr int kPasses = static_cast<int>((8 * sizeof(T) + Bits - 1) / Bits);
  constexpr std::int64_t kLineKeys = static_cast<std::int64_t>(kLine / sizeof(U));
  const bool stream = static_cast<std::size_t>(n) * sizeof(U) > kStreamBytes;
  const bool combine = static_cast<std::size_t>(n) * sizeof(U) > kCombineBytes;
  const auto* values_in = static_cast<const VT*>(values_in_v);
  auto* values_out = static_cast<VT*>(values_out_v);
  const auto key = [descending](T x) { return sort_key<T>(x, descending); };

  const int nt = threads_for(n, kGrainSort);
  // Counts of every digit position, per thread, from one read of the input.
  std::vector<std::int64_t> all(static_cast<std::size_t>(nt) * kPasses * kBuckets, 0);
  const auto piece = [n](int t, int T_) {
    const std::int64_t per = (n + T_ - 1) / T_;
    return std::pair<std::int64_t, std::int64_t>(std::min(n, t * per), std::min(n, (t + 1) * per));
  };
  const auto count_all = [&](int t, int T_) {
    const auto [b, e] = piece(t, T_);
    std::int64_t* c = all.data() + static_cast<std::size_t>(t) * kPasses * kBuckets;
    for (std::int64_t i = b; i < e; ++i) {
      const U k = key(keys_in[i]);
      for (int p = 0; p < kPasses; ++p) ++c[p * kBuckets + digit<Bits>(k, p)];
    }
  };
  int team = nt;
#if defined(_OPENMP)
  if (nt > 1) {
#pragma omp parallel num_threads(nt)
    {
#pragma omp single
      team = omp_get_num_threads();
      count_all(omp_get_thread_num(), team);
    }
  } else {
    count_all(0, 1);
  }
#else
  count_all(0, 1);
#endif
  int active[kPasses];
  int m = 0;
  for (int p = 0; p < kPasses; ++p) {
    std::int64_t top = 0;
    for (int d = 0; d < kBuckets; ++d) {
      std::int64_t s = 0;
      for (int t = 0; t < team; ++t) s += all[(static_cast<std::size_t>(t) * kPasses + p) * kBuckets + d];
      top = std::max(top, s);
    }
    if (top != n) active[m++] = p;
  }
  if (m == 0) {  // every key equal: the sort is a copy (keys through the codec: NaNs become canonical)
    parallel_ranges(n, kGrainCheap, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) keys_out[i] = sort_key_value<T>(key(keys_in[i]), descending);
      if constexpr (kValues) std::memcpy(values_out + b, values_in + b, static_cast<std::size_t>(e - b) * sizeof(VT));
    });
    return;
  }

  // Pass j reads what pass j - 1 wrote (the input for j = 0) and writes the output arrays when
  // m - 1 - j is even, the temporaries otherwise, so that the last pass lands in the outputs.
  // The temporaries come from the pool: fresh pages from the system would cost more to fault in
  // and zero than a pass costs to fill them.
  PoolBuffer key_tmp, value_tmp;
  if (m > 1 && key_tmp.allocate(static_cast<std::size_t>(n) * sizeof(U)) != PORTA_OK) throw std::bad_alloc();
  if (kValues && m > 1 && value_tmp.allocate(static_cast<std::size_t>(n) * sizeof(VT)) != PORTA_OK)
    throw std::bad_alloc();
  U* const key_buf[2] = {reinterpret_cast<U*>(keys_out), key_tmp.as<U>()};
  VT* const value_buf[2] = {values_out, value_tmp.as<VT>()};
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(team) * kBuckets);

  const auto run = [&](int t, int T_) {
    const auto [b, e] = piece(t, T_);
    std::int64_t* c = offsets.data() + static_cast<std::size_t>(t) * kBuckets;
    // The thread's write-combining lines, one per bucket; a value's slot is its key's.
    std::vector<unsigned char> lines(kLine + kBuckets * kLineKeys * (sizeof(U) + (kValues ? sizeof(VT) : 0)));
    auto* const kline =
        reinterpret_cast<U*>((reinterpret_cast<std::uintptr_t>(lines.data()) + kLine - 1) & ~(kLine - 1));
    auto* const vline = reinterpret_cast<VT*>(kline + kBuckets * kLineKeys);
    std::vector<std::int64_t> start_v(kBuckets);
    std::int64_t* const start = start_v.data();
    for (int j = 0; j < m; ++j) {
      const int p = active[j];
      const bool first = j == 0, last = j == m - 1;
      const U* src = first ? nullptr : key_buf[(m - j) % 2];
      const VT* vsrc = first ? values_in : value_buf[(m - j) % 2];
      U* dst = key_buf[(m - 1 - j) % 2];
      VT* vdst = value_buf[(m - 1 - j) % 2];
      const auto load = [&](std::int64_t i) { return first ? key(keys_in[i]) : src[i]; };
      if (first && T_ == team) {  // the first read counted this pass over the same pieces
        const std::int64_t* a = all.data() + (static_cast<std::size_t>(t) * kPasses + p) * kBuckets;
        std::copy(a, a + kBuckets, c);
      } else {
        std::fill(c, c + kBuckets, std::int64_t(0));
        for (std::int64_t i = b; i < e; ++i) ++c[digit<Bits>(load(i), p)];
      }
#if defined(_OPENMP)
#pragma omp barrier
#pragma omp single
#endif
      {
        std::int64_t sum = 0;
        for (int d = 0; d < kBuckets; ++d) {
          for (int u = 0; u < T_; ++u) {
            std::int64_t& o = offsets[static_cast<std::size_t>(u) * kBuckets + d];
            const std::int64_t cnt = o;
            o = sum;
            sum += cnt;
          }
        }
      }  // the single's implicit barrier publishes the offsets
      if (!combine) {
        for (std::int64_t i = b; i < e; ++i) {
          const U k = load(i);
          const std::int64_t o = c[digit<Bits>(k, p)]++;
          dst[o] = last ? bits_of(sort_key_value<T>(k, descending)) : k;
          if constexpr (kValues) vdst[o] = vsrc[i];
        }
#if defined(_OPENMP)
#pragma omp barrier
#endif
        continue;
      }
      std::copy(c, c + kBuckets, start);
      // Slots follow the destination's cache lines: position o sits in slot (o + shift) % kLineKeys.
      const auto shift = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(dst) / sizeof(U)) % kLineKeys);
      // Writes positions [from, to) of bucket d, all in one destination line, from the buffer.
      const auto flush = [&](int d, std::int64_t from, std::int64_t to) {
        const std::int64_t s = (from + shift) & (kLineKeys - 1);
        const std::size_t at = static_cast<std::size_t>(d) * kLineKeys + static_cast<std::size_t>(s);
        std::memcpy(dst + from, kline + at, static_cast<std::size_t>(to - from) * sizeof(U));
        if constexpr (kValues) std::memcpy(vdst + from, vline + at, static_cast<std::size_t>(to - from) * sizeof(VT));
      };
      for (std::int64_t i = b; i < e; ++i) {
        const U k = load(i);
        const unsigned d = digit<Bits>(k, p);
        const std::int64_t o = c[d]++;
        const std::size_t at =
            static_cast<std::size_t>(d) * kLineKeys + static_cast<std::size_t>((o + shift) & (kLineKeys - 1));
        kline[at] = last ? bits_of(sort_key_value<T>(k, descending)) : k;
        if constexpr (kValues) vline[at] = vsrc[i];
        if (((o + 1 + shift) & (kLineKeys - 1)) == 0) {  // the line is complete
          const std::int64_t from = o + 1 - kLineKeys;
          if (from >= start[d]) {
            put_line(dst + from, kline + static_cast<std::size_t>(d) * kLineKeys, stream);
            if constexpr (kValues) {
              const VT* vl = vline + static_cast<std::size_t>(d) * kLineKeys;
              if constexpr (sizeof(VT) >= sizeof(U)) {  // values as wide as keys or twice
                for (std::size_t q = 0; q < sizeof(VT) / sizeof(U); ++q)
                  put_line(vdst + from + q * (kLine / sizeof(VT)), vl + q * (kLine / sizeof(VT)), stream);
              } else {  // half as wide: half a line
                std::memcpy(vdst + from, vl, kLine / 2);
              }
            }
          } else {  // the bucket's first line, shared with what precedes it
            flush(static_cast<int>(d), start[d], o + 1);
          }
        }
      }
      for (int d = 0; d < kBuckets; ++d) {  // the partial last line of each bucket
        const std::int64_t line = c[d] - ((c[d] + shift) & (kLineKeys - 1));
        const std::int64_t from = std::max(line, start[d]);
        if (from < c[d]) flush(d, from, c[d]);
      }
      if (stream) stream_fence();
#if defined(_OPENMP)
#pragma omp barrier
#endif
    }
  };
#if defined(_OPENMP)
  if (team > 1) {
#pragma omp parallel num_threads(team)
    run(omp_get_thread_num(), omp_get_num_threads());  // pieces follow the team actually given
    return;
  }
#endif
  run(0, 1);
}

template <class T>
void sort_typed(std::int64_t n, const void* kin, void* kout, std::size_t value_bytes, const void* vin, void* vout,
                bool descending) {
  const auto* ki = static_cast<const T*>(kin);
  auto* ko = static_cast<T*>(kout);
  const auto run = [&](auto bits) {
    constexpr int B = decltype(bits)::value;
    if (value_bytes == 0) {
      radix_sort<B, T, void>(n, ki, ko, nullptr, nullptr, descending);
    } else if (value_bytes == 4) {
      radix_sort<B, T, std::uint32_t>(n, ki, ko, vin, vout, descending);
    } else {
      radix_sort<B, T, std::uint64_t>(n, ki, ko, vin, vout, descending);
    }
  };
  if (n >= kLargeDigitsFrom) {
    run(std::integral_constant<int, kLargeDigitBits>());
  } else {
    run(std::integral_constant<int, kSmallDigitBits>());
  }
}

// ---- argreduce ----------------------------------------------------------------------------------
// The key of x for an arg-reduction: argmax keeps the largest key (NaN is all ones), argmin the
// smallest (NaN is zero); ties go to the first index.
template <class T, bool IsMax>
struct ArgKey {
  using U = SortBits<T>;
  static U of(T x) { return SortKey<T, IsMax>::encode(x); }
  static bool better(U a, U b) { return IsMax ? a > b : a < b; }
  static constexpr U kNan = SortKey<T, IsMax>::kNanKey;
};

// First index of the best key among x[first + j * stride], j in [b, e); e > b.
template <class T, bool IsMax>
std::pair<SortBits<T>, std::int64_t> arg_scan(const T* x, std::int64_t stride, std::int64_t b, std::int64_t e) {
  using K = ArgKey<T, IsMax>;
  auto best = K::of(x[b * stride]);
  std::int64_t at = b;
  for (std::int64_t j = b + 1; j < e && best != K::kNan; ++j) {
    const auto k = K::of(x[j * stride]);
    if (K::better(k, best)) {
      best = k;
      at = j;
    }
  }
  return {best, at};
}

template <class T, bool IsMax>
void argreduce_typed(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, std::int64_t* y) {
  using K = ArgKey<T, IsMax>;
  using U = SortBits<T>;
  const std::int64_t outputs = outer * inner;
  if (outputs == 1) {
    // One long row: pieces per thread, combined in index order (a later piece wins only if better).
    const int nt = threads_for(n, kGrainCheap);
    std::vector<std::pair<U, std::int64_t>> part(static_cast<std::size_t>(nt));
    parallel_tasks(nt, n / nt, [&](std::int64_t t, int) {
      const std::int64_t per = (n + nt - 1) / nt, b = std::min(n, t * per), e = std::min(n, b + per);
      part[static_cast<std::size_t>(t)] = b < e ? arg_scan<T, IsMax>(x, 1, b, e) : std::pair<U, std::int64_t>{U(0), -1};
    });
    std::pair<U, std::int64_t> r = part[0];
    for (int t = 1; t < nt; ++t)
      if (part[static_cast<std::size_t>(t)].second >= 0 && K::better(part[static_cast<std::size_t>(t)].first, r.first))
        r = part[static_cast<std::size_t>(t)];
    *y = r.second;
    return;
  }
  if (inner == 1) {  // rows of n contiguous elements, one task each
    parallel_tasks(outer, n, [&](std::int64_t o, int) { y[o] = arg_scan<T, IsMax>(x + o * n, 1, 0, n).second; });
    return;
  }
  // Along a middle axis: a strip of consecutive outputs walks the axis row by row, reading
  // contiguous memory; the strip's best keys live in a small buffer.
  constexpr std::int64_t kStrip = 256;
  const std::int64_t strips = (inner + kStrip - 1) / kStrip;
  parallel_tasks(outer * strips, n * kStrip, [&](std::int64_t task, int) {
    const std::int64_t o = task / strips, i0 = (task % strips) * kStrip, w = std::min(kStrip, inner - i0);
    const T* base = x + o * n * inner + i0;
    U best[kStrip];
    std::int64_t at[kStrip];
    for (std::int64_t i = 0; i < w; ++i) {
      best[i] = K::of(base[i]);
      at[i] = 0;
    }
    for (std::int64_t j = 1; j < n; ++j) {
      const T* row = base + j * inner;
      for (std::int64_t i = 0; i < w; ++i) {
        const U k = K::of(row[i]);
        const bool b = K::better(k, best[i]);
        best[i] = b ? k : best[i];
        at[i] = b ? j : at[i];
      }
    }
    std::int64_t* out = y + o * inner + i0;
    for (std::int64_t i = 0; i < w; ++i) out[i] = at[i];
  });
}

}  // namespace

porta_status sort(int dev, porta_dtype key_dt, std::int64_t n, const void* keys_in, void* keys_out,
                  porta_dtype value_dt, const void* values_in, void* values_out, std::uint32_t flags,
                  porta_stream) noexcept {
  if (porta_status st = check_device(dev, "sort"); st != PORTA_OK) return st;
  if (porta_status st = check::sort(key_dt, n, keys_in, keys_out, value_dt, values_in, values_out, flags);
      st != PORTA_OK)
    return st;
  if (n == 0) return PORTA_OK;
  PORTA_CPU_TRY
  const std::size_t value_bytes = values_in == nullptr ? 0 : dtype_size(value_dt);
  const bool descending = (flags & PORTA_SORT_DESCENDING) != 0;
  return with_dtype_for<SortFamily>("sort", key_dt, [&](auto tag) {  // keys need an order
    sort_typed<decltype(tag)>(n, keys_in, keys_out, value_bytes, values_in, values_out, descending);
  });
  PORTA_CPU_CATCH("sort")
}

porta_status argreduce(int dev, porta_arg_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                       const void* x, std::int64_t* y, porta_stream) noexcept {
  if (porta_status st = check_device(dev, "argreduce"); st != PORTA_OK) return st;
  if (porta_status st = check::argreduce(op, dt, outer, n, inner, x, y); st != PORTA_OK) return st;
  if (outer * inner == 0) return PORTA_OK;
  PORTA_CPU_TRY
  return with_dtype_for<SortFamily>("argreduce", dt, [&](auto tag) {
    using T = decltype(tag);
    if (op == PORTA_ARG_MAX) {
      argreduce_typed<T, true>(outer, n, inner, static_cast<const T*>(x), y);
    } else {
      argreduce_typed<T, false>(outer, n, inner, static_cast<const T*>(x), y);
    }
  });
  PORTA_CPU_CATCH("argreduce")
}

}  // namespace porta::detail::cpu
