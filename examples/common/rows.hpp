// SPDX-License-Identifier: Apache-2.0
// Rows split over ranks and gathered back: the whole array on every rank, from each rank's own
// rows. Communicator::allgather takes parts of one size, and an even split of n rows over 3 ranks
// has parts of different sizes, so each part travels padded to the largest one and a kernel then
// drops the padding, reading row i of the whole from its owner's part. Only copies: the bits of
// the whole are the bits of the parts, whatever the rank count.
#pragma once

#include <porta/distributed.hpp>
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cstdint>
#include <vector>

#include "common/ranks.hpp"

namespace example {

// This rank's rows of an n x width array, and what gathering them needs.
template <class T>
struct Rows {
  std::int64_t n = 0, width = 1;
  std::int64_t first = 0, last = 0, max_rows = 0;
  porta::Array<std::int64_t> source;  // n: row i of the whole is row source[i] of the gathered parts
  porta::Array<T> pad, gathered;      // max_rows x width; size() x max_rows x width

  std::int64_t rows() const { return last - first; }
};

template <class T>
Rows<T> make_rows(const porta::distributed::Communicator& comm, porta::Device dev, std::int64_t n, std::int64_t width) {
  Rows<T> r;
  r.n = n;
  r.width = width;
  split(n, comm.rank(), comm.size(), &r.first, &r.last);
  std::vector<std::int64_t> source(static_cast<std::size_t>(n));
  for (int q = 0; q < comm.size(); ++q) {
    std::int64_t f = 0, l = 0;
    split(n, q, comm.size(), &f, &l);
    r.max_rows = l - f > r.max_rows ? l - f : r.max_rows;
  }
  for (int q = 0; q < comm.size(); ++q) {
    std::int64_t f = 0, l = 0;
    split(n, q, comm.size(), &f, &l);
    for (std::int64_t i = f; i < l; ++i) source[static_cast<std::size_t>(i)] = q * r.max_rows + (i - f);
  }
  r.source = porta::Array<std::int64_t>::from(source.data(), porta::Shape{n}, dev);
  r.pad = porta::zeros<T>({r.max_rows * width}, dev);
  r.gathered = porta::zeros<T>({comm.size() * r.max_rows * width}, dev);
  return r;
}

// whole (n x width, flat) = every rank's `mine` (rows() x width, flat), in rank order.
template <class T>
void gather_rows(const porta::distributed::Communicator& comm, porta::Device dev, Rows<T>& r,
                 const porta::Array<T>& mine, porta::Array<T>& whole) {
  const std::int64_t width = r.width;
  const auto mv = mine.view();
  const auto pv = r.pad.view();
  if (r.rows() > 0) porta::parallel_for(dev, r.rows() * width, PORTA_KERNEL((std::int64_t e) { pv[e] = mv[e]; }));
  comm.allgather(r.pad, r.gathered);
  const auto gv = r.gathered.view();
  const auto sv = r.source.view();
  const auto wv = whole.view();
  porta::parallel_for(dev, r.n * width, PORTA_KERNEL((std::int64_t e) {
                        const std::int64_t i = e / width;
                        wv[e] = gv[sv[i] * width + (e - i * width)];
                      }));
}

}  // namespace example
