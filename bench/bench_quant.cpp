// The quantized-weight family against the STREAM triad, measured in the same
// run, interleaved (ours ×3, triad, ours ×3, ...):
//   quant/gemv/<format>/1x4096x4096/threads:<t>   qmatmul (LLM decode GEMV), every GGML format,
//       default attrs (xq=1: X quantized to int8 blocks, byte dot products);
//       GB/s counts the packed weight bytes read once; the weights rotate
//       through copies past twice the L3 (at least 384 MiB), so every run
//       streams from DRAM, timed after runs of itself that evict the triad's
//       dirty lines (ratio_to_triad).
//   quant/gemv/<q4_0|q8_0|q4_K|q6_K>_r16/...   repacked with rows interleaved by 16
//       (qmatmul layout=16, made at load time: the same bytes, reordered).
//   quant/gemv_xf32/<format>/...   the same with xq=0 (exact f32 activations).
//   quant/gemm/<format>/64x4096x4096/threads:<t>   prefill on GGML rows (M = 64), every format
//       (and M = 512 for Q8_0, Q4_0, Q4_K, Q6_K),
//       against the faster vendor f32 SGEMM of the same product (X·Wᵀ with W
//       dequantized), measured in the same run: GFLOP/s and their ratio.
//   quant/dequantize/<format>/4096x4096/threads:<t>   bytes = packed + f32 out.
//   quant/quantize/<q8_0|q4_0>/4096x4096/threads:<t>   f32 in + packed out.
// Ours is the op as dispatch runs it (tuned variant if the database has one,
// else the heuristic); the label says which variant ran.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "bench/bench_util.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/quant/formats.h"

namespace kgen::bench {

namespace {

using ops::quant::QFormat;

struct QuantOp {
  std::unique_ptr<rt::Device> dev;
  ops::PreparedPlan pp;
  std::vector<ops::DeviceTensors> sets;
  std::string variant;
  size_t next = 0;
  // `copies` of the inputs, rotated through.
  QuantOp(const ops::Problem& p, int threads, int copies) {
    rt::DeviceOptions o;
    o.threads = unsigned(threads);
    dev = rt::create_device("cpu", o);
    ops::register_all_ops();
    std::string src;
    ops::Variant v = ops::choose_variant(*dev, p, &src);
    variant = v.str() + " (" + src + ")";
    pp = ops::prepare(*dev, p, v);
    ops::HostTensors h = ops::make_host_tensors(p, 7);
    for (int i = 0; i < copies; ++i) sets.push_back(ops::upload(*dev, h));
  }
  double run() {
    auto& io = sets[next++ % sets.size()];
    auto t0 = Clock::now();
    ops::execute(*dev, pp, io.io());
    dev->synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
};

// Times `ours` interleaved with the triad (ratio_to_triad).
void against_triad(benchmark::State& state, QuantOp& ours, double bytes, int threads) {
  ours.run();
  for (auto _ : state) state.SetIterationTime(ours.run());
  ratio_to_triad(state, [&] { return ours.run(); }, bytes, threads, 60, double(codegen::cpu_caps().llc_bytes));
  state.SetLabel(ours.variant);
}

// Copies past twice the LLC: every run in ours' steady state streams from DRAM.
int beyond_l3(double input_bytes) { return rotation_copies(input_bytes, codegen::cpu_caps().llc_bytes); }

// layout: qmatmul's attr (16: Q4_0 rows interleaved by 16, the same bytes
// repacked at load time).
void BM_QGemv(benchmark::State& state, QFormat f, int64_t n, int64_t k, int64_t xq, int64_t layout) {
  const int threads = int(state.range(0));
  ops::Problem p{"qmatmul", {1, n, k}, ir::ScalarKind::F32, {{"format", int64_t(f)}, {"xq", xq}, {"layout", layout}}};
  double wbytes = double(layout ? ops::quant::r16_bytes(f, n, k) : ops::quant::packed_bytes(f, n, k));
  QuantOp ours(p, threads, beyond_l3(wbytes));
  against_triad(state, ours, wbytes, threads);
}

void BM_QGemm(benchmark::State& state, QFormat f, int64_t m, int64_t n, int64_t k) {
  const int threads = int(state.range(0));
  ops::Problem p{"qmatmul", {m, n, k}, ir::ScalarKind::F32, {{"format", int64_t(f)}}};
  QuantOp ours(p, threads, 1);
  std::vector<float> a = random_floats(size_t(m * k), 3), b = random_floats(size_t(n * k), 5), c(size_t(m * n));
  set_vendor_threads(threads);
  auto ob = [&] { return seconds([&] { openblas_sgemm(true, m, n, k, a.data(), b.data(), c.data()); }); };
  auto dn = [&] { return seconds([&] { onednn_sgemm(true, m, n, k, a.data(), b.data(), c.data()); }); };
  ours.run();
  ob();
  dn();
  for (auto _ : state) state.SetIterationTime(ours.run());
  std::vector<double> t_ours, t_ob, t_dn;
  for (int r = 0; r < 15; ++r) {
    t_ours.push_back(steady([&] { return ours.run(); }));
    t_ob.push_back(steady(ob));
    t_dn.push_back(steady(dn));
  }
  const double flop = 2.0 * double(m) * double(n) * double(k);
  const double g_ours = flop / median(t_ours) / 1e9, g_ob = flop / median(t_ob) / 1e9, g_dn = flop / median(t_dn) / 1e9;
  state.counters["GFLOP_per_s"] = g_ours;
  state.counters["openblas_GFLOP_per_s"] = g_ob;
  state.counters["onednn_GFLOP_per_s"] = g_dn;
  state.counters["ratio"] = g_ours / std::max(g_ob, g_dn);
  state.SetLabel(ours.variant);
}

// dequantize (packed -> f32) or quantize (f32 -> packed): the same bytes.
void BM_Convert(benchmark::State& state, const char* op, QFormat f, int64_t rows, int64_t k) {
  const int threads = int(state.range(0));
  ops::Problem p{op, {rows, k}, ir::ScalarKind::F32, {{"format", int64_t(f)}}};
  double bytes = double(ops::quant::packed_bytes(f, rows, k)) + 4.0 * double(rows * k);
  QuantOp ours(p, threads, beyond_l3(bytes));
  against_triad(state, ours, bytes, threads);
}

}  // namespace

void register_quant_benchmarks() {
  // The common formats first (Q8_0, Q4_0, Q4_K, Q6_K), then the other GGML formats.
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K, QFormat::Q4_1, QFormat::Q5_0,
                    QFormat::Q5_1, QFormat::Q2_K, QFormat::Q3_K, QFormat::Q5_K}) {
    std::string name = std::string("quant/gemv/") + ops::quant::info(f).name + "/1x4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_QGemv, f, 4096, 4096, 1, 0)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K}) {
    std::string name = std::string("quant/gemv/") + ops::quant::info(f).name + "_r16/1x4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_QGemv, f, 4096, 4096, 1, 16)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0}) {
    std::string name = std::string("quant/gemv_xf32/") + ops::quant::info(f).name + "/1x4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_QGemv, f, 4096, 4096, 0, 0)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K, QFormat::Q4_1, QFormat::Q5_0,
                    QFormat::Q5_1, QFormat::Q5_K, QFormat::Q2_K, QFormat::Q3_K}) {
    std::string name = std::string("quant/gemm/") + ops::quant::info(f).name + "/64x4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_QGemm, f, 64, 4096, 4096)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  // A longer prompt chunk (llama.cpp's default batch is 512 tokens).
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K}) {
    std::string name = std::string("quant/gemm/") + ops::quant::info(f).name + "/512x4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_QGemm, f, 512, 4096, 4096)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_K}) {
    std::string name = std::string("quant/dequantize/") + ops::quant::info(f).name + "/4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_Convert, "dequantize", f, 4096, 4096)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0}) {
    std::string name = std::string("quant/quantize/") + ops::quant::info(f).name + "/4096x4096";
    benchmark::RegisterBenchmark(name.c_str(), BM_Convert, "quantize", f, 4096, 4096)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
}

}  // namespace kgen::bench
