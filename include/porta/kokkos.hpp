// SPDX-License-Identifier: Apache-2.0
// Kokkos Views as porta Arrays and porta Arrays as Kokkos Views, without copying. porta.hpp does
// not include it: include it after <Kokkos_Core.hpp> where code uses both libraries.
//
//   Kokkos::View<double**, Kokkos::LayoutRight> a("a", m, k);
//   Kokkos::parallel_for(...);                          // fills a
//   Kokkos::fence();                                    // Kokkos' writes land before porta reads
//   porta::Array<double> pa = porta::from_kokkos(a);    // a's memory; keeps a's allocation alive
//   auto pc = porta::matmul(pa, pb);
//   porta::synchronize(pc.device());                    // porta's writes land before Kokkos reads
//   auto c = porta::to_kokkos<2>(pc);                   // unmanaged: pc must outlive c
//
// The memory space picks the device: HostSpace is porta's CPU device, CudaSpace and CudaUVMSpace
// are cuda:<Kokkos' device>, HIPSpace is hip:<Kokkos' device>. porta Arrays are row-major, so a
// View must be LayoutRight (LayoutLeft only of rank 0 or 1, LayoutStride only with row-major
// strides) and contiguous. docs/interop.md has the rules and a Kokkos-to-porta table.
#pragma once

#if !defined(KOKKOS_VERSION)
#error "porta/kokkos.hpp needs Kokkos: include <Kokkos_Core.hpp> first"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "porta/array.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"

namespace porta {
namespace detail {

// Kokkos' name of a layout, for the messages.
template <class Layout>
const char* kokkos_layout_name() {
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutRight>) return "Kokkos::LayoutRight";
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutLeft>) return "Kokkos::LayoutLeft";
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutStride>) return "Kokkos::LayoutStride";
  return "a Kokkos layout other than LayoutRight, LayoutLeft and LayoutStride";
}

// The porta device that owns the memory of a Kokkos memory space, and whether `dev` is one a View
// of that space may be wrapped on. Only the spaces of the backends this Kokkos was built with
// exist as types, hence the guards; the GPU branches are compiled only by a CUDA or HIP Kokkos.
template <class Space>
struct KokkosSpace {
  static constexpr bool known = false;
};
template <>
struct KokkosSpace<Kokkos::HostSpace> {
  static constexpr bool known = true;
  static constexpr const char* name = "Kokkos::HostSpace";
  static Device device() {
    // The default device when it is a CPU device (cpu:strict included, which refuses the memory
    // with the message of Array::borrow), else the plain CPU.
    const Device d = default_device();
    return d.type == DeviceType::cpu ? d : Device(DeviceType::cpu, 0);
  }
  static bool accepts(Device d) { return d.type == DeviceType::cpu; }
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct KokkosSpace<Kokkos::CudaSpace> {
  static constexpr bool known = true;
  static constexpr const char* name = "Kokkos::CudaSpace";
  static Device device() { return Device(DeviceType::cuda, Kokkos::Cuda().cuda_device()); }
  static bool accepts(Device d) { return d == device(); }
};
template <>
struct KokkosSpace<Kokkos::CudaUVMSpace> {
  static constexpr bool known = true;
  static constexpr const char* name = "Kokkos::CudaUVMSpace";
  static Device device() { return Device(DeviceType::cuda, Kokkos::Cuda().cuda_device()); }
  static bool accepts(Device d) { return d == device(); }
};
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
using KokkosHipSpace = Kokkos::HIPSpace;
using KokkosHip = Kokkos::HIP;
#else
using KokkosHipSpace = Kokkos::Experimental::HIPSpace;
using KokkosHip = Kokkos::Experimental::HIP;
#endif
template <>
struct KokkosSpace<KokkosHipSpace> {
  static constexpr bool known = true;
  static constexpr const char* name = "Kokkos::HIPSpace";
  static Device device() { return Device(DeviceType::hip, KokkosHip().hip_device()); }
  static bool accepts(Device d) { return d == device(); }
};
#endif

// T* for rank 1, T** for rank 2, ...: the data type of a Kokkos View of that rank.
template <class T, int Rank>
struct KokkosData {
  using type = typename KokkosData<T, Rank - 1>::type*;
};
template <class T>
struct KokkosData<T, 0> {
  using type = T;
};

template <class ViewT, class T, std::size_t... I>
ViewT make_unmanaged_view(T* data, const Shape& shape, std::index_sequence<I...>) {
  return ViewT(data, static_cast<std::size_t>(shape[static_cast<int>(I)])...);
}

}  // namespace detail

// A porta Array on the memory of `view`, without copying. The device is the one of the View's
// memory space (HostSpace: the default device if it is a CPU device, else cpu); `device` names
// another one of the same memory (cpu for a HostSpace View while the default device is a GPU is
// the default already). The Array holds a copy of the View, so the allocation lives until the last
// Array (or view of it) is gone; that copy is released after porta::synchronize(device), so Kokkos
// cannot reuse memory that porta work still reads. Order (docs/interop.md): Kokkos::fence() before
// porta reads what Kokkos wrote, porta::synchronize(device) before Kokkos reads what porta wrote.
//
// InvalidArgument, naming the layout and the fix, for a View porta cannot read as row-major
// contiguous memory: LayoutLeft of rank 2 or more (column-major), a padded or strided View.
// DeviceMismatch for a `device` that cannot address the memory space. On cpu:strict, host memory is
// refused as Array::borrow refuses it.
template <class ViewT>
Array<typename ViewT::non_const_value_type> from_kokkos(const ViewT& view, Device device) {
  using T = typename ViewT::value_type;
  using Space = typename ViewT::memory_space;
  using Layout = typename ViewT::array_layout;
  using Facts = detail::KokkosSpace<Space>;
  constexpr const char* fn = "porta::from_kokkos";
  constexpr int rank = static_cast<int>(ViewT::rank);
  static_assert(!std::is_const_v<T>, "porta::from_kokkos: porta Arrays are writable; wrap a View of non-const T");
  static_assert(rank <= Shape::kMaxRank, "porta::from_kokkos: porta Arrays have at most 4 dimensions");
  static_assert(Facts::known,
                "porta::from_kokkos: porta reads Views of Kokkos::HostSpace, CudaSpace, CudaUVMSpace and HIPSpace");

  // Built only for a message: a wrap that succeeds makes no strings.
  const auto what = [&view] {
    return std::string("a ") + detail::kokkos_layout_name<Layout>() + " View of rank " + std::to_string(rank) + " (\"" +
           view.label() + "\")";
  };
  if (std::is_same_v<Layout, Kokkos::LayoutLeft> && rank > 1)
    detail::throw_invalid(fn, (what() + " is column-major and porta Arrays are row-major: declare the View "
                                        "Kokkos::LayoutRight, or Kokkos::deep_copy it into a LayoutRight View first")
                                  .c_str());
  std::int64_t dims[Shape::kMaxRank] = {};
  for (int i = 0; i < rank; ++i) dims[i] = static_cast<std::int64_t>(view.extent(static_cast<unsigned>(i)));
  const Shape shape = detail::make_shape(dims, rank);
  // Row-major strides, checked one by one: a padded LayoutRight or a LayoutStride View with gaps
  // or another order fails here. Axes of one element may have any stride, as in Array.
  if (shape.size() > 0) {
    std::int64_t expect = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (dims[i] != 1 && static_cast<std::int64_t>(view.stride(static_cast<std::size_t>(i))) != expect)
        detail::throw_invalid(
            fn, (what() + " of " + shape.to_string() + " is not contiguous row-major memory (span_is_contiguous() is " +
                 (view.span_is_contiguous() ? "true" : "false") + ", stride of axis " + std::to_string(i) + " is " +
                 std::to_string(view.stride(static_cast<std::size_t>(i))) + ", row-major needs " +
                 std::to_string(expect) + "): Kokkos::deep_copy it into a Kokkos::LayoutRight View first")
                    .c_str());
      expect *= dims[i];
    }
  }
  if (!Facts::accepts(device))
    throw DeviceMismatch(std::string(fn) + ": the View's memory is " + Facts::name + ", which " + device.to_string() +
                         " cannot address; wrap it on " + Facts::device().to_string());
  auto* data = const_cast<T*>(view.data());
  // Refused here, not in borrow, so that the message names from_kokkos.
  detail::check_borrow(device, data, static_cast<std::size_t>(shape.size()) * sizeof(T), fn);
  std::shared_ptr<void> owner(new ViewT(view), [device](void* p) {
    try {
      synchronize(device);
    } catch (...) {
      // Releasing must not throw; a device error is reported by the next porta call anyway.
    }
    delete static_cast<ViewT*>(p);
  });
  return Array<T>::borrow(data, shape, device, std::move(owner));
}
template <class ViewT>
Array<typename ViewT::non_const_value_type> from_kokkos(const ViewT& view) {
  return from_kokkos(view, detail::KokkosSpace<typename ViewT::memory_space>::device());
}

// The unmanaged Kokkos View type that to_kokkos<Rank, Space> returns for an Array<T>.
template <class T, int Rank, class Space = typename Kokkos::DefaultExecutionSpace::memory_space>
using KokkosView = Kokkos::View<typename detail::KokkosData<T, Rank>::type, Kokkos::LayoutRight, Space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// An unmanaged Kokkos View of the Array's memory, without copying: rank `Rank` (the Array's rank),
// LayoutRight, in `Space` (Kokkos' default memory space unless named: Kokkos::HostSpace for a CPU
// Array when Kokkos' default is a GPU). The View does not keep the memory alive: the Array (or a
// view of it) must outlive it and every copy of it. Order: porta::synchronize(a.device()) before
// Kokkos reads what porta wrote; Kokkos::fence() before porta uses what Kokkos wrote.
//
// InvalidArgument for a rank other than Rank or a strided Array (a.contiguous() copies);
// DeviceMismatch when `Space` is not the memory of the Array's device (cpu:strict's memory is
// device memory that no Kokkos space addresses: a.to(porta::Device::parse("cpu")) copies it).
template <int Rank, class Space = typename Kokkos::DefaultExecutionSpace::memory_space, class T>
KokkosView<T, Rank, Space> to_kokkos(Array<T>& a) {
  using Facts = detail::KokkosSpace<Space>;
  constexpr const char* fn = "porta::to_kokkos";
  static_assert(Rank >= 0 && Rank <= Shape::kMaxRank, "porta::to_kokkos: porta Arrays have 0 to 4 dimensions");
  static_assert(Facts::known,
                "porta::to_kokkos: porta exports Views of Kokkos::HostSpace, CudaSpace, CudaUVMSpace and HIPSpace");
  a.check_contiguous(fn);
  if (a.rank() != Rank)
    detail::throw_invalid(
        fn, ("the array is " + a.shape().to_string() + " (rank " + std::to_string(a.rank()) + "), not of rank " +
             std::to_string(Rank) + ": to_kokkos<" + std::to_string(a.rank()) + ">(a), or a.reshaped(...) first")
                .c_str());
  const Device dev = a.device();
  if (dev.is_strict() || !Facts::accepts(dev))
    throw DeviceMismatch(std::string(fn) + ": the array is on " + dev.to_string() + ", whose memory is not " +
                         Facts::name +
                         (dev.is_strict() ? " (cpu:strict's memory is device memory: a.to(cpu) copies it)"
                                          : ": name the memory space of its device, to_kokkos<Rank, Space>(a)"));
  return detail::make_unmanaged_view<KokkosView<T, Rank, Space>>(a.data(), a.shape(), std::make_index_sequence<Rank>{});
}
template <int Rank, class Space = typename Kokkos::DefaultExecutionSpace::memory_space, class T>
KokkosView<const T, Rank, Space> to_kokkos(const Array<T>& a) {
  auto v = to_kokkos<Rank, Space>(const_cast<Array<T>&>(a));
  return KokkosView<const T, Rank, Space>(v);
}
// A temporary Array (porta::sort(x), x.reshaped(...)) would free or drop its memory at the end of
// the statement while the unmanaged View still points at it: name the Array first.
template <int Rank, class Space = typename Kokkos::DefaultExecutionSpace::memory_space, class T>
void to_kokkos(Array<T>&& a) = delete;

}  // namespace porta
