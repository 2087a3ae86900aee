// Memory-bound kernels against the STREAM-style triad measured in the same
// run. The ratio is computed from interleaved rounds (ours, triad, ours, ...)
// so that drift on this shared machine affects both sides alike.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "dsl/registry.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"

namespace kgen::bench {

namespace {

// 256 MiB per f32 array: several times the 260 MiB L3 this machine reports
// once two or three arrays are live, so both sides stream from DRAM.
constexpr int64_t kElems = int64_t(1) << 26;

void BM_Bandwidth(benchmark::State& state, std::string kernel_name) {
  const int threads = int(state.range(0));
  samples::register_all();
  ops::register_all();  // the op library's row kernels (softmax, norms)
  const dsl::KernelEntry* entry = dsl::find_kernel(kernel_name);
  if (!entry) {
    state.SkipWithError(("kernel not registered: " + kernel_name).c_str());
    return;
  }
  ir::Kernel k = entry->build();
  ir::Workload w = entry->workload(kElems);
  rt::DeviceOptions opt;
  opt.threads = threads;
  auto dev = rt::create_device("cpu", opt);
  auto compiled = dev->compile(k);
  rt::HostData host = rt::make_inputs(k, w, 1);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::LaunchArgs args;
  args.dims = w.dims;
  args.scalars = w.scalars;
  for (auto& h : host.buffers) {
    bufs.push_back(dev->alloc(h.size()));
    bufs.back()->upload(h.data(), h.size());
    args.buffers.push_back(bufs.back().get());
  }
  auto launch = [&] {
    auto t0 = std::chrono::steady_clock::now();
    dev->launch(*compiled, args);
    dev->synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  launch();  // warm-up: first touch of the pages, thread pool start
  for (auto _ : state) state.SetIterationTime(launch());
  state.SetBytesProcessed(int64_t(w.bytes) * state.iterations());

  // Baseline in the same run, interleaved with ours.
  std::vector<float> a(kElems), b(kElems, 1.0f), c(kElems, 2.0f);
  run_triad(a.data(), b.data(), c.data(), 3.0f, kElems, threads);
  std::vector<double> ours, triad;
  for (int r = 0; r < 11; ++r) {
    ours.push_back(steady(launch));
    triad.push_back(steady([&] { return run_triad(a.data(), b.data(), c.data(), 3.0f, kElems, threads); }));
  }
  double ours_gbs = w.bytes / median(ours) / 1e9;
  double triad_gbs = triad_bytes(kElems) / median(triad) / 1e9;
  state.counters["GB_per_s"] = ours_gbs;
  state.counters["triad_GB_per_s"] = triad_gbs;
  state.counters["ratio"] = ours_gbs / triad_gbs;
  state.SetLabel(std::to_string(threads) + " thread(s), n=2^26");
}

}  // namespace

void register_bandwidth_benchmarks() {
  samples::register_all();
  ops::register_all();  // the op library's row kernels (softmax, norms)
  for (const auto& e : dsl::registered_kernels()) {
    // Memory-bound elementwise kernels: those whose workload reports bytes but no flops-heavy work.
    if (e.tags.find("bandwidth") == std::string::npos) continue;
    benchmark::RegisterBenchmark(("bandwidth/" + e.name).c_str(), BM_Bandwidth, e.name)
        ->Arg(1)
        ->Arg(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.3);
  }
}

}  // namespace kgen::bench
