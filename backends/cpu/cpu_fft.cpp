// SPDX-License-Identifier: Apache-2.0
// Fourier transforms on the CPU: porta's own FFT (FFTW is GPL, KissFFT in Debian is float-only and
// scalar). One engine transforms "lines", the 1-D slices along one axis of a complex array, a group
// of kLanes lines at a time: a group is gathered into split real/imaginary buffers with the lines
// side by side (element j of line v at j * kLanes + v), so that every butterfly is a vector loop
// over the lines whatever the radix or the axis, and groups run on separate threads.
//
// - A line of n points is a self-sorting (Stockham) decimation-in-frequency FFT over n's factors:
//   radix 4 and 2, then every odd prime up to 64 by its direct DFT; a larger prime factor sends
//   the whole length to Bluestein's chirp-z algorithm over a power-of-two FFT.
// - A long contiguous line (a 1-D transform, where there are too few lines to fill the lanes) is
//   split n = n1 * n2 (the "six-step" algorithm): n2 columns of length n1, a twiddle, n1 rows of
//   length n2 written transposed, each step a full set of lane groups.
// - The inverse is the forward transform of the conjugate, conjugated: a sign in gather and scatter.
// - Real input of even length n is a complex line of n / 2 points plus one pass that separates the
//   halves (and the reverse for C2R); odd lengths go through a complex line of n points.
// - A multi-dimensional transform is one pass per axis, the first out of place, the rest in place.
// Twiddles and chirps are computed in long double from exact integer angles and cached per length.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_common.hpp"
#include "backends/cpu/cpu_kernels.hpp"

namespace porta::detail::cpu {
namespace {

using i64 = std::int64_t;

// Lines per group: one 64-byte vector of each part.
template <class T>
constexpr int kLanes = static_cast<int>(64 / sizeof(T));

constexpr int kMaxDirectRadix = 64;  // larger prime factors: Bluestein
constexpr i64 kSixStepMin = 16384;   // contiguous lines at least this long are split

// 64-byte aligned scratch.
template <class T>
struct Scratch {
  struct Free {
    void operator()(T* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<T, Free> p;
  i64 size = 0;
  T* get(i64 n) {
    if (n > size) {
      const std::size_t bytes = (static_cast<std::size_t>(n) * sizeof(T) + 63) / 64 * 64;
      T* q = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (q == nullptr) throw std::bad_alloc();
      p.reset(q);
      size = n;
    }
    return p.get();
  }
};

// exp(-2 pi i k / n) from the exact residue of k: the quadrant by integer arithmetic, the angle
// within it folded to at most pi / 4, so that symmetric roots come out exactly symmetric and the
// quarter turns exactly 0 and +-1.
template <class T>
void root(i64 k, i64 n, T& re, T& im) {
  k %= n;
  if (k < 0) k += n;
  const __int128 k4 = static_cast<__int128>(k) * 4;
  const int quadrant = static_cast<int>(k4 / n);
  const i64 r = static_cast<i64>(k4 - static_cast<__int128>(quadrant) * n);  // angle r / (4n) turns
  constexpr long double half_pi = 1.570796326794896619231321691639751442L;
  long double c, s;
  if (2 * r <= n) {
    const long double a = half_pi * static_cast<long double>(r) / static_cast<long double>(n);
    c = std::cos(a);
    s = r == 0 ? 0.0L : std::sin(a);
  } else {
    const long double a = half_pi * static_cast<long double>(n - r) / static_cast<long double>(n);
    c = std::sin(a);
    s = std::cos(a);
  }
  // exp(-i (quadrant * pi / 2 + angle)) = (-i)^quadrant (c - i s)
  switch (quadrant) {
    case 0:
      re = static_cast<T>(c), im = static_cast<T>(-s);
      break;
    case 1:
      re = static_cast<T>(-s), im = static_cast<T>(-c);
      break;
    case 2:
      re = static_cast<T>(-c), im = static_cast<T>(s);
      break;
    default:
      re = static_cast<T>(s), im = static_cast<T>(c);
  }
}

// One Stockham stage of radix r over a sub-transform of len = r * m points with stride s:
// y[q + s (r p + k)] = w_len^(p k) * sum_j x[q + s (p + j m)] w_r^(j k).
template <class T>
struct Stage {
  int r = 0;
  i64 m = 0, s = 0;
  std::vector<T> wr, wi;  // w_len^(p k) at p * (r - 1) + k - 1
  std::vector<T> rr, ri;  // w_r^t, t < r (the direct DFT of an odd radix)
};

template <class T>
struct Plan {
  i64 n = 0;
  std::vector<Stage<T>> stages;
  // Bluestein: the chirp c_j = exp(-i pi j^2 / n), j < n, and the transform of its conjugate over
  // m points (divided by m), through the power-of-two plan `sub`.
  std::shared_ptr<const Plan<T>> sub;
  i64 m = 0;
  std::vector<T> cr, ci, br, bi;
  i64 buffer_len() const { return sub ? m : n; }
};

template <class T>
std::shared_ptr<const Plan<T>> plan_for(i64 n);
template <class T>
bool execute_lanes(const Plan<T>& p, T* ar, T* ai, T* br, T* bi);

template <class T>
std::shared_ptr<const Plan<T>> make_plan(i64 n) {
  auto p = std::make_shared<Plan<T>>();
  p->n = n;
  std::vector<int> radices;
  i64 rest = n;
  while (rest % 4 == 0) radices.push_back(4), rest /= 4;
  if (rest % 2 == 0) radices.push_back(2), rest /= 2;
  for (i64 f = 3; f * f <= rest || rest > 1; f += 2) {
    if (f * f > rest) f = rest;  // rest is prime
    while (rest % f == 0) {
      if (f > kMaxDirectRadix) {
        radices.clear();
        rest = 1;
        break;
      }
      radices.push_back(static_cast<int>(f));
      rest /= f;
    }
  }
  if (radices.empty() && n > 1) {
    i64 m = 1;
    while (m < 2 * n - 1) m *= 2;
    p->m = m;
    p->sub = plan_for<T>(m);
    p->cr.resize(n), p->ci.resize(n);
    for (i64 j = 0; j < n; ++j) {
      const i64 e = static_cast<i64>((static_cast<__int128>(j) * j) % (2 * n));
      root(e, 2 * n, p->cr[j], p->ci[j]);
    }
    // b_t = conj(c_|t|) for |t| < n, placed periodically in m points, then transformed.
    Scratch<T> a, b;
    const int L = kLanes<T>;
    T* ar = a.get(2 * m * L);
    T* ai = ar + m * L;
    T* wr = b.get(2 * m * L);
    T* wi = wr + m * L;
    std::fill(ar, ar + 2 * m * L, T(0));
    for (i64 j = 0; j < n; ++j) {
      ar[j * L] = p->cr[j], ai[j * L] = -p->ci[j];
      if (j > 0) ar[(m - j) * L] = p->cr[j], ai[(m - j) * L] = -p->ci[j];
    }
    // Lane 0 alone carries data; the others transform zeros.
    const bool in_b = execute_lanes(*p->sub, ar, ai, wr, wi);
    const T* rr = in_b ? wr : ar;
    const T* ri = in_b ? wi : ai;
    p->br.resize(m), p->bi.resize(m);
    const T inv_m = T(1) / static_cast<T>(m);
    for (i64 j = 0; j < m; ++j) p->br[j] = rr[j * L] * inv_m, p->bi[j] = ri[j * L] * inv_m;
    return p;
  }
  i64 s = 1, len = n;
  for (const int r : radices) {
    Stage<T> st;
    st.r = r;
    st.m = len / r;
    st.s = s;
    st.wr.resize(static_cast<std::size_t>(st.m * (r - 1)));
    st.wi.resize(st.wr.size());
    for (i64 q = 0; q < st.m; ++q)
      for (int k = 1; k < r; ++k) root(q * k * s, n, st.wr[q * (r - 1) + k - 1], st.wi[q * (r - 1) + k - 1]);
    if (r != 2 && r != 4) {
      st.rr.resize(r), st.ri.resize(r);
      for (int t = 0; t < r; ++t) root(t, r, st.rr[t], st.ri[t]);
    }
    p->stages.push_back(std::move(st));
    len /= r;
    s *= r;
  }
  return p;
}

// Plans are cached per length and type; a full cache starts over (plans in use stay alive).
template <class T>
std::shared_ptr<const Plan<T>> plan_for(i64 n) {
  static std::mutex mutex;
  static std::map<i64, std::shared_ptr<const Plan<T>>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Plan<T>> p = make_plan<T>(n);  // outside the lock: Bluestein plans recurse
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 64) cache.clear();
  return cache.emplace(n, std::move(p)).first->second;
}

// ---- the butterflies: every loop over v is a vector loop over the group's lines -----------------

template <class T>
void radix2(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi) {
  constexpr int L = kLanes<T>;
  const i64 m = st.m, s = st.s;
  for (i64 p = 0; p < m; ++p) {
    const T wr = st.wr[p], wi = st.wi[p];
    for (i64 q = 0; q < s; ++q) {
      const T *ar = xr + (q + s * p) * L, *ai = xi + (q + s * p) * L;
      const T *br = xr + (q + s * (p + m)) * L, *bi = xi + (q + s * (p + m)) * L;
      T *y0r = yr + (q + s * 2 * p) * L, *y0i = yi + (q + s * 2 * p) * L;
      T *y1r = y0r + s * L, *y1i = y0i + s * L;
      PORTA_SIMD
      for (int v = 0; v < L; ++v) {
        const T dr = ar[v] - br[v], di = ai[v] - bi[v];
        y0r[v] = ar[v] + br[v];
        y0i[v] = ai[v] + bi[v];
        y1r[v] = dr * wr - di * wi;
        y1i[v] = dr * wi + di * wr;
      }
    }
  }
}

template <class T>
void radix4(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi) {
  constexpr int L = kLanes<T>;
  const i64 m = st.m, s = st.s;
  for (i64 p = 0; p < m; ++p) {
    const T w1r = st.wr[3 * p], w1i = st.wi[3 * p];
    const T w2r = st.wr[3 * p + 1], w2i = st.wi[3 * p + 1];
    const T w3r = st.wr[3 * p + 2], w3i = st.wi[3 * p + 2];
    for (i64 q = 0; q < s; ++q) {
      const i64 in = (q + s * p) * L, step = s * m * L;
      const T *a0r = xr + in, *a0i = xi + in, *a1r = a0r + step, *a1i = a0i + step;
      const T *a2r = a1r + step, *a2i = a1i + step, *a3r = a2r + step, *a3i = a2i + step;
      const i64 out = (q + s * 4 * p) * L, ostep = s * L;
      T *y0r = yr + out, *y0i = yi + out, *y1r = y0r + ostep, *y1i = y0i + ostep;
      T *y2r = y1r + ostep, *y2i = y1i + ostep, *y3r = y2r + ostep, *y3i = y2i + ostep;
      PORTA_SIMD
      for (int v = 0; v < L; ++v) {
        const T t0r = a0r[v] + a2r[v], t0i = a0i[v] + a2i[v];
        const T t1r = a0r[v] - a2r[v], t1i = a0i[v] - a2i[v];
        const T t2r = a1r[v] + a3r[v], t2i = a1i[v] + a3i[v];
        const T t3r = a1i[v] - a3i[v], t3i = a3r[v] - a1r[v];  // (a1 - a3) * -i
        const T c1r = t1r + t3r, c1i = t1i + t3i;
        const T c2r = t0r - t2r, c2i = t0i - t2i;
        const T c3r = t1r - t3r, c3i = t1i - t3i;
        y0r[v] = t0r + t2r;
        y0i[v] = t0i + t2i;
        y1r[v] = c1r * w1r - c1i * w1i;
        y1i[v] = c1r * w1i + c1i * w1r;
        y2r[v] = c2r * w2r - c2i * w2i;
        y2i[v] = c2r * w2i + c2i * w2r;
        y3r[v] = c3r * w3r - c3i * w3i;
        y3i[v] = c3r * w3i + c3i * w3r;
      }
    }
  }
}

// An odd prime radix by its direct DFT.
template <class T>
void radix_direct(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi) {
  constexpr int L = kLanes<T>;
  const int r = st.r;
  const i64 m = st.m, s = st.s;
  alignas(64) T accr[L], acci[L];
  for (i64 p = 0; p < m; ++p) {
    for (i64 q = 0; q < s; ++q) {
      const i64 in = (q + s * p) * L, step = s * m * L;
      for (int k = 0; k < r; ++k) {
        PORTA_SIMD
        for (int v = 0; v < L; ++v) accr[v] = xr[in + v], acci[v] = xi[in + v];
        for (int j = 1; j < r; ++j) {
          const int t = static_cast<int>((static_cast<i64>(j) * k) % r);
          const T cr = st.rr[t], ci = st.ri[t];
          const T *ar = xr + in + j * step, *ai = xi + in + j * step;
          PORTA_SIMD
          for (int v = 0; v < L; ++v) {
            accr[v] += ar[v] * cr - ai[v] * ci;
            acci[v] += ar[v] * ci + ai[v] * cr;
          }
        }
        T *outr = yr + (q + s * (r * p + k)) * L, *outi = yi + (q + s * (r * p + k)) * L;
        if (k == 0) {
          PORTA_SIMD
          for (int v = 0; v < L; ++v) outr[v] = accr[v], outi[v] = acci[v];
        } else {
          const T wr = st.wr[p * (r - 1) + k - 1], wi = st.wi[p * (r - 1) + k - 1];
          PORTA_SIMD
          for (int v = 0; v < L; ++v) {
            outr[v] = accr[v] * wr - acci[v] * wi;
            outi[v] = accr[v] * wi + acci[v] * wr;
          }
        }
      }
    }
  }
}

// The forward transform of the lanes in (ar, ai), buffer_len() points each, with (br, bi) as scratch
// of the same size; true when the result ended in (br, bi).
template <class T>
bool execute_lanes(const Plan<T>& p, T* ar, T* ai, T* br, T* bi) {
  constexpr int L = kLanes<T>;
  if (p.sub) {
    // Bluestein: X_k = c_k * (a conv conj(c))_k with a_j = x_j c_j, the convolution by FFTs of m points.
    const i64 n = p.n, m = p.m;
    for (i64 j = 0; j < n; ++j) {
      const T cr = p.cr[j], ci = p.ci[j];
      T *xr = ar + j * L, *xi = ai + j * L;
      PORTA_SIMD
      for (int v = 0; v < L; ++v) {
        const T r = xr[v] * cr - xi[v] * ci, i = xr[v] * ci + xi[v] * cr;
        xr[v] = r, xi[v] = i;
      }
    }
    std::fill(ar + n * L, ar + m * L, T(0));
    std::fill(ai + n * L, ai + m * L, T(0));
    const bool first = execute_lanes(*p.sub, ar, ai, br, bi);
    T *xr = first ? br : ar, *xi = first ? bi : ai, *or_ = first ? ar : br, *oi = first ? ai : bi;
    for (i64 j = 0; j < m; ++j) {
      const T cr = p.br[j], ci = p.bi[j];
      T *zr = xr + j * L, *zi = xi + j * L;
      PORTA_SIMD
      for (int v = 0; v < L; ++v) {
        const T r = zr[v] * cr - zi[v] * ci, i = zr[v] * ci + zi[v] * cr;
        zr[v] = r, zi[v] = -i;  // conjugated: the inverse transform as a forward one
      }
    }
    const bool second = execute_lanes(*p.sub, xr, xi, or_, oi);
    T *rr = second ? or_ : xr, *ri = second ? oi : xi;
    for (i64 j = 0; j < n; ++j) {
      const T cr = p.cr[j], ci = p.ci[j];
      T *zr = rr + j * L, *zi = ri + j * L;
      PORTA_SIMD
      for (int v = 0; v < L; ++v) {
        const T r = zr[v], i = -zi[v];
        zr[v] = r * cr - i * ci, zi[v] = r * ci + i * cr;
      }
    }
    return rr == br;
  }
  T *xr = ar, *xi = ai, *yr = br, *yi = bi;
  for (const Stage<T>& st : p.stages) {
    if (st.r == 4)
      radix4(st, xr, xi, yr, yi);
    else if (st.r == 2)
      radix2(st, xr, xi, yr, yi);
    else
      radix_direct(st, xr, xi, yr, yi);
    std::swap(xr, yr);
    std::swap(xi, yi);
  }
  return xr == br;
}

// ---- passes: one 1-D transform along every line of an axis --------------------------------------

// Complex element j of line (o, i), o < outer, i < inner, at o * os + i * is + j * es (in complex
// elements) in the input, and likewise in the output.
struct Axis {
  i64 os, is, es;
};
struct Pass {
  i64 outer, inner, n;
  Axis in, out;
};

// The six-step twiddle w_n^(line * j) of element j of a column line, from two tables of about
// sqrt(n) roots each.
template <class T>
struct Twiddle {
  i64 n = 0, shift = 0, mask = 0;
  std::vector<T> hr, hi, lr, li;
  explicit Twiddle(i64 n_) : n(n_) {
    while ((i64(1) << (2 * shift)) < n) ++shift;
    mask = (i64(1) << shift) - 1;
    const i64 lo = mask + 1, hi_count = (n >> shift) + 1;
    lr.resize(lo), li.resize(lo), hr.resize(hi_count), hi.resize(hi_count);
    for (i64 k = 0; k < lo; ++k) root(k, n, lr[k], li[k]);
    for (i64 k = 0; k < hi_count; ++k) root(k << shift, n, hr[k], hi[k]);
  }
  void at(i64 e, T& re, T& im) const {
    const T ar = hr[e >> shift], ai = hi[e >> shift], br = lr[e & mask], bi = li[e & mask];
    re = ar * br - ai * bi;
    im = ar * bi + ai * br;
  }
};

template <class T>
struct Buffers {
  Scratch<T> a, b;
};

// Runs `pass` from x to y (which may be x itself: a group is gathered whole before it is written).
// conj_in / conj_out conjugate on the way in and out; scale multiplies the results; a Twiddle
// multiplies element j of line (0, i) by w_n^(i j) (the six-step's column pass).
template <class T>
void run_pass(const Plan<T>& plan, const Pass& ps, const T* x, T* y, bool conj_in, bool conj_out, T scale,
              const Twiddle<T>* tw) {
  constexpr int L = kLanes<T>;
  const i64 n = ps.n;
  // Lanes run along i when lines have neighbours there, else along o.
  const bool along_i = ps.inner > 1;
  const i64 span = along_i ? ps.inner : ps.outer;
  const i64 per_row = (span + L - 1) / L;
  const i64 groups = along_i ? ps.outer * per_row : per_row;
  const i64 in_ls = along_i ? ps.in.is : ps.in.os, out_ls = along_i ? ps.out.is : ps.out.os;
  const i64 len = plan.buffer_len();
  const int threads = max_threads();
  std::vector<Buffers<T>> buffers(static_cast<std::size_t>(threads));
  const T in_sign = conj_in ? T(-1) : T(1), out_sign = conj_out ? -scale : scale;
  parallel_tasks(groups, n * L, [&](i64 g, int thread) {
    Buffers<T>& buf = buffers[static_cast<std::size_t>(thread)];
    T* ar = buf.a.get(2 * len * L);
    T* ai = ar + len * L;
    T* br = buf.b.get(2 * len * L);
    T* bi = br + len * L;
    const i64 o = along_i ? g / per_row : 0, first = (g % per_row) * L;
    const int lanes = static_cast<int>(std::min<i64>(L, span - first));
    const i64 in0 = along_i ? o * ps.in.os + first * ps.in.is : first * ps.in.os;
    const i64 out0 = along_i ? o * ps.out.os + first * ps.out.is : first * ps.out.os;
    if (lanes < L)
      for (i64 j = 0; j < n; ++j)
        for (int v = lanes; v < L; ++v) ar[j * L + v] = ai[j * L + v] = T(0);
    if (in_ls == 1) {
      for (i64 j = 0; j < n; ++j) {
        const T* src = x + 2 * (in0 + j * ps.in.es);
        T *dr = ar + j * L, *di = ai + j * L;
        PORTA_SIMD
        for (int v = 0; v < lanes; ++v) dr[v] = src[2 * v], di[v] = in_sign * src[2 * v + 1];
      }
    } else {
      for (int v = 0; v < lanes; ++v) {
        const T* src = x + 2 * (in0 + v * in_ls);
        for (i64 j = 0; j < n; ++j)
          ar[j * L + v] = src[2 * j * ps.in.es], ai[j * L + v] = in_sign * src[2 * j * ps.in.es + 1];
      }
    }
    const bool in_b = execute_lanes(plan, ar, ai, br, bi);
    T *rr = in_b ? br : ar, *ri = in_b ? bi : ai;
    if (tw != nullptr) {
      for (i64 j = 0; j < n; ++j)
        for (int v = 0; v < lanes; ++v) {
          T wr, wi;
          tw->at((first + v) * j, wr, wi);
          const T r = rr[j * L + v], i = ri[j * L + v];
          rr[j * L + v] = r * wr - i * wi;
          ri[j * L + v] = r * wi + i * wr;
        }
    }
    if (out_ls == 1) {
      for (i64 j = 0; j < n; ++j) {
        T* dst = y + 2 * (out0 + j * ps.out.es);
        const T *sr = rr + j * L, *si = ri + j * L;
        PORTA_SIMD
        for (int v = 0; v < lanes; ++v) dst[2 * v] = scale * sr[v], dst[2 * v + 1] = out_sign * si[v];
      }
    } else {
      for (int v = 0; v < lanes; ++v) {
        T* dst = y + 2 * (out0 + v * out_ls);
        for (i64 j = 0; j < n; ++j)
          dst[2 * j * ps.out.es] = scale * rr[j * L + v], dst[2 * j * ps.out.es + 1] = out_sign * ri[j * L + v];
      }
    }
  });
}

// n1 <= n2 with n = n1 * n2 and n1 as close to sqrt(n) as n's divisors allow; 0 when n1 would be
// too short to fill the lanes.
i64 six_step_split(i64 n) {
  i64 best = 0;
  for (i64 d = 1; d * d <= n; ++d)
    if (n % d == 0) best = d;
  return best >= 16 ? best : 0;
}

// The c2c transform of `lines` contiguous lines of n points, line l at x + l * x_stride and
// y + l * y_stride (complex elements); y may be x.
template <class T>
void transform_rows(i64 lines, i64 n, const T* x, i64 x_stride, T* y, i64 y_stride, bool inverse, T scale) {
  if (lines == 0) return;
  const i64 n1 = n >= kSixStepMin && lines < 4 * kLanes<T> * max_threads() ? six_step_split(n) : 0;
  if (n1 == 0) {
    const auto plan = plan_for<T>(n);
    run_pass(*plan, Pass{lines, 1, n, {x_stride, 0, 1}, {y_stride, 0, 1}}, x, y, inverse, inverse, scale,
             static_cast<const Twiddle<T>*>(nullptr));
    return;
  }
  // Six steps: x[j1 n2 + j2] -> columns over j1 -> times w_n^(k1 j2) -> rows over j2 -> y[k1 + n1 k2].
  const i64 n2 = n / n1;
  const auto p1 = plan_for<T>(n1), p2 = plan_for<T>(n2);
  const Twiddle<T> tw(n);
  std::vector<T> t(static_cast<std::size_t>(2 * n));
  for (i64 l = 0; l < lines; ++l) {
    const T* xl = x + 2 * l * x_stride;
    T* yl = y + 2 * l * y_stride;
    run_pass(*p1, Pass{1, n2, n1, {0, 1, n2}, {0, 1, n2}}, xl, t.data(), inverse, false, T(1), &tw);
    run_pass(*p2, Pass{n1, 1, n2, {n2, 0, 1}, {1, 0, n1}}, t.data(), yl, false, inverse, scale,
             static_cast<const Twiddle<T>*>(nullptr));
  }
}

// The c2c transform along the middle axis of [outer][n][inner] complex elements.
template <class T>
void transform_axis(i64 outer, i64 n, i64 inner, const T* x, T* y, bool inverse, T scale) {
  if (inner == 1) return transform_rows(outer, n, x, n, y, n, inverse, scale);
  const auto plan = plan_for<T>(n);
  run_pass(*plan, Pass{outer, inner, n, {n * inner, 1, inner}, {n * inner, 1, inner}}, x, y, inverse, inverse, scale,
           static_cast<const Twiddle<T>*>(nullptr));
}

// w_n^k for k <= n / 4 + 1: the real transforms' split of even and odd samples.
template <class T>
struct HalfTwiddle {
  std::vector<T> wr, wi;
};
template <class T>
std::shared_ptr<const HalfTwiddle<T>> half_twiddle(i64 n) {
  static std::mutex mutex;
  static std::map<i64, std::shared_ptr<const HalfTwiddle<T>>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[n];
  if (!slot) {
    auto h = std::make_shared<HalfTwiddle<T>>();
    const i64 count = n / 4 + 2;
    h->wr.resize(count), h->wi.resize(count);
    for (i64 k = 0; k < count; ++k) root(k, n, h->wr[k], h->wi[k]);
    if (cache.size() > 64) cache.clear();
    slot = h;
    return h;
  }
  return slot;
}

// R2C along contiguous rows of even length n = 2h: rows of x read as h complex points, transformed,
// then X[k] = E + w^k O and X[h - k] = conj(E - w^k O) with E = (Z[k] + conj(Z[h-k])) / 2 and
// O = -i (Z[k] - conj(Z[h-k])) / 2, in place in y (rows of h + 1).
template <class T>
void r2c_even_rows(i64 lines, i64 n, const T* x, T* y, T scale) {
  const i64 h = n / 2;
  transform_rows(lines, h, x, h, y, h + 1, false, T(1));
  const auto tw = half_twiddle<T>(n);
  const i64 pairs = h / 2 + 1;
  parallel_tasks(lines, h + 1, [&](i64 l, int) {
    T* z = y + 2 * l * (h + 1);
    const T z0r = z[0], z0i = z[1];
    z[0] = scale * (z0r + z0i), z[1] = T(0);
    z[2 * h] = scale * (z0r - z0i), z[2 * h + 1] = T(0);
    for (i64 k = 1; k < pairs; ++k) {
      const i64 kk = h - k;
      const T ar = z[2 * k], ai = z[2 * k + 1], br = z[2 * kk], bi = -z[2 * kk + 1];  // b = conj(Z[h-k])
      const T er = T(0.5) * (ar + br), ei = T(0.5) * (ai + bi);
      const T orr = T(0.5) * (ai - bi), oi = T(-0.5) * (ar - br);  // -i (a - b) / 2
      const T wr = tw->wr[k], wi = tw->wi[k];
      const T tr = wr * orr - wi * oi, ti = wr * oi + wi * orr;
      z[2 * k] = scale * (er + tr), z[2 * k + 1] = scale * (ei + ti);
      if (kk != k) z[2 * kk] = scale * (er - tr), z[2 * kk + 1] = -scale * (ei - ti);
    }
  });
}

// C2R along rows of h + 1 complex points to even length n = 2h: Z[k] = (X[k] + conj(X[h-k])) +
// i conj(w^k) (X[k] - conj(X[h-k])) (X[0] and X[h] read as real), written to y as h complex
// points per row, then inverse transformed in place.
template <class T>
void c2r_even_rows(i64 lines, i64 n, const T* x, T* y, T scale) {
  const i64 h = n / 2;
  const auto tw = half_twiddle<T>(n);
  const i64 pairs = h / 2 + 1;
  parallel_tasks(lines, h + 1, [&](i64 l, int) {
    const T* X = x + 2 * l * (h + 1);
    T* z = y + 2 * l * h;
    const T x0 = X[0], xh = X[2 * h];
    z[0] = x0 + xh, z[1] = x0 - xh;
    for (i64 k = 1; k < pairs; ++k) {
      const i64 kk = h - k;
      const T ar = X[2 * k], ai = X[2 * k + 1], br = X[2 * kk], bi = -X[2 * kk + 1];  // b = conj(X[h-k])
      const T sr = ar + br, si = ai + bi, dr = ar - br, di = ai - bi;
      const T wr = tw->wr[k], wi = -tw->wi[k];  // conj(w^k)
      const T tr = wr * dr - wi * di, ti = wr * di + wi * dr;
      // Z[k] = s + i t; Z[h-k] = conj(s) + i conj(-t) (the same formula with k and h - k swapped)
      z[2 * k] = sr - ti, z[2 * k + 1] = si + tr;
      if (kk != k) z[2 * kk] = sr + ti, z[2 * kk + 1] = -si + tr;
    }
  });
  transform_rows(lines, h, y, h, y, h, true, scale);
}

// Odd lengths: through complex rows of n points.
template <class T>
void r2c_odd_rows(i64 lines, i64 n, const T* x, T* y, T scale) {
  const i64 h = n / 2;
  std::vector<T> t(static_cast<std::size_t>(2 * lines * n));
  parallel_tasks(lines, n, [&](i64 l, int) {
    for (i64 j = 0; j < n; ++j) t[2 * (l * n + j)] = x[l * n + j], t[2 * (l * n + j) + 1] = T(0);
  });
  transform_rows(lines, n, t.data(), n, t.data(), n, false, scale);
  parallel_tasks(lines, h + 1, [&](i64 l, int) {
    std::copy(t.data() + 2 * l * n, t.data() + 2 * (l * n + h + 1), y + 2 * l * (h + 1));
  });
}

template <class T>
void c2r_odd_rows(i64 lines, i64 n, const T* x, T* y, T scale) {
  const i64 h = n / 2;
  std::vector<T> t(static_cast<std::size_t>(2 * lines * n));
  parallel_tasks(lines, n, [&](i64 l, int) {
    const T* X = x + 2 * l * (h + 1);
    T* z = t.data() + 2 * l * n;
    z[0] = X[0], z[1] = T(0);
    for (i64 k = 1; k <= h; ++k) {
      z[2 * k] = X[2 * k], z[2 * k + 1] = X[2 * k + 1];
      z[2 * (n - k)] = X[2 * k], z[2 * (n - k) + 1] = -X[2 * k + 1];
    }
  });
  transform_rows(lines, n, t.data(), n, t.data(), n, true, scale);
  parallel_tasks(lines, n, [&](i64 l, int) {
    for (i64 j = 0; j < n; ++j) y[l * n + j] = t[2 * (l * n + j)];
  });
}

template <class T>
void fft_typed(porta_fft_kind kind, int rank, const i64* n, i64 batch, const T* x, T* y, T scale) {
  // Axes before the last: [outer][n[a]][inner] over the complex array whose last axis is `last`.
  const i64 nl = n[rank - 1];
  const i64 last = kind == PORTA_FFT_FORWARD || kind == PORTA_FFT_INVERSE ? nl : nl / 2 + 1;
  i64 lead = 1;
  for (int a = 0; a < rank - 1; ++a) lead *= n[a];
  const auto lead_axes = [&](const T* src, T* dst, bool inverse, T s) {
    for (int a = 0; a < rank - 1; ++a) {
      i64 outer = batch, inner = last;
      for (int b = 0; b < a; ++b) outer *= n[b];
      for (int b = a + 1; b < rank - 1; ++b) inner *= n[b];
      transform_axis(outer, n[a], inner, a == 0 ? src : dst, dst, inverse, a == 0 ? s : T(1));
    }
  };
  const i64 rows = batch * lead;
  switch (kind) {
    case PORTA_FFT_FORWARD:
    case PORTA_FFT_INVERSE: {
      const bool inverse = kind == PORTA_FFT_INVERSE;
      transform_rows(rows, nl, x, nl, y, nl, inverse, scale);
      lead_axes(y, y, inverse, T(1));
      return;
    }
    case PORTA_FFT_R2C:
      if (nl % 2 == 0)
        r2c_even_rows(rows, nl, x, y, scale);
      else
        r2c_odd_rows(rows, nl, x, y, scale);
      lead_axes(y, y, false, T(1));
      return;
    default: {
      const T* src = x;
      std::vector<T> t;
      if (rank > 1) {
        t.resize(static_cast<std::size_t>(2 * rows * last));
        lead_axes(x, t.data(), true, T(1));
        src = t.data();
      }
      if (nl % 2 == 0)
        c2r_even_rows(rows, nl, src, y, scale);
      else
        c2r_odd_rows(rows, nl, src, y, scale);
    }
  }
}

}  // namespace

porta_status fft(int dev, porta_fft_kind kind, porta_dtype dt, std::int32_t rank, std::int64_t n0, std::int64_t n1,
                 std::int64_t n2, std::int64_t batch, const void* x, void* y, double scale, porta_stream) noexcept {
  constexpr const char* fn = "fft";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  backend::check::FftSizes z;
  if (porta_status st = check::fft(kind, dt, rank, n0, n1, n2, batch, x, y, scale, &z); st != PORTA_OK) return st;
  if (batch == 0) return PORTA_OK;
  PORTA_CPU_TRY
  const porta_fft_kind k = static_cast<porta_fft_kind>(raw_enum(kind));
  if (dt == PORTA_F32)
    fft_typed<float>(k, rank, z.n, batch, static_cast<const float*>(x), static_cast<float*>(y),
                     static_cast<float>(scale));
  else
    fft_typed<double>(k, rank, z.n, batch, static_cast<const double*>(x), static_cast<double*>(y), scale);
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
