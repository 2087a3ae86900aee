// Cold JIT compile latency per registered kernel: every iteration compiles a
// freshly renamed copy, so no cache of ours can answer; the whole in-process
// Clang + LLVM + ORC pipeline runs each time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/suite_registry.h"
#include "dsl/registry.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"

namespace kgen::bench {

namespace {

void BM_ColdCompile(benchmark::State& state, const dsl::KernelEntry* entry) {
  auto dev = rt::create_device("cpu");
  ir::Kernel base = entry->build();
  std::vector<double> ms;
  static int counter = 0;
  for (auto _ : state) {
    ir::Kernel k = base;
    k.name = base.name + "_cold" + std::to_string(counter++);
    auto t0 = std::chrono::steady_clock::now();
    auto compiled = dev->compile(k);
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
  for (const auto& e : dsl::registered_kernels()) {
    benchmark::RegisterBenchmark(("compile/cold/" + e.name).c_str(), BM_ColdCompile, &e)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  }
}

}  // namespace kgen::bench
