// SPDX-License-Identifier: Apache-2.0
// Trains PyTorch's two-layer classifier (784 -> 512 -> ReLU -> 10, cross-entropy, Adam) on
// synthetic data, on the default device. The network is in mlp.hpp.
//
//   ./mlp                          # 100 steps at batch 256; prints the loss, fails if it did not fall
//   ./mlp --steps 500 --batch 1024 --lr 1e-3
//   ./mlp --bench                  # batch 4096: median milliseconds per training step
//   python3 bench/peers/mlp_torch.py # the same in PyTorch, for comparison
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mlp.hpp"

namespace {

constexpr std::int64_t kIn = 784, kHidden = 512, kClasses = 10;
constexpr double kNoise = 4.0;  // per-coordinate noise around the class centres

struct Options {
  std::int64_t steps = -1;  // -1: 100, or 50 timed steps with --bench
  std::int64_t batch = -1;  // -1: 256, or 4096 with --bench
  double lr = 1e-3;
  bool bench = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--bench")) {
      o.bench = true;
    } else if (!std::strcmp(argv[i], "--steps") && has_value) {
      o.steps = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--batch") && has_value) {
      o.batch = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--lr") && has_value) {
      o.lr = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--steps N] [--batch B] [--lr LR] [--bench]\n", argv[0]);
      std::exit(2);
    }
  }
  if (o.steps < 0) o.steps = o.bench ? 50 : 100;
  if (o.batch < 0) o.batch = o.bench ? 4096 : 256;
  if (o.steps < 1 || o.batch < 1) {
    std::fprintf(stderr, "--steps and --batch must be positive\n");
    std::exit(2);
  }
  return o;
}

// One training step, as in PyTorch: forward, loss.backward(), optimizer.step(). Nothing here waits
// for the device, so on a GPU the host queues the whole step and moves on.
void train_step(mlp::Mlp<float>& net, const mlp::Batch<float>& b, const mlp::AdamOptions& adam) {
  net.forward(b.x);
  net.backward(b.x, b.y);
  net.step(adam);
}

// Median wall time of a training step, each step waited for (torch.cuda.synchronize() around it).
double bench(mlp::Mlp<float>& net, const std::vector<mlp::Batch<float>>& data, const Options& o,
             const mlp::AdamOptions& adam) {
  for (int i = 0; i < 5; ++i) train_step(net, data[i % data.size()], adam);  // warm-up: pools, BLAS handles
  porta::synchronize(net.dev);
  std::vector<double> ms;
  for (std::int64_t s = 0; s < o.steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    train_step(net, data[static_cast<std::size_t>(s) % data.size()], adam);
    porta::synchronize(net.dev);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const porta::Device dev = porta::default_device();
  std::printf("mlp on %s\n", porta::describe(dev).c_str());
  std::printf("%lld -> %lld -> ReLU -> %lld, batch %lld, %lld steps, Adam lr %g\n", (long long)kIn, (long long)kHidden,
              (long long)kClasses, (long long)o.batch, (long long)o.steps, o.lr);

  // A few fixed batches, cycled: enough to see the loss fall, small enough to stay on the device.
  const auto data = mlp::make_batches<float>(4, o.batch, kIn, kClasses, kNoise, dev);
  mlp::Mlp<float> net(kIn, kHidden, kClasses, dev);
  mlp::AdamOptions adam;
  adam.lr = o.lr;

  if (o.bench) {
    const double ms = bench(net, data, o, adam);
    // Forward: x W1^T, a1 W2^T; backward: dW2, da1, dW1 (no gradient for the input x).
    const double gflop = 2.0 * double(o.batch) * double(2 * kIn * kHidden + 3 * kHidden * kClasses) * 1e-9;
    std::printf("median %.3f ms per training step (%.0f GFLOP/s in the matrix products)\n", ms, gflop / ms * 1e3);
    std::printf("porta_ms_per_step=%.4f\n", ms);
    net.forward(data[0].x);
    const float loss = net.loss(data[0].y);
    std::printf("loss after %lld steps: %.4f\n", (long long)(o.steps + 5), loss);
    return std::isfinite(loss) ? 0 : 1;
  }

  // Train, printing the loss (which waits for the device) every few steps only.
  const std::int64_t every = std::max<std::int64_t>(1, o.steps / 10);
  float first = 0, last = 0;
  for (std::int64_t s = 0; s < o.steps; ++s) {
    const mlp::Batch<float>& b = data[static_cast<std::size_t>(s) % data.size()];
    net.forward(b.x);
    if (s % every == 0 || s == o.steps - 1) {
      last = net.loss(b.y);
      if (s == 0) first = last;
      const double acc = double(mlp::count_correct(net.logp, b.labels)) / double(o.batch);
      std::printf("step %4lld  loss %.4f  accuracy %.3f\n", (long long)s, last, acc);
    }
    net.backward(b.x, b.y);
    net.step(adam);
  }

  // Adam on separable data should at least halve the loss; a broken gradient does not.
  const bool ok = std::isfinite(last) && last < 0.5f * first;
  std::printf("loss %.4f -> %.4f: %s\n", first, last, ok ? "OK" : "WRONG (did not fall by half)");
  return ok ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
