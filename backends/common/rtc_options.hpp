// SPDX-License-Identifier: Apache-2.0
// The options string of a run-time kernel (porta::rtc::Module's second argument) as a list of
// arguments, split once, the same way for NVRTC, hiprtc and the host compiler: words separated by
// blanks, where '...' keeps everything literally, "..." keeps everything but \" and \\, and a
// backslash outside quotes keeps the next character. Nothing is expanded: $(...), `...`, ; and |
// are characters of an argument, because no shell ever sees the options (the host compiler is
// started with an argument vector), so "-DMSG=\"a b\"" and -DX='$HOME' mean what they say.
#pragma once

#include <string>
#include <vector>

namespace porta::detail::backend {

struct SplitOptions {
  std::vector<std::string> args;
  std::string error;  // empty: split; otherwise why not (an unterminated quote)
};

inline SplitOptions split_options(const char* options) {
  SplitOptions r;
  std::string cur;
  bool in_word = false;
  const char* c = options;
  for (; c != nullptr && *c != '\0'; ++c) {
    if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
      if (in_word) r.args.push_back(cur);
      cur.clear();
      in_word = false;
    } else if (*c == '\'' || *c == '"') {
      const char q = *c;
      in_word = true;
      for (++c; *c != '\0' && *c != q; ++c) {
        if (q == '"' && *c == '\\' && (c[1] == '"' || c[1] == '\\')) ++c;
        cur += *c;
      }
      if (*c == '\0') {
        r.error = std::string("an unterminated ") + (q == '\'' ? "single" : "double") + " quote in the options";
        r.args.clear();
        return r;
      }
    } else if (*c == '\\') {
      in_word = true;
      if (c[1] != '\0') ++c;
      cur += *c;
    } else {
      in_word = true;
      cur += *c;
    }
  }
  if (in_word) r.args.push_back(cur);
  return r;
}

}  // namespace porta::detail::backend
