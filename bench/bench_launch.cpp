// Launch overhead: an empty kernel over 1 and `threads` groups, launch +
// synchronize per iteration. This is the floor under every small op.
#include <benchmark/benchmark.h>

#include "bench/suite_registry.h"
#include "dsl/dsl.h"
#include "runtimes/runtime.h"

namespace kgen::bench {

namespace {

ir::Kernel empty_kernel() {
  using namespace kgen::dsl;
  return kernel("bench_empty", [](KernelBuilder& kb) {
    auto out = kb.buffer("out", f32, ir::Access::Write);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { out[i] = 1.0f; });
  });
}

void BM_Launch(benchmark::State& state) {
  int threads = int(state.range(0));
  uint32_t groups = uint32_t(state.range(1));
  rt::DeviceOptions opt;
  opt.threads = threads;
  auto dev = rt::create_device("cpu", opt);
  auto compiled = dev->compile(empty_kernel());
  auto buf = dev->alloc(4);
  rt::LaunchArgs args;
  args.dims.grid = {groups, 1, 1};
  args.dims.workgroup = {1, 1, 1};
  args.buffers = {buf.get()};
  args.scalars = {ir::scalar_slot<uint32_t>(0)};  // n = 0: no work-item does anything
  for (auto _ : state) {
    dev->launch(*compiled, args);
    dev->synchronize();
  }
  state.SetLabel(std::to_string(threads) + " thread(s), " + std::to_string(groups) + " group(s)");
}

}  // namespace

void register_launch_benchmarks() {
  benchmark::RegisterBenchmark("launch/empty", BM_Launch)
      ->Args({1, 1})
      ->Args({2, 2})
      ->Args({2, 64})
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace kgen::bench
