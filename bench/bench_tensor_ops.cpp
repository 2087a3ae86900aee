// The tensor-op family and the row ops against the STREAM triad
// (bench/triad.h), and fused elementwise chains against the same chain run
// as one kernel per op. Every comparison is interleaved round by round in
// the same run (ours, baseline, ours, ...), so drift on this shared machine
// affects both sides alike.
//
//   tensor_ops/<problem>/<threads>: ratio = op GB/s / triad GB/s (triad over
//     as many floats as the op's largest tensor)
//   tensor_ops/fusion/<problem>/<threads>: ratio = fused / triad, plus
//     fused_vs_unfused = unfused time / fused time (> 1: fusion wins)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "bench/bench_util.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "ops/executor.h"
#include "ops/op.h"

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

void register_tensor_ops_benchmarks() {
  ops::register_all_ops();
  for (const char* name : {"ew_unary", "ew_binary", "ew_ternary", "ew_chain", "reduce", "transpose", "rope", "softmax",
                           "log_softmax", "rmsnorm", "layernorm"}) {
    const ops::OpDef* d = ops::find_op(name);
    if (!d) continue;
    for (const auto& p : d->bench_problems) {
      benchmark::RegisterBenchmark(("tensor_ops/" + bench_name(p)).c_str(), op_vs_triad, p)
          ->Arg(1)
          ->Arg(2)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.3);
      if (std::string(name) == "ew_chain")
        benchmark::RegisterBenchmark(("tensor_ops/fusion/" + bench_name(p)).c_str(), BM_ChainFusion, p)
            ->Arg(1)
            ->Arg(2)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
    }
  }
}

}  // namespace kgen::bench
