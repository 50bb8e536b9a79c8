// SPDX-License-Identifier: Apache-2.0
// The front end of run-time kernels (porta/rtc.hpp): the wrapper generated from a launch's argument
// types, the caches, and the errors. Backends only compile, load and launch (the rtc_* entries);
// everything they share lives here once: the program text, the key, the disk cache and its file
// format, the in-process cache, CompileError with the user's line.
//
// One program per (module, kernel, argument types, device kind): the prelude (with porta's math
// headers in its middle, kRtcMathText, generated from them at build time), a #line 1 of the user's
// source, the source, and the entry PORTA_RTC_ENTRY makes from the generated argument struct. The
// struct's layout is computed here too (every member is 4 or 8 bytes, or a view of 16 aligned to 8)
// and checked by a static_assert in the program, so host and device agree on it.
//
// Disk cache: <cache_dir>/rtc/<key>.bin, key = 128 bits of FNV-1a over the program text, the
// options and the backend's rtc_info (compiler, version, target). File: "PORTARTC", payload size,
// payload hash, payload. Written to a temporary name and renamed, so a reader never sees half a
// file; a file that is short, has another hash or does not load is compiled again and replaced.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/common/rtc_options.hpp"
#include "porta/detail/rtc_prelude.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/tools.hpp"
#include "porta/rtc.hpp"
#include "runtime/registry.hpp"

namespace porta::detail {
// porta's math headers as one text (generated from them at build time by runtime/rtc_math_text.cmake).
extern const char* const kRtcMathText;
}  // namespace porta::detail

namespace porta::rtc {
namespace detail {

struct ModuleState {
  std::string source;
  std::string options;
  std::string source_name;
  std::mutex mutex;
  // (device, kernel, argument types) -> loaded kernel
  std::map<std::string, porta_rtc_kernel> kernels;
};

}  // namespace detail

namespace {

constexpr const char* kFn = "porta::rtc::Kernel::launch";

std::atomic<std::uint64_t> g_compiles{0}, g_disk_hits{0}, g_disk_corrupt{0}, g_memory_hits{0};

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

void make_dirs(const std::string& path) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') (void)mkdir(path.substr(0, i).c_str(), 0755);
  }
}

// ---- the program ----------------------------------------------------------------------------------
struct Layout {
  std::vector<std::size_t> offsets;
  std::size_t size = 0;
};

Layout layout(const std::vector<detail::Arg>& args) {
  Layout l;
  std::size_t off = 0, max_align = 1;
  for (const detail::Arg& a : args) {
    const std::size_t align = a.size < 8 ? a.size : 8;
    off = (off + align - 1) / align * align;
    l.offsets.push_back(off);
    off += a.size;
    if (align > max_align) max_align = align;
  }
  off += 1;  // the struct's `char porta_end_` member: no argument list makes an empty struct
  l.size = (off + max_align - 1) / max_align * max_align;
  return l;
}

// A C identifier for names such as "axpy<float>": its letters and digits, and a hash of the name.
std::string mangled(const std::string& kernel) {
  std::string m;
  for (char c : kernel) m += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
  return m + "_" + hex64(fnv1a(kernel, 14695981039346656037ull)).substr(0, 8);
}

std::string entry_name(const std::string& kernel) {
  return "porta_rtc_entry_" + mangled(kernel);
}

// `name` as the body of a C string literal (for #line): a file's path may hold quotes, backslashes,
// even line breaks. Compilers print the name unescaped, which is how first_line finds it again.
std::string c_string_body(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The prelude with porta's math headers in its middle (rtc_prelude.hpp), each part under its own
// name for the compilers' messages; the math headers' text names its files itself.
const std::string& prelude() {
  static const std::string text = [] {
    const std::string head = porta::detail::kRtcPrelude;
    std::size_t lines = 1;
    for (char c : head) lines += c == '\n';
    return "#line 1 \"porta_rtc_prelude\"\n" + head + porta::detail::kRtcMathText + "#line " + std::to_string(lines) +
           " \"porta_rtc_prelude\"\n" + porta::detail::kRtcPreludeRest;
  }();
  return text;
}

std::string program(const detail::ModuleState& m, const std::string& kernel, const std::vector<detail::Arg>& args,
                    std::size_t args_bytes) {
  std::ostringstream p;
  p << prelude() << "#line 1 \"" << c_string_body(m.source_name) << "\"\n" << m.source << "\n";
  const std::string args_type = "porta_rtc_args_" + mangled(kernel);
  p << "#line 1 \"porta_rtc_wrapper\"\nstruct " << args_type << " {\n";
  for (std::size_t i = 0; i < args.size(); ++i) p << "  " << args[i].type << " a" << i << ";\n";
  p << "  char porta_end_;\n};\n";
  p << "static_assert(sizeof(" << args_type << ") == " << args_bytes
    << ", \"porta::rtc: the argument struct's layout differs from porta's\");\n";
  p << "PORTA_RTC_ENTRY(" << entry_name(kernel) << ", " << args_type << ", " << kernel << "(i";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_array) {
      p << ", a.a" << i;
    } else {
      p << ", porta::rtc::detail::Exact<" << args[i].type << ">{a.a" << i << "}";
    }
  }
  p << "))\n";
  return p.str();
}

std::string signature(const std::string& kernel, const std::vector<detail::Arg>& args) {
  std::string s = kernel + "(";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + std::string(args[i].type);
  return s + ")";
}

// The first line of the user's source that the log names: "name:12:5: error" (GCC, clang) or
// "name(12): error" (NVRTC).
int first_line(const std::string& log, const std::string& name) {
  for (std::size_t at = log.find(name); at != std::string::npos; at = log.find(name, at + 1)) {
    std::size_t i = at + name.size();
    if (i < log.size() && (log[i] == ':' || log[i] == '(')) {
      ++i;
      int line = 0;
      bool digits = false;
      while (i < log.size() && log[i] >= '0' && log[i] <= '9') {
        line = line * 10 + (log[i++] - '0');
        digits = true;
      }
      if (digits) return line;
    }
  }
  return 0;
}

[[noreturn]] void compile_error(const std::string& sig, Device device, const detail::ModuleState& m,
                                const std::string& log) {
  const int line = first_line(log, m.source_name);
  std::string what = std::string(kFn) + ": " + sig + " did not compile for " + device.to_string();
  if (line > 0) what += " (" + m.source_name + ", line " + std::to_string(line) + ")";
  // An error only in the generated call: the launch's arguments are not the kernel's parameters.
  if (line == 0 && log.find("porta_rtc_wrapper") != std::string::npos)
    what += " (the launch's argument types do not match the kernel's parameters)";
  // The first lines of the log: enough to read the error; log() has all of it.
  std::string head;
  std::istringstream in(log);
  std::string l;
  for (int i = 0; i < 20 && std::getline(in, l); ++i) head += "\n  " + l;
  throw CompileError(what + ":" + head, log, line);
}

// ---- the disk cache -------------------------------------------------------------------------------
constexpr char kMagic[8] = {'P', 'O', 'R', 'T', 'A', 'R', 'T', 'C'};

bool read_entry(const std::string& path, std::string* payload) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  std::uint64_t size = 0, hash = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return false;
  if (!in.read(reinterpret_cast<char*>(&size), 8) || !in.read(reinterpret_cast<char*>(&hash), 8)) return false;
  if (size == 0 || size > (std::uint64_t(1) << 32)) return false;
  payload->resize(static_cast<std::size_t>(size));
  if (!in.read(&(*payload)[0], static_cast<std::streamsize>(size))) return false;
  return fnv1a(*payload, 14695981039346656037ull) == hash;
}

// Best effort: a cache that cannot be written costs the next process a compile, nothing more.
void write_entry(const std::string& dir, const std::string& path, const void* data, std::size_t bytes) {
  make_dirs(dir);
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + hex64((std::uint64_t(rd()) << 32) | rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const std::string payload(static_cast<const char*>(data), bytes);
    const std::uint64_t size = bytes, hash = fnv1a(payload, 14695981039346656037ull);
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(&hash), 8);
    out.write(payload.data(), static_cast<std::streamsize>(bytes));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

// Kernels loaded in this process, by key and device: a second Module with the same source loads
// nothing again.
std::mutex g_loaded_mutex;
std::map<std::string, porta_rtc_kernel>& loaded() {
  static auto* m = new std::map<std::string, porta_rtc_kernel>;  // kernels outlive static destructors
  return *m;
}

std::string backend_key(const porta_backend_v1& t, int dev, Device device) {
  char info[1024] = "";
  porta::detail::check(t.rtc_info(dev, info, sizeof info), "porta::rtc", device);
  return info;
}

porta_rtc_kernel get_kernel(detail::ModuleState& m, const std::string& kernel, Device device,
                            const std::vector<detail::Arg>& args, std::size_t args_bytes) {
  const porta_backend_v1& t = porta::detail::backend_for(device, kFn);
  const int dev = device.index;
  const std::string text = program(m, kernel, args, args_bytes);
  const std::string info = backend_key(t, dev, device);
  const std::string all = text + '\0' + m.options + '\0' + info + '\0' + t.name;
  const std::string key = hex64(fnv1a(all, 14695981039346656037ull)) + hex64(fnv1a(all, 0x84222325cbf29ce4ull));
  const std::string entry = entry_name(kernel);

  const std::string loaded_key = key + "@" + device.to_string();
  {
    std::lock_guard<std::mutex> lock(g_loaded_mutex);
    auto it = loaded().find(loaded_key);
    if (it != loaded().end()) {
      ++g_memory_hits;
      return it->second;
    }
  }

  const std::string dir = cache_dir() + "/rtc";
  const std::string path = dir + "/" + key + ".bin";
  porta_rtc_kernel k = nullptr;
  std::string payload;
  if (read_entry(path, &payload)) {
    if (t.rtc_load(dev, payload.data(), payload.size(), entry.c_str(), &k) == PORTA_OK && k != nullptr) {
      ++g_disk_hits;
    } else {
      k = nullptr;
      ++g_disk_corrupt;
    }
  } else if (access(path.c_str(), F_OK) == 0) {
    ++g_disk_corrupt;
  }

  if (k == nullptr) {
    std::vector<char> log(256 * 1024, '\0');
    void* binary = nullptr;
    std::size_t bytes = 0;
    ++g_compiles;
    const porta_status st =
        t.rtc_compile(dev, text.c_str(), m.options.c_str(), &binary, &bytes, log.data(), log.size());
    if (st == PORTA_ERR_INVALID) compile_error(signature(kernel, args), device, m, log.data());
    porta::detail::check(st, kFn, device);
    struct Free {
      const porta_backend_v1& t;
      void* b;
      ~Free() { (void)t.rtc_free_binary(b); }
    } free_binary{t, binary};
    porta::detail::check(t.rtc_load(dev, binary, bytes, entry.c_str(), &k), kFn, device);
    write_entry(dir, path, binary, bytes);
  }

  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  loaded().emplace(loaded_key, k);
  return k;
}

}  // namespace

namespace detail {

std::shared_ptr<ModuleState> make_module(std::string source, std::string options, std::string source_name) {
  // Split here as every backend will split them, so that a malformed string is the caller's error
  // at once, not a compile error on the first device that launches.
  const porta::detail::backend::SplitOptions split = porta::detail::backend::split_options(options.c_str());
  if (!split.error.empty()) porta::detail::throw_invalid("porta::rtc::Module", (split.error + ": " + options).c_str());
  auto m = std::make_shared<ModuleState>();
  m->source = std::move(source);
  m->options = std::move(options);
  m->source_name = std::move(source_name);
  return m;
}

std::string program_text(const std::string& source, const std::string& kernel, const std::vector<Arg>& args) {
  const auto m = make_module(source, "", "porta_rtc_source");
  return program(*m, kernel, args, layout(args).size);
}

void launch(const std::shared_ptr<ModuleState>& module, const std::string& kernel, Device device, const Stream* stream,
            std::int64_t n, const std::vector<Arg>& args, bool cover) {
  if (!module) porta::detail::throw_invalid(kFn, "the kernel comes from a moved-from Module");
  if (n < 0) porta::detail::throw_invalid(kFn, ("n is " + std::to_string(n) + "; it must be at least 0").c_str());
  // A name, or a template's name with its arguments ("axpy<float>"): nothing that could end the call.
  const std::string base = kernel.substr(0, kernel.find('<'));
  bool identifier = !base.empty() && !(base[0] >= '0' && base[0] <= '9');
  for (char c : base)
    identifier = identifier && (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  for (char c : kernel) identifier = identifier && c != ';' && c != '(' && c != ')' && c != '{' && c != '}';
  if (!identifier)
    porta::detail::throw_invalid(kFn, ("\"" + kernel + "\" is not a C++ identifier (a kernel's name)").c_str());
  if (module->source.find(base) == std::string::npos)
    porta::detail::throw_invalid(kFn, ("the module's source has no kernel named " + base).c_str());
  // The device first: on an absent device (cpu:1) every array is "elsewhere", and the cause is the
  // device, not the arrays.
  const porta_backend_v1& t = porta::detail::backend_for(device, kFn);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    if (!a.is_array) continue;
    const std::string which = "argument " + std::to_string(i + 1) + " of " + kernel;
    if (a.value == nullptr || static_cast<const ViewBits*>(a.value)->count < 0)
      porta::detail::throw_invalid(kFn, (which + " is a moved-from array").c_str());
    if (!a.contiguous)
      porta::detail::throw_invalid(kFn, (which + " is a strided view; pass its .contiguous() copy").c_str());
    if (!(a.device == device))
      throw DeviceMismatch(std::string(kFn) + ": " + which + " is on " + a.device.to_string() + ", the launch on " +
                           device.to_string());
  }
  const porta_stream s = stream != nullptr ? porta::detail::stream_for(*stream, device, kFn) : nullptr;

  const Layout l = layout(args);
  std::string key = device.to_string() + "|" + signature(kernel, args);
  porta_rtc_kernel k = nullptr;
  {
    std::lock_guard<std::mutex> lock(module->mutex);
    auto it = module->kernels.find(key);
    if (it != module->kernels.end()) k = it->second;
  }
  if (k != nullptr) {
    ++g_memory_hits;
  } else {
    k = get_kernel(*module, kernel, device, args, l.size);
    std::lock_guard<std::mutex> lock(module->mutex);
    module->kernels.emplace(key, k);
  }

  alignas(8) unsigned char small[256];
  std::vector<unsigned char> big;
  unsigned char* blob = small;
  if (l.size > sizeof small) {
    big.resize(l.size);
    blob = big.data();
  }
  std::memset(blob, 0, l.size);
  for (std::size_t i = 0; i < args.size(); ++i) std::memcpy(blob + l.offsets[i], args[i].value, args[i].size);
  auto entry = cover ? t.rtc_launch_cover : t.rtc_launch;
  namespace tools = porta::detail::tools;
  if (!tools::active()) return porta::detail::check(entry(device.index, k, n, blob, l.size, s), kFn, device);
  // A profiling tool sees the launch under the kernel's own name.
  const std::uint64_t id = tools::begin_kernel(tools::Kind::parallel_for, kernel.c_str(), device, s);
  const porta_status st = entry(device.index, k, n, blob, l.size, s);
  tools::end_kernel(tools::Kind::parallel_for, id, device, s);
  porta::detail::check(st, kFn, device);
}

}  // namespace detail

Module Module::from_file(const std::string& path, std::string options) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    porta::detail::throw_invalid("porta::rtc::Module::from_file",
                                 ("cannot read " + path + ": " + std::strerror(errno)).c_str());
  std::ostringstream text;
  text << in.rdbuf();
  return Module(detail::make_module(text.str(), std::move(options), path));
}

Stats stats() {
  Stats s;
  s.compiles = g_compiles.load();
  s.disk_hits = g_disk_hits.load();
  s.disk_corrupt = g_disk_corrupt.load();
  s.memory_hits = g_memory_hits.load();
  return s;
}

std::string cache_dir() {
  const char* d = std::getenv("PORTA_CACHE_DIR");
  if (d != nullptr && d[0] != '\0') return d;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] != '\0') return std::string(xdg) + "/porta";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/porta";
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/porta-cache";
}

std::string compiler_info(Device device) {
  const porta_backend_v1& t = porta::detail::backend_for(device, "porta::rtc::compiler_info");
  porta::detail::check(t.rtc_info(device.index, nullptr, 0), "porta::rtc::compiler_info", device);
  return backend_key(t, device.index, device);
}

std::string unavailable_reason(Device device) {
  try {
    const porta_backend_v1& t = porta::detail::backend_for(device, "porta::rtc");
    porta::detail::check(t.rtc_info(device.index, nullptr, 0), "porta::rtc", device);
    return std::string();
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace porta::rtc
