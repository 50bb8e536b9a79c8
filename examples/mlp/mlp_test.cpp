// SPDX-License-Identifier: Apache-2.0
// Tests of mlp.hpp on the default device:
//   1. the loss of a forward pass equals a double-precision host computation;
//   2. backward() matches central finite differences of the loss, in double precision, for every
//      parameter tensor of a tiny network (6 -> 5 -> 3, batch 4);
//   3. one Adam step matches torch.optim.Adam's formula computed on the host;
//   4. training on the synthetic data at least halves the loss, and the accuracy from porta::argmax
//      agrees with an argmax on the host.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/check.hpp"
#include "mlp.hpp"

namespace {

using std::int64_t;
using Net = mlp::Mlp<double>;

void report(const char* what, double err, double tol) {
  const bool ok = err <= tol;  // false for NaN
  if (!ok) ++example::failures;
  std::printf("  %-44s %.3g (tolerance %.0e)  %s\n", what, err, tol, ok ? "OK" : "WRONG");
}

// Largest |a - b| relative to the largest |b| (1 when b is all zeros).
double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return a.size() != b.size() ? INFINITY : diff / (scale > 0 ? scale : 1);
}

// The tiny network's loss on the host in double precision, straight from the definition:
// softmax cross-entropy of relu(x W1^T + b1) W2^T + b2.
double host_loss(Net& net, const std::vector<double>& x, const std::vector<double>& y, int64_t batch) {
  const auto w1 = net.w1.value.to_vector(), b1 = net.b1.value.to_vector();
  const auto w2 = net.w2.value.to_vector(), b2 = net.b2.value.to_vector();
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<double> a(net.hidden), z(net.out);
    for (int64_t h = 0; h < net.hidden; ++h) {
      double s = b1[h];
      for (int64_t j = 0; j < net.in; ++j) s += x[i * net.in + j] * w1[h * net.in + j];
      a[h] = std::max(s, 0.0);
    }
    for (int64_t c = 0; c < net.out; ++c) {
      double s = b2[c];
      for (int64_t h = 0; h < net.hidden; ++h) s += a[h] * w2[c * net.hidden + h];
      z[c] = s;
    }
    const double zmax = *std::max_element(z.begin(), z.end());
    double sum_exp = 0;
    for (double v : z) sum_exp += std::exp(v - zmax);
    for (int64_t c = 0; c < net.out; ++c) total -= y[i * net.out + c] * (z[c] - zmax - std::log(sum_exp));
  }
  return total / double(batch);
}

void test_loss_and_gradients(porta::Device dev) {
  std::printf("tiny network 6 -> 5 -> 3, batch 4, double precision\n");
  const int64_t batch = 4;
  Net net(6, 5, 3, dev, /*seed=*/7);
  auto data = mlp::make_batches<double>(1, batch, net.in, net.out, 1.0, dev, /*seed=*/11);
  const mlp::Batch<double>& b = data[0];
  const auto hx = b.x.to_vector(), hy = b.y.to_vector();

  net.forward(b.x);
  const double loss = net.loss(b.y);
  report("loss vs host reference (relative)", std::abs(loss - host_loss(net, hx, hy, batch)) / loss, 1e-12);

  net.backward(b.x, b.y);
  // Central differences: (L(p + h) - L(p - h)) / 2h has error O(h^2) from truncation and
  // O(eps / h) from rounding; h = 1e-6 keeps both near 1e-10 in double precision.
  const double h = 1e-6;
  const char* names[] = {"dL/dW1 vs finite differences", "dL/db1 vs finite differences", "dL/dW2 vs finite differences",
                         "dL/db2 vs finite differences"};
  int k = 0;
  for (mlp::Param<double>* p : net.params()) {
    std::vector<double> value = p->value.to_vector(), numeric(value.size());
    for (std::size_t j = 0; j < value.size(); ++j) {
      const double saved = value[j];
      value[j] = saved + h;
      p->value.copy_from_host(value.data());
      net.forward(b.x);
      const double up = net.loss(b.y);
      value[j] = saved - h;
      p->value.copy_from_host(value.data());
      net.forward(b.x);
      const double down = net.loss(b.y);
      value[j] = saved;
      numeric[j] = (up - down) / (2 * h);
    }
    p->value.copy_from_host(value.data());
    report(names[k++], relative_error(p->grad.to_vector(), numeric), 1e-6);
  }
}

void test_adam(porta::Device dev) {
  std::printf("Adam, two steps, double precision\n");
  Net net(6, 5, 3, dev, /*seed=*/3);
  auto data = mlp::make_batches<double>(1, 4, net.in, net.out, 1.0, dev, /*seed=*/5);
  mlp::AdamOptions o;
  o.lr = 0.01;
  double err = 0;
  for (int t = 1; t <= 2; ++t) {  // the second step starts from nonzero moments
    net.forward(data[0].x);
    net.backward(data[0].x, data[0].y);
    std::vector<std::vector<double>> expect;
    for (mlp::Param<double>* p : net.params()) {
      auto w = p->value.to_vector(), g = p->grad.to_vector(), m = p->m.to_vector(), v = p->v.to_vector();
      // torch.optim.Adam (amsgrad=False, weight_decay=0)
      for (std::size_t i = 0; i < w.size(); ++i) {
        m[i] = o.beta1 * m[i] + (1 - o.beta1) * g[i];
        v[i] = o.beta2 * v[i] + (1 - o.beta2) * g[i] * g[i];
        const double step_size = o.lr / (1 - std::pow(o.beta1, t));
        const double denom = std::sqrt(v[i]) / std::sqrt(1 - std::pow(o.beta2, t)) + o.eps;
        w[i] -= step_size * m[i] / denom;
      }
      expect.push_back(w);
    }
    net.step(o);
    for (std::size_t k = 0; k < expect.size(); ++k)
      err = std::max(err, relative_error(net.params()[k]->value.to_vector(), expect[k]));
  }
  report("parameters vs host Adam (relative)", err, 1e-12);
}

void test_training(porta::Device dev) {
  std::printf("training 784 -> 64 -> 10, batch 256, float\n");
  const int64_t batch = 256;
  mlp::Mlp<float> net(784, 64, 10, dev);
  const auto data = mlp::make_batches<float>(2, batch, net.in, net.out, 4.0, dev);
  float first = 0, last = 0;
  for (int s = 0; s < 30; ++s) {
    const mlp::Batch<float>& b = data[s % data.size()];
    net.forward(b.x);
    last = net.loss(b.y);
    if (s == 0) first = last;
    net.backward(b.x, b.y);
    net.step();
  }
  std::printf("  loss %.4f -> %.4f\n", first, last);
  report("final / initial loss", last / first, 0.5);

  // count_correct (porta::argmax along the class axis) against an argmax on the host.
  const mlp::Batch<float>& b = data[0];
  net.forward(b.x);
  const auto logp = net.logp.to_vector();
  const auto labels = b.labels.to_vector();
  int64_t correct = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const auto row = logp.begin() + i * net.out;
    correct += std::max_element(row, row + net.out) - row == labels[i];
  }
  const int64_t got = mlp::count_correct(net.logp, b.labels);
  std::printf("  accuracy %.3f\n", double(got) / double(batch));
  report("count_correct vs host argmax (difference)", double(std::abs(got - correct)), 0);
}

}  // namespace

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("mlp_test on %s\n", porta::describe(dev).c_str());
  test_loss_and_gradients(dev);
  test_adam(dev);
  test_training(dev);
  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
