// SPDX-License-Identifier: Apache-2.0
// The tools interface seen from a Kokkos Tools library: run with KOKKOS_TOOLS_LIBS naming
// record_tool.so and PORTA_TOOLS_RECORD naming its file (tests/tools/CMakeLists.txt does both), it
// does what an application does (arrays, a parallel_for, a transform_reduce, a built-in, a copy to
// the host, a stream synchronize, all inside a profile_region) and checks what the tool heard:
// every begin has its end with the id the tool gave, kernels and copies nest inside the region,
// allocations are freed with the same pointer and size, spaces carry the names tools know.
// init and finalize (once each, first and last) are checked after the process by check_record.cmake.
//
// Compiled as CUDA or HIP when the build has that backend (porta_add_kernels), so the same checks
// run on GPU devices.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel_devices.hpp"  // kernel_devices(): the devices this file's kernels run on
#include "porta/kernels.hpp"
#include "porta/porta.hpp"
#include "porta/profile.hpp"
#include "support/support.hpp"

namespace {

struct Event {
  std::string what;
  std::vector<std::string> words;  // the fields after `what`
  std::string rest;                // the text after `what` (names hold spaces)
};

std::string record_path() {
  const char* p = std::getenv("PORTA_TOOLS_RECORD");
  return p != nullptr ? p : "";
}

std::streamoff record_size() {
  std::ifstream in(record_path(), std::ios::binary | std::ios::ate);
  return in ? static_cast<std::streamoff>(in.tellg()) : 0;
}

std::vector<Event> read_record(std::streamoff from) {
  std::ifstream in(record_path(), std::ios::binary);
  in.seekg(from);
  std::vector<Event> out;
  std::string text;
  while (std::getline(in, text)) {
    Event e;
    std::istringstream words(text);
    words >> e.what;
    const std::size_t space = text.find(' ');
    e.rest = space == std::string::npos ? "" : text.substr(space + 1);
    for (std::string w; words >> w;) e.words.push_back(w);
    out.push_back(e);
  }
  return out;
}

// The text after the first `skip` fields (a kernel's name after its id and device id).
std::string tail(const Event& e, int skip) {
  std::size_t pos = 0;
  for (int i = 0; i < skip && pos != std::string::npos; ++i) {
    pos = e.rest.find(' ', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? "" : e.rest.substr(pos);
}

const char* space_name(porta::Device d) {
  return d.type == porta::DeviceType::cuda ? "Cuda" : d.type == porta::DeviceType::hip ? "HIP" : "Host";
}

}  // namespace

TEST_CASE("a Kokkos Tools library hears launches, memory, copies, fences and regions", "[tools]") {
  const porta::Device dev = GENERATE(from_range(kernel_devices()));
  REQUIRE_FALSE(record_path().empty());
  // Settles the tools (the first use of the registry) before the record is measured.
  (void)porta::devices();
  const std::streamoff start = record_size();

  const std::int64_t n = 1000;
  const std::uint64_t bytes = n * sizeof(float);
  {
    porta::profile_region region("porta tools test");
    porta::Array<float> x(porta::Shape{n}, dev, "tools test x");
    auto xv = x.view();
    porta::parallel_for("tools test fill", dev, n,
                        PORTA_KERNEL((std::int64_t i) { xv[i] = static_cast<float>(i % 7); }));
    const double s = porta::transform_reduce("tools test total", dev, n, 0.0, porta::plus{},
                                             PORTA_KERNEL((std::int64_t i) { return static_cast<double>(xv[i]); }));
    const float total = porta::sum(x);
    float largest = 0;
    {
      porta::launch_name name("tools test largest");  // a built-in's own name
      largest = porta::max(x);
    }
    // A dense solve: its backend call is a launch too.
    const auto lhs = porta::Array<float>::from(std::vector<float>{2, 1, 1, 3}, porta::Shape{2, 2}, dev);
    CHECK(porta::linalg::solve(lhs, porta::full<float>(porta::Shape{2}, 1.0f, dev)).size() == 2);
    const std::vector<float> host = x.to_vector();
    CHECK(largest == 6.0f);
    porta::Stream stream(dev);
    stream.synchronize();
    CHECK(s == static_cast<double>(total));
    CHECK(host[8] == 1.0f);
  }

  const std::vector<Event> events = read_record(start);
  INFO("the record from offset " << start << " of " << record_path() << ": " << events.size() << " lines");
  REQUIRE_FALSE(events.empty());

  // The region encloses everything else porta reported.
  CHECK(events.front().what == "push");
  CHECK(events.front().rest == "porta tools test");
  CHECK(events.back().what == "pop");

  // Every begin has its end, in stack order, with the id the tool gave it (never porta's own).
  std::vector<std::pair<std::string, std::string>> open;  // (kind, id)
  int depth = 0, max_depth = 0, fors = 0, reduces = 0, fences = 0, copies_to_host = 0;
  std::vector<std::string> kernel_names;
  for (const Event& e : events) {
    INFO(e.what << " " << e.rest);
    const bool kernel_begin = e.what == "begin_for" || e.what == "begin_reduce" || e.what == "begin_scan";
    if (kernel_begin || e.what == "begin_fence") {
      // words: the tool's id, Kokkos' device id (type in the top 8 bits), then the name
      REQUIRE(e.words.size() >= 2);
      open.emplace_back(e.what.substr(6), e.words[0]);
      if (kernel_begin) {
        const std::uint32_t id = static_cast<std::uint32_t>(std::stoul(e.words[1]));
        const std::uint32_t type = id >> 24;
        if (dev.type == porta::DeviceType::cuda) CHECK(type == 2u);
        if (dev.type == porta::DeviceType::hip) CHECK(type == 3u);
        if (dev.type == porta::DeviceType::cpu) CHECK(type <= 1u);
        kernel_names.push_back(tail(e, 2));
      }
      fors += e.what == "begin_for";
      reduces += e.what == "begin_reduce";
      fences += e.what == "begin_fence";
    } else if (e.what == "end_for" || e.what == "end_reduce" || e.what == "end_scan" || e.what == "end_fence") {
      REQUIRE_FALSE(open.empty());
      CHECK(open.back().first == e.what.substr(4));
      CHECK(open.back().second == e.words.at(0));
      open.pop_back();
    } else if (e.what == "push") {
      max_depth = std::max(max_depth, ++depth);
    } else if (e.what == "pop") {
      CHECK(depth > 0);
      --depth;
    } else if (e.what == "begin_copy") {
      REQUIRE(e.words.size() == 5);
      if (e.words[0] == "Host" && e.words[4] == std::to_string(bytes)) {
        CHECK(e.words[2] == space_name(dev));
        ++copies_to_host;
      }
      open.emplace_back("copy", "");
    } else if (e.what == "end_copy") {
      REQUIRE_FALSE(open.empty());
      CHECK(open.back().first == "copy");
      open.pop_back();
    }
  }
  CHECK(open.empty());
  CHECK(depth == 0);
  CHECK(max_depth >= 1);
  CHECK(fors >= 1);            // the parallel_for
  CHECK(reduces >= 2);         // the transform_reduce and porta::sum
  CHECK(fences >= 1);          // Stream::synchronize
  CHECK(copies_to_host >= 1);  // to_vector
  for (const std::string& name : kernel_names) CHECK_FALSE(name.empty());
  // Named launches arrive under their names, a built-in under its function's.
  const auto heard = [&](const std::string& name) {
    return std::find(kernel_names.begin(), kernel_names.end(), name) != kernel_names.end();
  };
  CHECK(heard("tools test fill"));
  CHECK(heard("tools test total"));
  CHECK(heard("porta::sum"));
  CHECK(heard("porta::linalg::solve"));
  CHECK(heard("tools test largest"));
  CHECK_FALSE(heard("porta::max"));

  // The array: allocated and freed once each, same pointer and size, in the device's space.
  int allocs = 0, frees = 0;
  std::string pointer;
  for (const Event& e : events) {
    if ((e.what == "alloc" || e.what == "free") && e.words.size() >= 3 && e.words[2] == std::to_string(bytes) &&
        e.words[0] == space_name(dev)) {
      if (e.what == "alloc") {
        ++allocs;
        pointer = e.words[1];
        // The Array's label, as the tool received it (the record splits it at spaces).
        std::string label;
        for (std::size_t w = 3; w < e.words.size(); ++w) label += (w > 3 ? " " : "") + e.words[w];
        CHECK(label == "tools test x");
      } else {
        ++frees;
        CHECK(e.words[1] == pointer);
      }
    }
  }
  CHECK(allocs == frees);
}

TEST_CASE("regions nest and an unmatched pop_region is ignored", "[tools]") {
  (void)porta::devices();
  const std::streamoff start = record_size();
  porta::pop_region();  // no push: must not close anything
  {
    porta::profile_region outer("outer");
    porta::push_region(std::string("inner"));
    porta::pop_region();
  }
  const std::vector<Event> events = read_record(start);
  REQUIRE(events.size() == 4);
  CHECK(events[0].what == "push");
  CHECK(events[0].rest == "outer");
  CHECK(events[1].what == "push");
  CHECK(events[1].rest == "inner");
  CHECK(events[2].what == "pop");
  CHECK(events[3].what == "pop");
}
