// Cold JIT compile latency per registered kernel: every iteration compiles
// through a fresh, memory-only kernel cache, so no cache of ours can answer;
// the whole pipeline (verify, IR passes, emit, in-process Clang + LLVM, ORC
// link) runs each time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/suite_registry.h"
#include "dsl/registry.h"
#include "runtimes/kernel_cache.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"

namespace kgen::bench {

namespace {

void BM_ColdCompile(benchmark::State& state, const dsl::KernelEntry& entry) {
  ir::Kernel k = entry.build();
  std::vector<double> ms;
  for (auto _ : state) {
    state.PauseTiming();
    rt::KernelCache cold_cache(rt::CacheConfig{.disk = false, .dir = {}});
    rt::DeviceOptions opt;
    opt.cache = &cold_cache;
    auto dev = rt::create_device("cpu", opt);
    state.ResumeTiming();
    auto t0 = std::chrono::steady_clock::now();
    rt::CompileOptions co;
    co.opt_level = int(state.range(0));
    auto compiled = dev->compile(k, co);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(compiled.get());
    state.SetIterationTime(dt);
    ms.push_back(dt * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  state.counters["median_ms"] = ms.empty() ? 0 : ms[ms.size() / 2];
  state.counters["min_ms"] = ms.empty() ? 0 : ms.front();
}

}  // namespace

void register_compile_benchmarks() {
  samples::register_all();
  // A copy of each entry: other suites register more kernels afterwards, and
  // the registry's vector reallocates (a pointer into it dangled: segfault).
  for (const dsl::KernelEntry& e : dsl::registered_kernels()) {
    benchmark::RegisterBenchmark(("compile/cold/" + e.name).c_str(),
                                 [entry = e](benchmark::State& state) { BM_ColdCompile(state, entry); })
        ->ArgName("O")
        ->Arg(3)
        ->Arg(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  }
}

}  // namespace kgen::bench
