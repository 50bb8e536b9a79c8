// SPDX-License-Identifier: Apache-2.0
// Overlapping copies and compute: a large input streamed through the device in chunks, on one
// stream and then on two. With two streams, chunk c + 1's copy to the device runs while chunk c is
// computed and chunk c - 1 comes back: a GPU has separate engines for each direction and for
// compute. The host side of every copy is a HostArray (pinned on a GPU), which is what lets a
// copy run asynchronously at full speed.
//
//   overlap [--chunks N] [--chunk-mb M] [--repeat R]
//
// The CPU backend runs every call to completion in the calling thread (docs/guide.md, section 5),
// so on the CPU both schedules take about the same time; the results must match either way.
#include <porta/porta.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct Options {
  int chunks = 8;
  int chunk_mb = 16;
  int repeat = 4;  // compute passes per chunk: more makes the kernels' share larger
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--chunks"))
      o.chunks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chunk-mb"))
      o.chunk_mb = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat"))
      o.repeat = std::atoi(argv[i + 1]);
  }
  if (o.chunks < 1) o.chunks = 1;
  if (o.chunk_mb < 1) o.chunk_mb = 1;
  if (o.repeat < 1) o.repeat = 1;
  return o;
}

// y = exp(-x^2), then `repeat` - 1 times y = exp(-y^2): elementwise work on the device.
void compute(const porta::Array<float>& x, porta::Array<float>& y, int repeat, const porta::Stream& s) {
  porta::square(x, y, s);
  porta::neg(y, y, s);
  porta::exp(y, y, s);
  for (int r = 1; r < repeat; ++r) {
    porta::square(y, y, s);
    porta::neg(y, y, s);
    porta::exp(y, y, s);
  }
}

// Streams every chunk of `in` through the device into `out`, using the first `nstreams` streams,
// each with its own pair of device buffers. Returns milliseconds.
double pipeline(const std::vector<porta::HostArray<float>>& in, std::vector<porta::HostArray<float>>& out,
                std::vector<porta::Stream>& streams, std::vector<porta::Array<float>>& x,
                std::vector<porta::Array<float>>& y, int nstreams, int repeat) {
  const porta::Device dev = streams[0].device();
  porta::synchronize(dev);
  porta::Event start(dev), stop(dev);
  start.record(streams[0]);
  for (int k = 1; k < nstreams; ++k) streams[static_cast<std::size_t>(k)].wait(start);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t c = 0; c < in.size(); ++c) {
    // Work on one stream runs in order, so buffer k is reused only after its previous chunk is done.
    const std::size_t k = c % static_cast<std::size_t>(nstreams);
    porta::copy(in[c], x[k], streams[k]);
    compute(x[k], y[k], repeat, streams[k]);
    porta::copy(y[k], out[c], streams[k]);
  }
  for (int k = 1; k < nstreams; ++k) {
    porta::Event done(dev);
    done.record(streams[static_cast<std::size_t>(k)]);
    streams[0].wait(done);
  }
  stop.record(streams[0]);
  stop.synchronize();
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // GPU events time the device; a CPU "event" is a host timestamp, which is the same thing there.
  return dev.type == porta::DeviceType::cpu ? wall : porta::Event::elapsed_ms(start, stop);
}

std::size_t count_wrong(const std::vector<porta::HostArray<float>>& in, const std::vector<porta::HostArray<float>>& out,
                        int repeat) {
  std::size_t wrong = 0;
  for (std::size_t c = 0; c < in.size(); ++c)
    for (std::int64_t i = 0; i < in[c].size(); ++i) {
      double v = in[c][i];
      for (int r = 0; r < repeat; ++r) v = std::exp(-static_cast<double>(static_cast<float>(v * v)));
      // float exp is within a couple of ulps on every backend; the chain adds at most a few more.
      if (std::fabs(out[c][i] - v) > 1e-5 * std::fabs(v) + 1e-30) ++wrong;
    }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options opt = parse(argc, argv);
  const porta::Device dev = porta::default_device();
  const std::int64_t n = static_cast<std::int64_t>(opt.chunk_mb) * (1 << 20) / static_cast<std::int64_t>(sizeof(float));
  std::printf("overlap on %s: %d chunks of %d MiB, %d compute passes each\n", porta::describe(dev).c_str(), opt.chunks,
              opt.chunk_mb, opt.repeat);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> random(-2.0f, 2.0f);
  std::vector<porta::HostArray<float>> in, out1, out2;
  for (int c = 0; c < opt.chunks; ++c) {
    in.emplace_back(porta::Shape{n}, dev);  // pinned on a GPU
    out1.emplace_back(porta::Shape{n}, dev);
    out2.emplace_back(porta::Shape{n}, dev);
    for (float& v : in.back()) v = random(rng);
  }
  std::vector<porta::Stream> streams;
  std::vector<porta::Array<float>> x, y;
  for (int k = 0; k < 2; ++k) {
    streams.emplace_back(dev);
    x.emplace_back(porta::Shape{n}, dev);
    y.emplace_back(porta::Shape{n}, dev);
  }

  (void)pipeline(in, out1, streams, x, y, 2, opt.repeat);  // warm-up: first launches, page mappings
  const double one = pipeline(in, out1, streams, x, y, 1, opt.repeat);
  const double two = pipeline(in, out2, streams, x, y, 2, opt.repeat);
  const double gb = 2.0 * static_cast<double>(opt.chunks) * static_cast<double>(n) * sizeof(float) / 1e9;
  std::printf("  one stream:  %8.2f ms  (%6.1f GB/s through the device)\n", one, gb / one * 1e3);
  std::printf("  two streams: %8.2f ms  (%6.1f GB/s)  %.2fx\n", two, gb / two * 1e3, one / two);

  const std::size_t wrong1 = count_wrong(in, out1, opt.repeat), wrong2 = count_wrong(in, out2, opt.repeat);
  std::printf("  results: %zu wrong (one stream), %zu wrong (two streams)  %s\n", wrong1, wrong2,
              wrong1 + wrong2 == 0 ? "OK" : "WRONG");
  return wrong1 + wrong2 == 0 ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
