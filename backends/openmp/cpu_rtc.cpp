// SPDX-License-Identifier: Apache-2.0
// The CPU backend's run-time kernels (issue 16): the program is compiled by the host C++ compiler
// into a shared library and dlopen()ed. The compiler is the one porta was built with (its path is
// recorded at configure time, PORTA_RTC_DEFAULT_CXX) unless PORTA_RTC_CXX names another. The flags
// keep porta's promises: -ffp-contract=off (a*b+c is two roundings, as in the eager operators),
// -fopenmp for the entry's parallel loop, never -ffast-math.
//
// The "binary" handed to the front end is the library's bytes, so that the front end's disk cache
// treats every backend alike; rtc_load writes them to a temporary file, dlopen()s it and unlinks it
// (the mapping stays). Libraries are never closed: kernels live until the process exits.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "cpu_common.hpp"
#include "cpu_kernels.hpp"

#ifndef PORTA_RTC_DEFAULT_CXX
#define PORTA_RTC_DEFAULT_CXX "c++"
#endif

struct porta_rtc_kernel_s {
  void* library;
  void (*entry)(long long n, const void* args);
};

namespace porta::detail::cpu {
namespace {

std::string compiler() {
  const char* env = std::getenv("PORTA_RTC_CXX");
  if (env != nullptr && env[0] != '\0') return env;
  // An installed porta may run where the build machine's compiler path does not exist: then the
  // c++ of PATH.
  return access(PORTA_RTC_DEFAULT_CXX, X_OK) == 0 ? PORTA_RTC_DEFAULT_CXX : "c++";
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string flags() {
  std::string f = "-std=c++17 -O3 -fPIC -shared -ffp-contract=off";
#if defined(_OPENMP)
  f += " -fopenmp";
#endif
  return f;
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && t[0] != '\0' ? t : "/tmp";
}

// Runs `command` through the shell; its output (stdout and stderr) into *out. Returns the exit status.
int run(const std::string& command, std::string* out) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, got);
  const int st = pclose(p);
  return st == -1 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) : 128);
}

void copy_text(const std::string& s, char* dst, size_t len) {
  if (dst == nullptr || len == 0) return;
  const std::size_t n = s.size() < len - 1 ? s.size() : len - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

// "<path>: <first line of --version>, <machine>, <flags>", once per compiler path; empty: missing.
struct Probe {
  bool ok = false;
  std::string text;  // the key, or why the compiler is unusable
};
Probe probe(const std::string& cxx) {
  static std::mutex mutex;
  static std::map<std::string, Probe> seen;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = seen.find(cxx);
  if (it != seen.end()) return it->second;
  Probe p;
  std::string out;
  const int st = run(quoted(cxx) + " --version", &out);
  const std::string first = out.substr(0, out.find('\n'));
  if (st != 0) {
    p.text = "the host C++ compiler " + cxx + " does not run (" +
             (first.empty() ? "exit " + std::to_string(st) : first) + "); set PORTA_RTC_CXX to one that does";
  } else {
    utsname u{};
    uname(&u);
    p.ok = true;
    p.text = cxx + ": " + first + ", " + u.machine + ", " + flags();
  }
  seen.emplace(cxx, p);
  return p;
}

}  // namespace

// key == NULL: runs the compiler once (per process and path) to see that it works. Otherwise the
// cache key without running anything: the compiler's path, its file's size and time (an upgrade
// changes them), the machine and the flags.
porta_status rtc_info(int dev, char* key, size_t len) noexcept {
  PORTA_CPU_TRY
  if (porta_status st = check_device(dev, "rtc_info"); st != PORTA_OK) return st;
  const std::string cxx = compiler();
  if (key == nullptr) {
    const Probe p = probe(cxx);
    if (!p.ok) return set_error(PORTA_ERR_UNAVAILABLE, "rtc_info: %s", p.text.c_str());
    return PORTA_OK;
  }
  std::string id = cxx;
  char resolved[PATH_MAX];
  struct stat st {};
  if (cxx.find('/') != std::string::npos && realpath(cxx.c_str(), resolved) != nullptr && stat(resolved, &st) == 0) {
    id += std::string(" (") + resolved + ", " + std::to_string(static_cast<long long>(st.st_size)) + " bytes, " +
          std::to_string(static_cast<long long>(st.st_mtime)) + ")";
  } else {
    id = probe(cxx).text;  // a name found through PATH: its --version line
  }
  utsname u{};
  uname(&u);
  copy_text(id + ", " + u.machine + ", " + flags(), key, len);
  return PORTA_OK;
  PORTA_CPU_CATCH("rtc_info")
}

porta_status rtc_compile(int dev, const char* source, const char* options, void** binary, size_t* bytes, char* log,
                         size_t log_len) noexcept {
  PORTA_CPU_TRY
  copy_text(std::string(), log, log_len);
  if (porta_status st = check_device(dev, "rtc_compile"); st != PORTA_OK) return st;
  if (source == nullptr || binary == nullptr || bytes == nullptr)
    return set_error(PORTA_ERR_INVALID, "rtc_compile: NULL source or output");
  *binary = nullptr;
  *bytes = 0;
  const std::string cxx = compiler();
  const Probe p = probe(cxx);
  if (!p.ok) return set_error(PORTA_ERR_UNAVAILABLE, "rtc_compile: %s", p.text.c_str());

  std::string dir = temp_root() + "/porta-rtc-XXXXXX";
  if (mkdtemp(&dir[0]) == nullptr)
    return set_error(PORTA_ERR_BACKEND, "rtc_compile: cannot make a temporary folder under %s: %s", temp_root().c_str(),
                     std::strerror(errno));
  const std::string src = dir + "/kernel.cpp", lib = dir + "/kernel.so";
  struct Cleanup {
    const std::string &dir, &src, &lib;
    ~Cleanup() {
      std::remove(src.c_str());
      std::remove(lib.c_str());
      rmdir(dir.c_str());
    }
  } cleanup{dir, src, lib};

  FILE* f = std::fopen(src.c_str(), "wb");
  const std::size_t n = std::strlen(source);
  if (f == nullptr || std::fwrite(source, 1, n, f) != n || std::fclose(f) != 0)
    return set_error(PORTA_ERR_BACKEND, "rtc_compile: cannot write %s", src.c_str());

  std::string out;
  const std::string command = quoted(cxx) + " " + flags() + " " + (options != nullptr ? options : "") + " -o " +
                              quoted(lib) + " " + quoted(src);
  const int st = run(command, &out);
  copy_text(out, log, log_len);
  if (st != 0)
    return set_error(PORTA_ERR_INVALID, "rtc_compile: %s failed (exit %d):\n%s", cxx.c_str(), st, out.c_str());

  FILE* in = std::fopen(lib.c_str(), "rb");
  if (in == nullptr) return set_error(PORTA_ERR_BACKEND, "rtc_compile: %s wrote no %s", cxx.c_str(), lib.c_str());
  std::fseek(in, 0, SEEK_END);
  const long size = std::ftell(in);
  std::fseek(in, 0, SEEK_SET);
  void* buf = size > 0 ? std::malloc(static_cast<std::size_t>(size)) : nullptr;
  const bool read_ok =
      buf != nullptr && std::fread(buf, 1, static_cast<std::size_t>(size), in) == static_cast<std::size_t>(size);
  std::fclose(in);
  if (!read_ok) {
    std::free(buf);
    return set_error(PORTA_ERR_BACKEND, "rtc_compile: cannot read %s (%ld bytes)", lib.c_str(), size);
  }
  *binary = buf;
  *bytes = static_cast<std::size_t>(size);
  return PORTA_OK;
  PORTA_CPU_CATCH("rtc_compile")
}

porta_status rtc_free_binary(void* binary) noexcept {
  std::free(binary);
  return PORTA_OK;
}

porta_status rtc_load(int dev, const void* binary, size_t bytes, const char* name, porta_rtc_kernel* out) noexcept {
  PORTA_CPU_TRY
  if (porta_status st = check_device(dev, "rtc_load"); st != PORTA_OK) return st;
  if (binary == nullptr || bytes == 0 || name == nullptr || out == nullptr)
    return set_error(PORTA_ERR_INVALID, "rtc_load: NULL or empty argument");
  *out = nullptr;
  std::string path = temp_root() + "/porta-rtc-XXXXXX.so";
  const int fd = mkstemps(&path[0], 3);
  if (fd < 0)
    return set_error(PORTA_ERR_BACKEND, "rtc_load: cannot make a temporary file under %s: %s", temp_root().c_str(),
                     std::strerror(errno));
  const char* p = static_cast<const char*>(binary);
  std::size_t left = bytes;
  while (left > 0) {
    const ssize_t w = write(fd, p, left);
    if (w <= 0) break;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  close(fd);
  if (left != 0) {
    unlink(path.c_str());
    return set_error(PORTA_ERR_BACKEND, "rtc_load: cannot write %s", path.c_str());
  }
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  unlink(path.c_str());
  if (lib == nullptr) {
    const char* why = dlerror();
    return set_error(PORTA_ERR_INVALID, "rtc_load: not a loadable library (%s)",
                     why != nullptr ? why : "dlopen failed");
  }
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    dlclose(lib);
    return set_error(PORTA_ERR_INVALID, "rtc_load: the library has no entry %s", name);
  }
  auto* k = new porta_rtc_kernel_s{lib, nullptr};
  k->entry = reinterpret_cast<void (*)(long long, const void*)>(sym);
  *out = k;
  return PORTA_OK;
  PORTA_CPU_CATCH("rtc_load")
}

porta_status rtc_launch(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                        porta_stream) noexcept {
  PORTA_CPU_TRY
  if (porta_status st = check_device(dev, "rtc_launch"); st != PORTA_OK) return st;
  if (k == nullptr || k->entry == nullptr) return set_error(PORTA_ERR_INVALID, "rtc_launch: NULL kernel");
  if (n < 0) return set_error(PORTA_ERR_INVALID, "rtc_launch: n is %lld", static_cast<long long>(n));
  if (args == nullptr && args_bytes > 0) return set_error(PORTA_ERR_INVALID, "rtc_launch: NULL arguments");
  if (n == 0) return PORTA_OK;
  k->entry(static_cast<long long>(n), args);
  return PORTA_OK;
  PORTA_CPU_CATCH("rtc_launch")
}

// The CPU has no grid: the entry's OpenMP loop over [0, n) either way.
porta_status rtc_launch_cover(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                              porta_stream s) noexcept {
  return rtc_launch(dev, k, n, args, args_bytes, s);
}

}  // namespace porta::detail::cpu
