// SPDX-License-Identifier: Apache-2.0
// porta::distributed's sum over every rank's array (Communicator::sum, dot, norm2): the bits
// porta::sum gives on one device, whatever the number of ranks and how the elements are split.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/comm_state.hpp"
#include "porta/algorithms.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"
#include "porta/detail/runtime.hpp"

namespace porta::detail::dist {

// porta::sum of the concatenation of every rank's x (flattened): the canonical order of
// reduce_order.hpp depends only on the global length N, so rank r, holding elements [g0, g1),
// owns the chunks that start in its range, reduces those it holds whole where its data lives
// (porta::sum along the rows of a (rows, kReduceChunk) view: one canonical chunk per row), receives
// the pieces of the one chunk that runs past its end from the ranks that hold them, and the ranks
// then share one partial per chunk; the partials are reduced in the canonical order on the host.
template <class T>
T sum_concatenated(const CommState& st, Call call, const Array<T>& x_in, const Stream& stream) {
  const char* fn = call.fn;
  x_in.check_valid(fn);
  HostEngine& h = *st.host;
  const Array<T> xc = x_in.is_contiguous() ? Array<T>() : x_in.contiguous(stream);
  const Array<T> x = (x_in.is_contiguous() ? x_in : xc).reshaped(Shape{x_in.size()});
  const int size = h.size(), rank = h.rank();
  const std::int64_t n = x.size();
  call.dtype = dtype_of<T>();  // the count is each rank's own
  call.device = static_cast<std::int32_t>(x.device().type);
  h.begin_call(call);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size)), start(static_cast<std::size_t>(size) + 1, 0);
  h.allgather(&n, 1, counts.data(), PORTA_I64);
  for (int r = 0; r < size; ++r) start[r + 1] = start[r] + counts[r];
  const std::int64_t total = start[size];
  if (total == 0) return T(0);
  constexpr std::int64_t K = kReduceChunk;
  const porta_dtype dt = dtype_of<T>();
  const std::int64_t g0 = start[rank], g1 = start[rank + 1];
  auto owner = [&](std::int64_t c) {  // the rank holding element c * K
    const std::int64_t at = c * K;
    int r = 0;
    while (!(start[r] <= at && at < start[r + 1])) ++r;
    return r;
  };

  // The first elements, when they continue a chunk that starts on an earlier rank.
  std::vector<T> head;
  std::unique_ptr<Pending> head_sent;
  if (n > 0 && g0 % K != 0) {
    const std::int64_t c = g0 / K;
    const std::int64_t len = std::min(g1, (c + 1) * K) - g0;
    head = x.slice(0, 0, len).to_vector(stream);
    head_sent = h.isend(head.data(), len, dt, owner(c), kOwnTag);
  }

  // Chunks owned: [c_first, c_end).
  const std::int64_t c_first = (g0 + K - 1) / K;
  const std::int64_t c_end = n > 0 ? (g1 + K - 1) / K : c_first;
  std::vector<T> mine;
  mine.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, c_end - c_first)));
  const std::int64_t rows = std::max<std::int64_t>(0, g1 / K - c_first);  // held whole, K elements each
  if (rows > 0) {
    const std::int64_t a = c_first * K - g0;
    const Array<T> whole = x.slice(0, a, a + rows * K).reshaped(Shape{rows, K});
    const std::vector<T> p = porta::sum(whole, 1, stream).to_vector(stream);
    mine.insert(mine.end(), p.begin(), p.end());
  }
  if (c_end > c_first + rows) {  // the last owned chunk is shorter than K or runs past g1
    const std::int64_t c = c_end - 1;
    const std::int64_t b = c * K, e = std::min(total, b + K);
    std::vector<T> chunk = x.slice(0, b - g0, std::min(e, g1) - g0).to_vector(stream);
    if (e > g1) {  // the rest comes from the ranks after this one
      chunk.resize(static_cast<std::size_t>(e - b));
      std::vector<std::unique_ptr<Pending>> pieces;
      for (int q = rank + 1; q < size && start[q] < e; ++q) {
        if (counts[q] == 0) continue;
        const std::int64_t len = std::min(start[q + 1], e) - start[q];
        pieces.push_back(h.irecv(chunk.data() + (start[q] - b), len, dt, q, kOwnTag));
      }
      for (auto& p : pieces) p->wait();
    }
    mine.push_back(reduce_chunk_contiguous(chunk.data(), e - b, SumOp{}));
  }
  if (head_sent) head_sent->wait();

  // One partial per chunk, on every rank, in chunk order.
  std::vector<std::int64_t> owned(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) owned[q] = counts[q] == 0 ? 0 : (start[q + 1] + K - 1) / K - (start[q] + K - 1) / K;
  const std::int64_t m = reduce_chunk_count(total);
  std::vector<T> partial(static_cast<std::size_t>(m));
  h.allgatherv(mine.data(), static_cast<std::int64_t>(mine.size()), partial.data(), owned.data(), dt);
  const T r = m == 1 ? partial[0] : reduce_canonical<T>(m, SumOp{}, ReducePartials<T>{partial.data()});
  return canonical_nan(r);
}

template float sum_concatenated<float>(const CommState&, Call, const Array<float>&, const Stream&);
template double sum_concatenated<double>(const CommState&, Call, const Array<double>&, const Stream&);
template std::int32_t sum_concatenated<std::int32_t>(const CommState&, Call, const Array<std::int32_t>&, const Stream&);
template std::int64_t sum_concatenated<std::int64_t>(const CommState&, Call, const Array<std::int64_t>&, const Stream&);
template complex<float> sum_concatenated<complex<float>>(const CommState&, Call, const Array<complex<float>>&,
                                                         const Stream&);
template complex<double> sum_concatenated<complex<double>>(const CommState&, Call, const Array<complex<double>>&,
                                                           const Stream&);

}  // namespace porta::detail::dist
