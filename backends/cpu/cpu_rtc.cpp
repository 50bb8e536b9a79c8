// SPDX-License-Identifier: Apache-2.0
// The CPU backend's run-time kernels: the program is compiled by the host C++ compiler
// into a shared library and dlopen()ed. The compiler is the one porta was built with (its path is
// recorded at configure time, PORTA_RTC_DEFAULT_CXX) unless PORTA_RTC_CXX names another. The flags
// keep porta's promises: -ffp-contract=off (a*b+c is two roundings, as in the eager operators),
// -fopenmp for the entry's parallel loop, never -ffast-math.
//
// The "binary" handed to the front end is the library's bytes, so that the front end's disk cache
// treats every backend alike; rtc_load writes them to a temporary file, dlopen()s it and unlinks it
// (the mapping stays). Libraries are never closed: kernels live until the process exits.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
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
#include <vector>

#include "backends/common/rtc_options.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_math.hpp"

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

std::vector<std::string> flags() {
  return {
    "-std=c++17", "-O3", "-fPIC", "-shared", "-ffp-contract=off"
#if defined(_OPENMP)
        ,
        "-fopenmp"
#endif
  };
}

std::string flag_text() {
  std::string f;
  for (const std::string& s : flags()) f += (f.empty() ? "" : " ") + s;
  return f;
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && t[0] != '\0' ? t : "/tmp";
}

// Runs the program args[0] (looked up in PATH) with args, never through a shell: the user's
// options are arguments, not command text, so nothing in them is expanded or executed. Its stdout
// and stderr go into *out. Returns the exit status; 127: it could not be started; 128 + n: killed
// by signal n.
int run(const std::vector<std::string>& args, std::string* out) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 127;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    out->append(args[0] + ": " + std::strerror(spawned));
    return 127;
  }
  char buf[4096];
  for (;;) {
    const ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) {
      out->append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
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
  const int st = run({cxx, "--version"}, &out);
  const std::string first = out.substr(0, out.find('\n'));
  if (st != 0) {
    p.text = "the host C++ compiler " + cxx + " does not run (" +
             (first.empty() ? "exit " + std::to_string(st) : first) + "); set PORTA_RTC_CXX to one that does";
  } else {
    utsname u{};
    uname(&u);
    p.ok = true;
    p.text = cxx + ": " + first + ", " + u.machine + ", " + flag_text();
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
  copy_text(id + ", " + u.machine + ", " + flag_text(), key, len);
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
  backend::SplitOptions user = backend::split_options(options);
  if (!user.error.empty()) return set_error(PORTA_ERR_INVALID, "rtc_compile: %s", user.error.c_str());
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

  std::vector<std::string> command{cxx};
  for (std::string& f : flags()) command.push_back(std::move(f));
  for (std::string& o : user.args) command.push_back(std::move(o));
  for (const char* a : {"-o", lib.c_str(), src.c_str()}) command.emplace_back(a);
  std::string out;
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
