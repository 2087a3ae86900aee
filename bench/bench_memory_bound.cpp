// The memory-bound op families (elementwise, rowwise, reduce, layout) and rope against the STREAM triad
// (bench/triad.h), and fused elementwise chains against the same chain run
// as one kernel per op. Every comparison is interleaved round by round in
// the same run (ours, baseline, ours, ...), so drift on this shared machine
// affects both sides alike.
//
//   <family>/<problem>/<threads>: ratio = op GB/s / triad GB/s (triad over
//     as many floats as the op's largest tensor)
//   elementwise/fusion/<problem>/<threads>: ratio = fused / triad, plus
//     fused_vs_unfused = unfused time / fused time (> 1: fusion wins)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "bench/bench_util.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

namespace kgen::bench {

namespace {

void BM_ChainFusion(benchmark::State& state, ops::Problem p) {
  const int threads = int(state.range(0));
  ops::register_all_ops();
  auto dev = cpu_device(threads);
  ops::Variant v = ops::op_for(p).heuristic(p, dev->caps());
  auto fused = ops::prepare(*dev, p, v);
  auto unfused = ops::prepare(*dev, p, ops::Variant(v).set("impl", 1));
  auto tens = ops::upload(*dev, ops::make_host_tensors(p, 7));
  const size_t n = largest_tensor_elems(p);
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  run_once_s(*dev, fused, tens);
  run_once_s(*dev, unfused, tens);
  run_triad(a.data(), b.data(), c.data(), 3.0f, n, threads);
  std::vector<double> ours, unf, triad;
  for (auto _ : state) {
    double s = steady([&] { return run_once_s(*dev, fused, tens); });
    state.SetIterationTime(s);
    ours.push_back(s);
    unf.push_back(steady([&] { return run_once_s(*dev, unfused, tens); }));
    triad.push_back(steady([&] { return run_triad(a.data(), b.data(), c.data(), 3.0f, n, threads); }));
  }
  const double bytes = ops::op_for(p).bytes(p);
  const double gbs = bytes / median(ours) / 1e9, tgbs = triad_bytes(n) / median(triad) / 1e9;
  state.counters["GB_per_s"] = gbs;
  state.counters["triad_GB_per_s"] = tgbs;
  state.counters["ratio"] = gbs / tgbs;
  state.counters["fused_vs_unfused"] = median(unf) / median(ours);
  state.counters["unfused_steps"] = double(unfused.plan.steps.size());
  state.SetLabel(p.str() + " [" + v.str() + "], " + std::to_string(threads) + " thread(s)");
}

std::string bench_name(const ops::Problem& p) {
  std::string s = p.op + "/";
  for (size_t i = 0; i < p.dims.size(); ++i) s += (i ? "x" : "") + std::to_string(p.dims[i]);
  s += "/" + std::string(ir::scalar_name(p.dtype));
  for (const auto& [k, v] : p.attrs) s += "," + k + "=" + std::to_string(v);
  return s;
}

}  // namespace

// Named <family>/<op>/<dims>/<dtype>,<attrs> (e.g. rowwise/softmax/4096x4096/f32):
// every op of the memory-bound families, and rope, against the triad.
void register_memory_bound_benchmarks() {
  ops::register_all_ops();
  for (const auto& d : ops::registered_ops()) {
    const bool memory_bound_family = d.family == "elementwise" || d.family == "rowwise" || d.family == "reduce" ||
                                     d.family == "layout" || d.name == "rope";
    if (!memory_bound_family) continue;
    for (const auto& p : d.bench_problems) {
      benchmark::RegisterBenchmark((d.family + "/" + bench_name(p)).c_str(), op_vs_triad, p)
          ->Arg(1)
          ->Arg(2)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.3);
      if (d.name == "ew_chain")
        benchmark::RegisterBenchmark((d.family + "/fusion/" + bench_name(p)).c_str(), BM_ChainFusion, p)
            ->Arg(1)
            ->Arg(2)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
    }
  }
}

}  // namespace kgen::bench
