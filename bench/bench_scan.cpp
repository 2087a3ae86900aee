// Scans against the STREAM triad (bench/triad.h) in bytes moved: a scan of n
// elements reads and writes n (8n bytes f32/i32), the triad 12n; both over
// the same n, interleaved round by round. ratio = scan GB/s / triad GB/s.
// The selective scan reports GFLOP/s and its ratio against the generic
// (scalar-state) kernel, interleaved the same way.
#include <benchmark/benchmark.h>


#include "bench/bench_util.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

namespace kgen::bench {

namespace {

void BM_SelectiveScan(benchmark::State& state, ops::Problem p) {
  const int threads = int(state.range(0));
  ops::register_all_ops();
  auto dev = cpu_device(threads);
  std::string source;
  ops::Variant v = ops::choose_variant(*dev, p, &source);
  auto pp = ops::prepare(*dev, p, v);
  auto base = ops::prepare(*dev, p, ops::Variant{}.set("impl", 0).set("wg", 1));
  auto tens = ops::upload(*dev, ops::make_host_tensors(p, 7));
  run_once_s(*dev, pp, tens);
  run_once_s(*dev, base, tens);
  std::vector<double> ours, gen;
  for (auto _ : state) {
    double s = run_once_s(*dev, pp, tens);
    state.SetIterationTime(s);
    ours.push_back(s);
    gen.push_back(run_once_s(*dev, base, tens));
  }
  const double flops = ops::op_for(p).flops(p);
  state.counters["GFLOP_per_s"] = flops / median(ours) / 1e9;
  state.counters["generic_GFLOP_per_s"] = flops / median(gen) / 1e9;
  state.counters["ratio"] = median(gen) / median(ours);
  state.SetLabel(p.str() + " [" + v.str() + ", " + source + "], " + std::to_string(threads) + " thread(s)");
}

}  // namespace

void register_scan_benchmarks() {
  ops::register_all_ops();
  if (const ops::OpDef* d = ops::find_op("scan"))
    for (const auto& p : d->bench_problems) {
      std::string shape;
      for (size_t i = 0; i < p.dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(p.dims[i]);
      benchmark::RegisterBenchmark(("scan/vs_triad/" + std::string(ir::scalar_name(p.dtype)) + "/" + shape).c_str(),
                                   op_vs_triad, p)
          ->Arg(1)
          ->Arg(2)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
  if (const ops::OpDef* d = ops::find_op("selective_scan"))
    for (const auto& p : d->bench_problems)
      benchmark::RegisterBenchmark("selective_scan/lines_vs_generic", BM_SelectiveScan, p)
          ->Arg(1)
          ->Arg(2)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
}

}  // namespace kgen::bench
