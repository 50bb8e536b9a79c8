// SPDX-License-Identifier: Apache-2.0
// Small calls: what the host pays for a GPU call that does almost nothing. Included by
// cuda_bench.cu; group "small" (scripts/bench.sh --ops small), or "latency" with the other cases.
//
//   latency_map f32, 1 element, host wall-clock time per call, each call waited for:
//     porta       porta::map(stream, out, x + 1, x) and the stream's synchronize (a PORTA_LAMBDA)
//     porta-functor  the same with a functor (nvcc's host side of a PORTA_LAMBDA is a heap-held
//                 wrapper; docs/guide.md, user kernels)
//     kernel      an empty kernel <<<1, 1>>> and cudaStreamSynchronize: the floor of any launch
//     kernel-map  a hand kernel out[0] = x[0] + 1 and cudaStreamSynchronize
//     paired      porta-functor, kernel and kernel-map in turn, call by call, in one loop;
//                 counters porta_us, kernel_us, hand_us, over_us (porta - kernel) and over_hand_us
//                 (porta - kernel-map: the host's share alone, without the element's load and
//                 store). Cases timed one after the other drift apart on a shared machine
//                 (identical calls differed by up to 0.7 us between cases on the H200);
//                 alternating calls see the same machine.
//   Target: a bare launch + 0.5 us; over_hand_us holds porta to the hand kernel that
//   does the same work, over_us to an empty kernel, which does none.
//
// The sum of 2^10 floats with its value on the host is latency_sum (cuda_bench.cu), which this
// group registers too; its target is PyTorch's x.sum().item() on the same machine (16.5 us on the
// H200), beside CUB's DeviceReduce::Sum with a copy to pinned memory and a wait.
#pragma once

namespace porta_bench_cuda {

__global__ void empty_kernel() {}
__global__ void add_one_kernel(const float* x, float* out) {
  out[0] = x[0] + 1.0f;
}

struct AddOne {
  PORTA_HOST_DEVICE float operator()(float a) const { return a + 1.0f; }
};

struct MapOne {
  porta::Array<float> x, out;
  DeviceBuffer<float> raw_x, raw_out;
};

MapOne& map_one(const std::string& id) {
  return pb::tenant<MapOne>(id, [] {
    MapOne m;
    const porta::Stream& s = *gpu().porta_stream;
    const float* h = pb::host_random<float>(1, 0);
    m.x = porta::Array<float>::from(h, porta::Shape{1}, kGpu, s);
    m.out = porta::full<float>(porta::Shape{1}, 0.0f, kGpu, s);
    m.raw_x = DeviceBuffer<float>(1, h);
    m.raw_out = DeviceBuffer<float>(1);
    s.synchronize();
    return m;
  });
}

void register_small_calls() {
  if (!(pb::wanted("latency_map", "latency") || pb::wanted("latency_map", "small"))) return;
  const auto add = [](const std::string& impl, std::function<void(benchmark::State&, const std::string&)> fn) {
    pb::add("latency_map", "f32", impl, 1, std::move(fn))->UseRealTime()->Unit(benchmark::kMicrosecond);
  };
  add("porta", [](benchmark::State& st, const std::string& id) {
    require_porta(st);
    MapOne& m = map_one(id);
    const porta::Stream& s = *gpu().porta_stream;
    host_loop(st, [&] {
      porta::map(
          s, m.out, PORTA_LAMBDA(float a) { return a + 1.0f; }, m.x);
      s.synchronize();
    });
  });
  add("porta-functor", [](benchmark::State& st, const std::string& id) {
    require_porta(st);
    MapOne& m = map_one(id);
    const porta::Stream& s = *gpu().porta_stream;
    host_loop(st, [&] {
      porta::map(s, m.out, AddOne{}, m.x);
      s.synchronize();
    });
  });
  add("kernel", [](benchmark::State& st, const std::string&) {
    const cudaStream_t s = gpu().stream;
    host_loop(st, [&] {
      empty_kernel<<<1, 1, 0, s>>>();
      PB_CUDA(cudaGetLastError());
      PB_CUDA(cudaStreamSynchronize(s));
    });
  });
  add("paired", [](benchmark::State& st, const std::string& id) {
    require_porta(st);
    MapOne& m = map_one(id);
    const porta::Stream& s = *gpu().porta_stream;
    const cudaStream_t cs = gpu().stream;
    using Clock = std::chrono::steady_clock;
    double porta_s = 0, kernel_s = 0, hand_s = 0;
    std::int64_t calls = 0;
    porta::map(s, m.out, AddOne{}, m.x);
    s.synchronize();
    for (auto _ : st) {
      const auto t0 = Clock::now();
      porta::map(s, m.out, AddOne{}, m.x);
      s.synchronize();
      const auto t1 = Clock::now();
      empty_kernel<<<1, 1, 0, cs>>>();
      PB_CUDA(cudaGetLastError());
      PB_CUDA(cudaStreamSynchronize(cs));
      const auto t2 = Clock::now();
      add_one_kernel<<<1, 1, 0, cs>>>(m.raw_x.p, m.raw_out.p);
      PB_CUDA(cudaGetLastError());
      PB_CUDA(cudaStreamSynchronize(cs));
      const auto t3 = Clock::now();
      porta_s += std::chrono::duration<double>(t1 - t0).count();
      kernel_s += std::chrono::duration<double>(t2 - t1).count();
      hand_s += std::chrono::duration<double>(t3 - t2).count();
      ++calls;
    }
    const double n = static_cast<double>(calls > 0 ? calls : 1);
    st.counters["porta_us"] = porta_s / n * 1e6;
    st.counters["kernel_us"] = kernel_s / n * 1e6;
    st.counters["hand_us"] = hand_s / n * 1e6;
    st.counters["over_us"] = (porta_s - kernel_s) / n * 1e6;
    st.counters["over_hand_us"] = (porta_s - hand_s) / n * 1e6;
  });
  add("kernel-map", [](benchmark::State& st, const std::string& id) {
    MapOne& m = map_one(id);
    const cudaStream_t s = gpu().stream;
    host_loop(st, [&] {
      add_one_kernel<<<1, 1, 0, s>>>(m.raw_x.p, m.raw_out.p);
      PB_CUDA(cudaGetLastError());
      PB_CUDA(cudaStreamSynchronize(s));
    });
  });
}

}  // namespace porta_bench_cuda
