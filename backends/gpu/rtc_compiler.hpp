// SPDX-License-Identifier: Apache-2.0
// NVRTC and hiprtc, loaded at run time: the part of the GPU plugins' run-time kernels
// that needs no GPU and no vendor header, so that a plain C++ test can compile a program with
// NVRTC on a machine without a GPU (tests/rtc/test_nvrtc.cpp). The two libraries have one API
// shape (hiprtc copies NVRTC's: create, compile, log, code, destroy), so one table serves both; the
// vendor struct names the library, the symbol prefix and the code getters.
//
// Never linked, never its header included: a GPU build must start where NVRTC is missing (the
// runtime and the driver are enough for everything else), and porta-info says why it is missing.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace porta::detail::gpu {

struct RtcNames {
  const char* name;                // "NVRTC", "hiprtc"
  std::vector<const char*> files;  // tried in order: "libnvrtc.so.13", ...
  const char* prefix;              // "nvrtc", "hiprtc"
  const char* code_size;           // "nvrtcGetCUBINSize", "hiprtcGetCodeSize"
  const char* code;                // "nvrtcGetCUBIN", "hiprtcGetCode"
};

struct RtcLibrary {
  bool ok = false;
  std::string why;   // when not ok
  std::string info;  // "NVRTC 13.0 (libnvrtc.so.13)"
  using Prog = void*;
  int (*create)(Prog*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Prog, int, const char* const*) = nullptr;
  int (*log_size)(Prog, std::size_t*) = nullptr;
  int (*log)(Prog, char*) = nullptr;
  int (*code_size)(Prog, std::size_t*) = nullptr;
  int (*code)(Prog, char*) = nullptr;
  int (*destroy)(Prog*) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

inline RtcLibrary load_rtc_library(const RtcNames& names) {
  RtcLibrary r;
  void* h = nullptr;
  std::string tried, file;
  for (const char* f : names.files) {
    h = dlopen(f, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      file = f;
      break;
    }
    const char* e = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (e != nullptr ? e : f);
  }
  if (h == nullptr) {
    r.why = std::string(names.name) + " not found (" + tried + ")";
    return r;
  }
  const std::string p = names.prefix;
  bool all = true;
  std::string missing;
  auto sym = [&](auto& fn, const std::string& s) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, s.c_str()));
    if (fn == nullptr) {
      all = false;
      missing += " " + s;
    }
  };
  sym(r.create, p + "CreateProgram");
  sym(r.compile, p + "CompileProgram");
  sym(r.log_size, p + "GetProgramLogSize");
  sym(r.log, p + "GetProgramLog");
  sym(r.code_size, names.code_size);
  sym(r.code, names.code);
  sym(r.destroy, p + "DestroyProgram");
  sym(r.error_string, p + "GetErrorString");
  if (!all) {
    r.why = file + " lacks" + missing;
    return r;  // the handle stays open: dlclose of a half-used library buys nothing
  }
  int major = 0, minor = 0;
  auto version = reinterpret_cast<int (*)(int*, int*)>(dlsym(h, (p + "Version").c_str()));
  if (version != nullptr && version(&major, &minor) == 0) {
    r.info = std::string(names.name) + " " + std::to_string(major) + "." + std::to_string(minor) + " (" + file + ")";
  } else {
    r.info = std::string(names.name) + " (" + file + ")";
  }
  r.ok = true;
  return r;
}

enum class RtcResult { ok, compile_error, failed };

// Compiles `source` with `options`; *code gets the binary, *log the compiler's output (or what
// failed). compile_error: the source does not compile; failed: the library itself failed.
inline RtcResult rtc_compile_program(const RtcLibrary& lib, const char* source, const std::vector<std::string>& options,
                                     std::string* code, std::string* log) {
  RtcLibrary::Prog prog = nullptr;
  int st = lib.create(&prog, source, "porta_rtc_program", 0, nullptr, nullptr);
  if (st != 0) {
    *log = std::string("CreateProgram: ") + lib.error_string(st);
    return RtcResult::failed;
  }
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  const int compiled = lib.compile(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t n = 0;
  if (lib.log_size(prog, &n) == 0 && n > 1) {
    log->assign(n, '\0');
    if (lib.log(prog, &(*log)[0]) != 0) log->clear();
    while (!log->empty() && log->back() == '\0') log->pop_back();
  }
  RtcResult result = RtcResult::ok;
  if (compiled != 0) {
    if (log->empty()) *log = std::string("CompileProgram: ") + lib.error_string(compiled);
    result = RtcResult::compile_error;
  } else if (lib.code_size(prog, &n) != 0 || n == 0) {
    *log += "\nno code after a successful compile";
    result = RtcResult::failed;
  } else {
    code->assign(n, '\0');
    if (lib.code(prog, &(*code)[0]) != 0) result = RtcResult::failed;
  }
  lib.destroy(&prog);
  return result;
}

}  // namespace porta::detail::gpu
