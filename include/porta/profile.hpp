// SPDX-License-Identifier: Apache-2.0
// Named regions for profilers: a span of the program (a time step, a solver phase) that Kokkos
// Tools libraries (space-time-stack, Caliper, TAU, APEX), Nsight Systems, rocprof and
// PORTA_PROFILE see under its name, with porta's kernels nested inside. docs/profiling.md says how
// to load each tool.
//
//   for (int step = 0; step < steps; ++step) {
//     porta::profile_region region("time step");   // closed at the end of the scope
//     porta::parallel_for(...);
//     {
//       porta::profile_region inner("halo exchange");
//       ...
//     }
//   }
//
//   porta::push_region("setup");   // the same, where a scope does not fit
//   ...
//   porta::pop_region();
//
// Regions nest per thread (each thread has its own stack, as in Kokkos). With no tool loaded a
// region costs a flag load at each end and, at its start, a call that returns the tools' settled
// answer; a pop_region without its push_region is ignored.
#pragma once

#include <string>

#include "porta/detail/tools.hpp"

namespace porta {

// Opens a region named `name` on this thread's stack (the name is copied by the tools).
inline void push_region(const char* name) {
  // The first region may come before porta's first array or launch: settle the tools now so that
  // it is not missed (init() is once per process; later calls return its answer).
  if (detail::tools::active() || detail::tools::init()) detail::tools::push_region(name);
}
inline void push_region(const std::string& name) {
  push_region(name.c_str());
}

// Closes this thread's innermost region.
inline void pop_region() {
  if (detail::tools::active()) detail::tools::pop_region();
}

// A region for the lifetime of the object: opened by the constructor, closed by the destructor.
class profile_region {
 public:
  explicit profile_region(const char* name) { push_region(name); }
  explicit profile_region(const std::string& name) { push_region(name.c_str()); }
  ~profile_region() { pop_region(); }
  profile_region(const profile_region&) = delete;
  profile_region& operator=(const profile_region&) = delete;
  profile_region(profile_region&&) = delete;
  profile_region& operator=(profile_region&&) = delete;
};

// A name for the built-in calls of this thread while it lives (porta::sum, matmul, fill, a fused
// expression, ...), which profiling tools, NVTX ranges and PORTA_PROFILE=summary then show in place
// of the function's own name: the built-ins' optional name, as a user kernel's is the first
// argument of parallel_for. Scopes nest; the innermost names. User kernels keep their own names.
//
//   {
//     porta::launch_name name("residual norm");
//     r = porta::norm2(residual);               // a tool sees "residual norm", not "porta::norm2"
//   }
//
// With no tool loaded it stores the name and nothing reads it: name hot loops' calls with a
// profile_region instead, which costs a flag load.
class launch_name {
 public:
  explicit launch_name(const char* name) { detail::tools::set_builtin_name(name); }
  explicit launch_name(const std::string& name) { detail::tools::set_builtin_name(name.c_str()); }
  ~launch_name() { detail::tools::set_builtin_name(nullptr); }
  launch_name(const launch_name&) = delete;
  launch_name& operator=(const launch_name&) = delete;
  launch_name(launch_name&&) = delete;
  launch_name& operator=(launch_name&&) = delete;
};

}  // namespace porta
