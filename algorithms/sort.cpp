// SPDX-License-Identifier: Apache-2.0
// Front end of sort, argsort, sort_by_key, argmax and argmin: checks, outputs,
// and the two backend entries `sort` (a stable radix sort of keys, with or without values) and
// `argreduce`. The order is porta/detail/sort_key.hpp's on every backend.
//
// 16-bit keys are sorted as their float values: widening is exact and keeps the order (and NaN a
// NaN), so the float sort's permutation is the 16-bit one and narrowing its keys gives them back
// bit for bit (NaNs as the canonical NaN, as sort promises). The radix sorts carry 4- and 8-byte
// values; values of other sizes (16-bit floats, complex<double>) follow the permutation of int64
// positions sorted with the keys, through take.
#include <cstdint>
#include <string>
#include <utility>

#include "algorithms/common.hpp"
#include "porta/algorithms.hpp"
#include "porta/indexing.hpp"
#include "porta/sort.hpp"

namespace porta {
namespace detail {
namespace {

// Stream-ordered device scratch, freed on the call's stream (an Array would be freed on the
// default stream: a barrier against every other stream).
struct Scratch {
  const BackendCall& c;
  void* p;
  Scratch(const BackendCall& call, std::size_t bytes)
      : c(call), p(device_alloc(call.device, bytes, call.stream, call.fn)) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { device_free(c.device, p, c.stream); }
};

void check_1d(const char* fn, const ArgRef& a) {
  if (a.shape->rank() == 1) return;
  throw_invalid(fn, (std::string("sorts 1-D arrays (") + a.name + " is " +
                     (a.shape->rank() == 0 ? std::string("a scalar") : a.shape->to_string()) +
                     "); sorting along an axis is not supported")
                        .c_str());
}

// An order cast from an integer that names no SortOrder is the caller's error, not "ascending".
void check_order(const char* fn, SortOrder order) {
  if (order != SortOrder::ascending && order != SortOrder::descending)
    throw_invalid(fn, ("order " + std::to_string(static_cast<int>(order)) +
                       " is not a porta::SortOrder (ascending or descending)")
                          .c_str());
}

std::uint32_t sort_flags(SortOrder order) {
  return order == SortOrder::descending ? PORTA_SORT_DESCENDING : 0u;
}

// keys -> keys_out, and values -> values_out when V is not void.
template <class K, class V>
void sort_entry(const BackendCall& c, std::int64_t n, const K* keys, K* keys_out, const V* values, V* values_out,
                SortOrder order) {
  porta_dtype vdt = PORTA_I64;
  if constexpr (!std::is_void_v<V>) vdt = dtype_of<V>();
  c.run(c.table->sort, dtype_of<K>(), n, keys, keys_out, vdt, values, values_out, sort_flags(order), c.stream);
}

// keys -> keys_out in order, and the permutation (the input positions in that order) -> positions.
template <class K>
void sort_positions(const BackendCall& c, std::int64_t n, const K* keys, K* keys_out, std::int64_t* positions,
                    SortOrder order) {
  Scratch index(c, checked_bytes(n, sizeof(std::int64_t), c.fn));
  c.run(c.table->iota, PORTA_I64, n, to_scalar<std::int64_t>(0), to_scalar<std::int64_t>(1), index.p, c.stream);
  sort_entry<K, std::int64_t>(c, n, keys, keys_out, static_cast<std::int64_t*>(index.p), positions, order);
}

template <class T>
std::int64_t arg_full(porta_arg_op op, const char* fn, const Array<T>& x, const Stream& stream) {
  const Device dev = check_args(fn, {arg("x", x)});
  if constexpr (is_half_v<T>) return arg_full<float>(op, fn, cast<float>(x, stream), stream);
  const BackendCall c = make_call(fn, dev, stream);
  const std::int64_t n = x.size();
  if (n == 0)
    throw_invalid(fn, (std::string("the array is empty (") + (op == PORTA_ARG_MAX ? "argmax" : "argmin") +
                       " of no elements is undefined)")
                          .c_str());
  return read_device_scalar<std::int64_t>(
      c, [&](std::int64_t* y) { c.run(c.table->argreduce, op, dtype_of<T>(), 1, n, 1, x.data(), y, c.stream); });
}

template <class T>
Array<std::int64_t> arg_axis(porta_arg_op op, const char* fn, const Array<T>& x, int axis, const Stream& stream) {
  const Device dev = check_args(fn, {arg("x", x)});
  if constexpr (is_half_v<T>) return arg_axis<float>(op, fn, cast<float>(x, stream), axis, stream);
  const AxisSplit a = split_axis(fn, x.shape(), axis);
  if (a.n == 0 && a.outer * a.inner > 0)
    throw_invalid(fn, ("cannot reduce the empty axis " + std::to_string(axis) + " of a " + x.shape().to_string() +
                       " array (" + (op == PORTA_ARG_MAX ? "argmax" : "argmin") + " of no elements is undefined)")
                          .c_str());
  const BackendCall c = make_call(fn, dev, stream);
  Array<std::int64_t> out = new_output<std::int64_t>(fn, a.result, dev, stream);
  if (a.outer * a.inner == 0) return out;
  c.run(c.table->argreduce, op, dtype_of<T>(), a.outer, a.n, a.inner, x.data(), out.data(), c.stream);
  return out;
}

}  // namespace
}  // namespace detail

template <class T>
Array<T> sort(const Array<T>& x, SortOrder order, const Stream& stream) {
  constexpr const char* fn = "porta::sort";
  detail::check_order(fn, order);
  const detail::ArgRef rx = detail::arg("x", x);
  const Device dev = detail::check_args(fn, {rx});
  detail::check_1d(fn, rx);
  if constexpr (is_half_v<T>) return cast<T>(sort(cast<float>(x, stream), order, stream), stream);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  Array<T> out = detail::new_output<T>(fn, x.shape(), dev, stream);
  if (x.size() > 0) detail::sort_entry<T, void>(c, x.size(), x.data(), out.data(), nullptr, nullptr, order);
  return out;
}

template <class T>
Array<std::int64_t> argsort(const Array<T>& x, SortOrder order, const Stream& stream) {
  constexpr const char* fn = "porta::argsort";
  detail::check_order(fn, order);
  const detail::ArgRef rx = detail::arg("x", x);
  const Device dev = detail::check_args(fn, {rx});
  detail::check_1d(fn, rx);
  if constexpr (is_half_v<T>) return argsort(cast<float>(x, stream), order, stream);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  const std::int64_t n = x.size();
  Array<std::int64_t> out = detail::new_output<std::int64_t>(fn, x.shape(), dev, stream);
  if (n == 0) return out;
  detail::Scratch keys(c, detail::checked_bytes(n, sizeof(T), fn));
  detail::sort_positions<T>(c, n, x.data(), static_cast<T*>(keys.p), out.data(), order);
  return out;
}

template <class K, class V>
std::pair<Array<K>, Array<V>> sort_by_key(const Array<K>& keys, const Array<V>& values, SortOrder order,
                                          const Stream& stream) {
  constexpr const char* fn = "porta::sort_by_key";
  detail::check_order(fn, order);
  const detail::ArgRef rk = detail::arg("keys", keys), rv = detail::arg("values", values);
  const Device dev = detail::check_args(fn, {rk, rv});
  detail::check_1d(fn, rk);
  if (keys.shape() != values.shape()) detail::throw_shapes_differ(fn, rk, rv);
  if constexpr (is_half_v<K>) {
    auto [k, v] = sort_by_key(cast<float>(keys, stream), values, order, stream);
    return {cast<K>(k, stream), std::move(v)};
  }
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if constexpr (sizeof(V) != 4 && sizeof(V) != 8) {
    std::pair<Array<K>, Array<V>> out{detail::new_output<K>(fn, keys.shape(), dev, stream), Array<V>()};
    Array<std::int64_t> at = detail::new_output<std::int64_t>(fn, keys.shape(), dev, stream);
    if (keys.size() > 0) detail::sort_positions<K>(c, keys.size(), keys.data(), out.first.data(), at.data(), order);
    out.second = take(values, at, 0, stream);
    return out;
  }
  std::pair<Array<K>, Array<V>> out{detail::new_output<K>(fn, keys.shape(), dev, stream),
                                    detail::new_output<V>(fn, values.shape(), dev, stream)};
  if (keys.size() > 0)
    detail::sort_entry<K, V>(c, keys.size(), keys.data(), out.first.data(), values.data(), out.second.data(), order);
  return out;
}

template <class T>
std::int64_t argmax(const Array<T>& x, const Stream& stream) {
  return detail::arg_full<T>(PORTA_ARG_MAX, "porta::argmax", x, stream);
}
template <class T>
std::int64_t argmin(const Array<T>& x, const Stream& stream) {
  return detail::arg_full<T>(PORTA_ARG_MIN, "porta::argmin", x, stream);
}
template <class T>
Array<std::int64_t> argmax(const Array<T>& x, int axis, const Stream& stream) {
  return detail::arg_axis<T>(PORTA_ARG_MAX, "porta::argmax", x, axis, stream);
}
template <class T>
Array<std::int64_t> argmin(const Array<T>& x, int axis, const Stream& stream) {
  return detail::arg_axis<T>(PORTA_ARG_MIN, "porta::argmin", x, axis, stream);
}

#define PORTA_INSTANTIATE_SORT(T)                                                     \
  template Array<T> sort<T>(const Array<T>&, SortOrder, const Stream&);               \
  template Array<std::int64_t> argsort<T>(const Array<T>&, SortOrder, const Stream&); \
  template std::int64_t argmax<T>(const Array<T>&, const Stream&);                    \
  template std::int64_t argmin<T>(const Array<T>&, const Stream&);                    \
  template Array<std::int64_t> argmax<T>(const Array<T>&, int, const Stream&);        \
  template Array<std::int64_t> argmin<T>(const Array<T>&, int, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_SORT)

#define PORTA_INSTANTIATE_SORT_BY_KEY_V(K, V) \
  template std::pair<Array<K>, Array<V>> sort_by_key<K, V>(const Array<K>&, const Array<V>&, SortOrder, const Stream&);
#define PORTA_INSTANTIATE_SORT_BY_KEY(K)              \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, float)           \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, double)          \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, std::int32_t)    \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, std::int64_t)    \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, complex<float>)  \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, complex<double>) \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, float16)         \
  PORTA_INSTANTIATE_SORT_BY_KEY_V(K, bfloat16)
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_SORT_BY_KEY)

}  // namespace porta
