// The attention op's chosen plan against the naive three-kernel composition
// (scores into a B×H×S×Skv temporary, row softmax, P·V) and, on the CPU,
// against the two flash forms the heuristic chooses between, the one on
// f32x16 lines (impl 1) and the one on GEMM register tiles (impl 3), each
// where the heuristic picked the other; all kgen plans, measured in the same
// run on the same inputs in interleaved rounds (chosen, naive, other form,
// chosen, ...), at the op's bench shapes (B1 H8 S1024 D64 causal and not,
// D128 causal, H32 S1024 D128 causal, H32/Hkv8 S512 D128 causal, B8 H12 S128
// D64), 1 and 2 threads. Counters: GFLOP/s of each (4·visible pairs·D
// flops), ratio = naive time / chosen time, lines_ratio or tiles_ratio = that
// form's time / chosen time (> 1: chosen faster), of_peak = GFLOP/s over the
// in-run FMA peak (bench/fma_peak.h).
//
// attention/decode/...: one query row (B1 H32/Hkv8, Skv 2048, D128, causal
// and not), bandwidth-bound: GB/s of the K and V bytes against the in-run
// triad (ratio, bench/triad.h), inputs rotated through copies past the LLC
// so each run reads K and V from DRAM; vs_naive = the grouped naive form's
// time / the chosen one's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "bench/bench_util.h"
#include "bench/fma_peak.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "codegen/target.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/attention/strategy.h"

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
  // The other flash form: lines where the heuristic chose tiles, and tiles
  // where it chose anything else.
  const std::optional<ops::Variant> line_form = ops::attention_cpu_line_form(p, dev->caps());
  const bool chose_lines = line_form && fv.get("impl") == line_form->get("impl");
  const char* other_name = chose_lines ? "tiles" : "lines";
  std::optional<ops::Variant> ov = chose_lines ? ops::attention_cpu_tile_form(p, dev->caps()) : line_form;
  if (ov && *ov == fv) ov.reset();
  std::optional<ops::PreparedPlan> other;
  if (ov) other.emplace(ops::prepare(*dev, p, *ov));
  auto tens = ops::upload(*dev, ops::make_host_tensors(p, 7));
  run_ms(*dev, flash, tens);  // warm-up: page faults, pool start
  run_ms(*dev, naive, tens);
  if (other) run_ms(*dev, *other, tens);
  std::vector<double> f, n, l;
  for (auto _ : state) {
    double ms = run_ms(*dev, flash, tens);
    state.SetIterationTime(ms / 1e3);
    f.push_back(ms);
    n.push_back(run_ms(*dev, naive, tens));  // interleaved baselines
    if (other) l.push_back(run_ms(*dev, *other, tens));
  }
  const double flops = ops::op_for(p).flops(p);
  const double fm = median(f), nm = median(n);
  state.counters["GFLOP_per_s"] = flops / fm / 1e6;
  state.counters["naive_GFLOP_per_s"] = flops / nm / 1e6;
  state.counters["flash_ms"] = fm;
  state.counters["naive_ms"] = nm;
  state.counters["ratio"] = nm / fm;
  const double peak = fma_peak_gflops(threads);
  state.counters["peak_GFLOP_per_s"] = peak;
  state.counters["of_peak"] = flops / fm / 1e6 / peak;
  if (other) {
    const double lm = median(l);
    const std::string o = other_name;
    state.counters[o + "_GFLOP_per_s"] = flops / lm / 1e6;
    state.counters[o + "_ms"] = lm;
    state.counters[o + "_ratio"] = lm / fm;
  }
  state.SetLabel(p.str() + " [" + fv.str() + ", " + source + "]" + (other ? std::string(", ") + other_name + " [" + ov->str() + "]" : "") + ", " +
                 std::to_string(threads) + " thread(s)");
}

// A prepared plan over `copies` of the inputs, rotated through per run.
struct Rotated {
  ops::PreparedPlan pp;
  std::vector<ops::DeviceTensors> sets;
  size_t next = 0;
  Rotated(rt::Device& dev, const ops::Problem& p, const ops::Variant& v, int copies) : pp(ops::prepare(dev, p, v)) {
    for (int i = 0; i < copies; ++i) sets.push_back(ops::upload(dev, ops::make_host_tensors(p, 7 + i)));
  }
  double run(rt::Device& dev) { return run_once_s(dev, pp, sets[next++ % sets.size()]); }
};

void BM_AttentionDecode(benchmark::State& state, ops::Problem p) {
  const int threads = int(state.range(0));
  ops::register_all_ops();
  auto dev = cpu_device(threads);
  std::string source;
  const ops::Variant v = ops::choose_variant(*dev, p, &source);
  const double kv_bytes = 2.0 * 4.0 * double(p.dim(4)) * double(p.dim(5)) * double(p.dim(3));
  const uint64_t llc = codegen::cpu_caps().llc_bytes;
  const int copies = rotation_copies(kv_bytes, llc);
  Rotated ours(*dev, p, v, copies);
  const ops::Variant nv = ops::Variant{}.set("impl", 0).set("rg", p.dim(1) / p.dim(4));
  Rotated naive(*dev, p, nv, copies);
  ours.run(*dev);
  for (auto _ : state) state.SetIterationTime(ours.run(*dev));
  ratio_to_triad(state, [&] { return ours.run(*dev); }, kv_bytes, threads, 30, double(llc));
  std::vector<double> to, tn;
  for (int r = 0; r < 15; ++r) {
    to.push_back(ours.run(*dev));
    tn.push_back(naive.run(*dev));
  }
  state.counters["ms"] = median(to) * 1e3;
  state.counters["naive_ms"] = median(tn) * 1e3;
  state.counters["vs_naive"] = median(tn) / median(to);
  state.SetLabel(p.str() + " [" + v.str() + ", " + source + "], naive [" + nv.str() + "], " + std::to_string(threads) + " thread(s)");
}

// The sizes that differ from B1 H8 S1024 D64 (Hkv = H, Skv = S), as "d128/".
std::string shape_tag(const ops::Problem& p) {
  const int64_t b = p.dim(0), h = p.dim(1), s = p.dim(2), d = p.dim(3);
  const int64_t hkv = p.dims.size() > 4 ? p.dim(4) : h, skv = p.dims.size() > 5 ? p.dim(5) : s;
  std::string t;
  auto add = [&](const char* name, int64_t v, bool differs) {
    if (differs) t += name + std::to_string(v) + "/";
  };
  add("b", b, b != 1);
  add("h", h, h != 8);
  add("kv", hkv, hkv != h);
  add("s", s, s != 1024);
  add("skv", skv, skv != s);
  add("d", d, d != 64);
  return t;
}

}  // namespace

void register_attention_benchmarks() {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  if (!d) return;
  for (const auto& p : d->bench_problems)
    benchmark::RegisterBenchmark(("attention/flash_vs_naive/" + shape_tag(p) + "causal:" + std::to_string(p.attr("causal"))).c_str(),
                                 BM_AttentionFlashVsNaive, p)
        ->Arg(1)
        ->Arg(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  for (int causal : {0, 1}) {
    ops::Problem p;
    p.op = "attention";
    p.dims = {1, 32, 1, 128, 8, 2048};
    p.attrs["causal"] = causal;
    benchmark::RegisterBenchmark(("attention/decode/" + shape_tag(p) + "causal:" + std::to_string(causal)).c_str(), BM_AttentionDecode, p)
        ->Arg(1)
        ->Arg(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.2);
  }
}

}  // namespace kgen::bench
