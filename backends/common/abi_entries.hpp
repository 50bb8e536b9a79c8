// SPDX-License-Identifier: Apache-2.0
// What every table-filling and table-reading piece of porta generates from the one list of ABI
// entries (porta/abi/backend_v1_entries.inc), and the compile-time proof that the list and the
// struct of porta/abi/backend_v1.h agree: each listed entry is a member of that name and type, the
// list is in member order, starts right after device_count and ends at the end of the struct. A
// member added to the struct without its line in the list (or the reverse) stops the build here.
//
// Plain C++, no vendor header: the runtime, the CPU backend and the GPU plugins include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "porta/abi/backend_v1.h"

namespace porta::detail::abi {

#define PORTA_ABI_ENTRY(name, params, args)                                               \
  static_assert(std::is_same_v<decltype(porta_backend_v1::name), porta_status(*) params>, \
                "porta/abi/backend_v1_entries.inc: the type of " #name " differs from porta_backend_v1's");
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY

inline constexpr std::size_t kEntryOffsets[] = {
#define PORTA_ABI_ENTRY(name, params, args) offsetof(porta_backend_v1, name),
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
};
inline constexpr std::size_t kEntryCount = sizeof(kEntryOffsets) / sizeof(kEntryOffsets[0]);

constexpr bool entries_cover_the_struct() {
  std::size_t expect = offsetof(porta_backend_v1, device_count) + sizeof(void*);
  for (std::size_t off : kEntryOffsets) {
    if (off != expect) return false;
    expect += sizeof(void*);
  }
  return expect == sizeof(porta_backend_v1);
}
static_assert(entries_cover_the_struct(),
              "porta/abi/backend_v1_entries.inc must list every porta_backend_v1 entry after device_count, in "
              "member order");

}  // namespace porta::detail::abi
