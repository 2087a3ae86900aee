// Flash attention against the naive three-kernel composition (scores into a
// B×H×S×Skv temporary, row softmax, P·V), both kgen plans, measured in the
// same run on the same inputs in interleaved rounds (flash, naive, flash,
// ...), at B1 H8 S1024 D64, causal and not, and D128
// causal (llama's head size), 1 and 2 threads. Counters: GFLOP/s of both
// (4·visible pairs·D flops), ratio = naive time / flash time (> 1: flash
// faster).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "bench/bench_util.h"
#include "bench/suite_registry.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

namespace kgen::bench {

namespace {

double run_ms(rt::Device& dev, ops::PreparedPlan& pp, const ops::DeviceTensors& t) {
  auto t0 = std::chrono::steady_clock::now();
  ops::execute(dev, pp, t.io());
  dev.synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void BM_AttentionFlashVsNaive(benchmark::State& state, ops::Problem p) {
  const int threads = int(state.range(0));
  ops::register_all_ops();
  rt::DeviceOptions o;
  o.threads = unsigned(threads);
  auto dev = rt::create_device("cpu", o);
  std::string source;
  ops::Variant fv = ops::choose_variant(*dev, p, &source);
  auto flash = ops::prepare(*dev, p, fv);
  auto naive = ops::prepare(*dev, p, ops::Variant{}.set("impl", 0));
  auto tens = ops::upload(*dev, ops::make_host_tensors(p, 7));
  run_ms(*dev, flash, tens);  // warm-up: page faults, pool start
  run_ms(*dev, naive, tens);
  std::vector<double> f, n;
  for (auto _ : state) {
    double ms = run_ms(*dev, flash, tens);
    state.SetIterationTime(ms / 1e3);
    f.push_back(ms);
    n.push_back(run_ms(*dev, naive, tens));  // interleaved baseline
  }
  const double flops = ops::op_for(p).flops(p);
  const double fm = median(f), nm = median(n);
  state.counters["GFLOP_per_s"] = flops / fm / 1e6;
  state.counters["naive_GFLOP_per_s"] = flops / nm / 1e6;
  state.counters["flash_ms"] = fm;
  state.counters["naive_ms"] = nm;
  state.counters["ratio"] = nm / fm;
  state.SetLabel(p.str() + " [" + fv.str() + ", " + source + "], " + std::to_string(threads) + " thread(s)");
}

}  // namespace

void register_attention_benchmarks() {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  if (!d) return;
  for (const auto& p : d->bench_problems)
    benchmark::RegisterBenchmark(("attention/flash_vs_naive/" + (p.dim(3) != 64 ? "d" + std::to_string(p.dim(3)) + "/" : std::string()) +
                                  "causal:" + std::to_string(p.attr("causal")))
                                     .c_str(),
                                 BM_AttentionFlashVsNaive, p)
        ->Arg(1)
        ->Arg(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
}

}  // namespace kgen::bench
