// SPDX-License-Identifier: Apache-2.0
// PyTorch's two-layer classifier, written out by hand with porta's built-in algorithms:
//
//   model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
//   loss = F.cross_entropy(model(x), labels)
//   loss.backward()
//   optimizer.step()          # torch.optim.Adam(model.parameters(), lr=1e-3)
//
// Forward and backward are matrix products (porta::gemm with transposes), broadcasts and axis
// reductions: plain C++ that runs on any device. Adam is a user kernel (porta::parallel_for),
// so a file that includes this header must be compiled as CUDA/HIP to run it on a GPU
// (CMake: porta_add_kernels(<target> SOURCES <file>)).
//
// Templated on the element type: float to train, double for the finite-difference gradient test.
#pragma once

#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace mlp {

using std::int64_t;

// torch.optim.Adam's defaults.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

// One parameter tensor with its gradient and Adam's two moment estimates (all the same shape).
template <class T>
struct Param {
  porta::Array<T> value, grad, m, v;

  Param(std::vector<T> init, porta::Shape shape, porta::Device dev)
      : value(porta::Array<T>::from(init, shape, dev)),
        grad(porta::zeros<T>(shape, dev)),
        m(porta::zeros<T>(shape, dev)),
        v(porta::zeros<T>(shape, dev)) {}
};

// One Adam update of p from p.grad, in one pass over the elements as torch.optim.Adam(fused=True)
// does, instead of the half-dozen maps (and temporaries) that built-in ops would take.
// `t` counts the steps taken, this one included (bias correction).
template <class T>
void adam_update(Param<T>& p, const AdamOptions& o, int64_t t) {
  // Scalars are computed on the host once; the lambda captures them by value.
  const T beta1 = T(o.beta1), beta2 = T(o.beta2), eps = T(o.eps);
  const T step_size = T(o.lr / (1 - std::pow(o.beta1, double(t))));
  const T bias_correction2_sqrt = T(std::sqrt(1 - std::pow(o.beta2, double(t))));
  // Capture views, never the Arrays (or `this`): the lambda is copied to the device.
  porta::View<T> w = p.value.view(), m = p.m.view(), v = p.v.view();
  porta::View<const T> g = std::as_const(p.grad).view();
  porta::parallel_for(p.value.device(), p.value.size(), PORTA_KERNEL((int64_t i) {
                        const T gi = g[i];
                        const T mi = beta1 * m[i] + (1 - beta1) * gi;       // first moment
                        const T vi = beta2 * v[i] + (1 - beta2) * gi * gi;  // second moment
                        m[i] = mi;
                        v[i] = vi;
                        w[i] -= step_size * mi / (std::sqrt(vi) / bias_correction2_sqrt + eps);
                      }));
}

// How many rows of `scores` (logits, or log-probabilities: same order) have their largest entry at
// the row's label: porta::argmax along the class axis (the first of equal scores, as
// torch.argmax), then a count of the matches.
template <class T>
int64_t count_correct(const porta::Array<T>& scores, const porta::Array<std::int32_t>& labels) {
  const porta::Array<std::int64_t> predicted = porta::argmax(scores, 1);
  porta::View<const std::int64_t> p = predicted.view();
  porta::View<const std::int32_t> l = labels.view();
  return porta::transform_reduce(scores.device(), predicted.size(), int64_t(0), porta::plus{},
                                 PORTA_KERNEL((int64_t i)->int64_t { return p[i] == l[i] ? 1 : 0; }));
}

template <class T>
struct Mlp {
  int64_t in, hidden, out;
  porta::Device dev;
  // nn.Linear's layout: weights are (out_features x in_features), so a layer is y = x W^T + b.
  Param<T> w1, b1, w2, b2;
  int64_t steps = 0;  // Adam steps taken

  // Saved by forward() for loss() and backward(), as autograd would save them.
  porta::Array<T> z1;    // batch x hidden, before the ReLU
  porta::Array<T> a1;    // batch x hidden, after the ReLU
  porta::Array<T> logp;  // batch x out, log-softmax of the logits

  // nn.Linear's default initialisation: weights and biases uniform in +-1/sqrt(fan_in).
  Mlp(int64_t in_features, int64_t hidden_features, int64_t out_features, porta::Device device, unsigned seed = 0)
      : in(in_features),
        hidden(hidden_features),
        out(out_features),
        dev(device),
        w1(uniform(hidden * in, in, seed + 1), {hidden, in}, dev),
        b1(uniform(hidden, in, seed + 2), {hidden}, dev),
        w2(uniform(out * hidden, hidden, seed + 3), {out, hidden}, dev),
        b2(uniform(out, hidden, seed + 4), {out}, dev) {}

  std::array<Param<T>*, 4> params() { return {&w1, &b1, &w2, &b2}; }

  // x: batch x in. Keeps the activations that backward() needs; the logits are logp's rows up to
  // a constant, so they need not be kept.
  void forward(const porta::Array<T>& x) {
    const int64_t batch = x.dim(0);
    z1 = porta::empty<T>({batch, hidden}, dev);
    porta::gemm(T(1), x, false, w1.value, /*trans_b=*/true, T(0), z1);  // z1 = x W1^T
    porta::add(z1, b1.value, z1);                                       // + b1, broadcast over the rows
    a1 = porta::relu(z1);
    auto z2 = porta::empty<T>({batch, out}, dev);
    porta::gemm(T(1), a1, false, w2.value, /*trans_b=*/true, T(0), z2);  // logits = a1 W2^T
    porta::add(z2, b2.value, z2);

    // Row-wise log-softmax: subtract each row's max so that exp cannot overflow. An axis
    // reduction drops the axis ({batch}); reshaping to {batch, 1} (NumPy's keepdims=True) makes
    // it a column that broadcasts across each row.
    auto shifted = z2 - porta::max(z2, 1).reshaped({batch, 1});
    auto log_sum_exp = porta::log(porta::sum(porta::exp(shifted), 1)).reshaped({batch, 1});
    logp = shifted - log_sum_exp;
  }

  // Mean cross-entropy against one-hot targets y (batch x out): -sum(y * logp) / batch.
  // One-hot targets turn F.cross_entropy's gather of the label's column into a dot product.
  // Returns a host value, so it synchronizes: training loops need not call it every step.
  T loss(const porta::Array<T>& y) const { return -porta::dot(y, logp) / T(y.dim(0)); }

  // Gradients of loss() for the batch of the last forward(): what loss.backward() computes.
  void backward(const porta::Array<T>& x, const porta::Array<T>& y) {
    const T batch = T(x.dim(0));
    auto dz2 = (porta::exp(logp) - y) / batch;                           // softmax - y, averaged
    porta::gemm(T(1), dz2, /*trans_a=*/true, a1, false, T(0), w2.grad);  // dW2 = dz2^T a1
    b2.grad = porta::sum(dz2, 0);                                        // db2 = column sums of dz2
    auto da1 = porta::matmul(dz2, w2.value);                             // back through the second layer
    auto dz1 = porta::relu_grad(da1, z1);                                // and through the ReLU
    porta::gemm(T(1), dz1, /*trans_a=*/true, x, false, T(0), w1.grad);   // dW1 = dz1^T x
    b1.grad = porta::sum(dz1, 0);
  }

  // optimizer.step()
  void step(const AdamOptions& options = {}) {
    ++steps;
    for (Param<T>* p : params()) adam_update(*p, options, steps);
  }

 private:
  static std::vector<T> uniform(int64_t n, int64_t fan_in, unsigned seed) {
    std::mt19937 rng(seed);
    const double bound = 1.0 / std::sqrt(double(fan_in));
    std::uniform_real_distribution<double> dist(-bound, bound);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& e : v) e = T(dist(rng));
    return v;
  }
};

// A batch of synthetic data: inputs, one-hot targets and the labels themselves.
template <class T>
struct Batch {
  porta::Array<T> x;                  // batch x in
  porta::Array<T> y;                  // batch x classes, one-hot
  porta::Array<std::int32_t> labels;  // batch
};

// `count` batches of a classification problem that a network can learn quickly: each class has a
// random centre in `in`-D space, and each sample is its class's centre plus Gaussian noise.
// Generated once on the host and copied to the device, so training measures compute, not transfers.
template <class T>
std::vector<Batch<T>> make_batches(int64_t count, int64_t batch, int64_t in, int64_t classes, double noise,
                                   porta::Device dev, unsigned seed = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> centres(static_cast<std::size_t>(classes * in));
  for (double& c : centres) c = normal(rng);
  std::uniform_int_distribution<std::int32_t> label_of(0, std::int32_t(classes - 1));

  std::vector<Batch<T>> out;
  for (int64_t b = 0; b < count; ++b) {
    std::vector<T> x(static_cast<std::size_t>(batch * in)), y(static_cast<std::size_t>(batch * classes), T(0));
    std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) {
      const std::int32_t k = label_of(rng);
      labels[i] = k;
      y[i * classes + k] = T(1);
      for (int64_t j = 0; j < in; ++j) x[i * in + j] = T(centres[k * in + j] + noise * normal(rng));
    }
    out.push_back({porta::Array<T>::from(x, {batch, in}, dev), porta::Array<T>::from(y, {batch, classes}, dev),
                   porta::Array<std::int32_t>::from(labels, dev)});
  }
  return out;
}

}  // namespace mlp
