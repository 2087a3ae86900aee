// The matmul family against vendor libraries measured in the same run,
// interleaved (ours, OpenBLAS, oneDNN, ours, ...) so drift on this shared
// machine affects every side alike:
//   matmul/sgemm/<M>x<N>x<K>/threads:<t>   vs cblas_sgemm and dnnl_sgemm
//   matmul/sgemm_bt/<M>x<N>x<K>/threads:<t>  the same with B as N×K (trans_b:
//                                          LLM weights), few rows of A
//   matmul/sgemm_kn/<M>x<N>x<K>/threads:<t>  few rows of A against a K×N B
//   matmul/gemv[_bf16]/1x4096x4096/threads:<t>  (trans_b=1) vs the STREAM triad,
//                                          bytes = weights read once, inputs
//                                          rotated through copies past twice the L3
//   matmul/gemv_odd/<bt|kn>/1x<N>x<K>/threads:<t>  the same off whole lines:
//                                          Bᵀ rows of odd K, K×N rows of odd N
//   matmul/bf16/<M>x<N>x<K>/threads:<t>    bf16 A, Bᵀ (f32 C) vs oneDNN's bf16
//                                          matmul primitive on the same buffers;
//                                          also ours widening to f32 (bf2=0)
//   gated_mlp/bf16[_h]/<T>x<D>x<F>/threads:<t>  bf16 weights (_h: h_bf16=1, H
//                                          rounded to bf16) vs oneDNN's three bf16
//                                          matmuls alone (a lower bound of the
//                                          unfused bf16 path), and vs our f32 op
//   gated_mlp/decode[_bf16]/1x<D>x<F>/threads:<t>  one token (the composed form)
//                                          vs the triad, bytes = the three weights
//   matmul/sgemm_prec1/<M>x<N>x<K>/threads:<t>  f32 at prec=1 (bf16x3 terms on
//                                          AMX tiles) vs the f32 vendor SGEMMs;
//                                          err_vs_onednn: max |ours - oneDNN| / rms
//   gated_mlp/prec1/<T>x<D>x<F>/threads:<t>  the same for the gated MLP vs the
//                                          f32 unfused path below
//   gated_mlp/<T>x<D>x<F>/threads:<t>      vs the unfused path: 3 vendor SGEMMs
//                                          (the faster vendor) + a SiLU kernel +
//                                          a product kernel (our f32x16 line
//                                          kernels: the fastest we have)
// Ours is the op as dispatch runs it (tuned variant if the database has one,
// else the heuristic); the label says which variant ran.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <tuple>
#include <vector>

#include "bench/bench_util.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "bench/triad.h"
#include "dsl/dsl.h"
#include "ops/core/executor.h"
#include "ops/common/fast_exp.h"
#include "ops/core/op.h"

namespace kgen::bench {

namespace {

// An op prepared with the variant dispatch would choose, with device tensors.
struct OurOp {
  std::unique_ptr<rt::Device> dev;
  ops::PreparedPlan pp;
  std::vector<ops::DeviceTensors> sets;
  std::string variant;
  size_t next = 0;
  // `forced`: run this variant instead of the dispatched one.
  OurOp(const ops::Problem& p, int threads, int copies = 1, const ops::Variant* forced = nullptr)
      : dev(cpu_device(threads)) {
    ops::register_all_ops();
    std::string src = "forced";
    ops::Variant v = forced ? *forced : ops::choose_variant(*dev, p, &src);
    variant = v.str() + " (" + src + ")";
    pp = ops::prepare(*dev, p, v);
    for (int i = 0; i < copies; ++i) sets.push_back(ops::upload(*dev, ops::make_host_tensors(p, 7 + i)));
  }
  double run() {
    auto& io = sets[next++ % sets.size()];
    return seconds([&] {
      ops::execute(*dev, pp, io.io());
      dev->synchronize();
    });
  }
};

// max |ours - theirs| over rms(theirs): what prec=1|2 (bf16 terms) costs
// against the vendor's f32 result.
double rel_err_vs(const float* ours, const float* theirs, size_t n) {
  double ss = 0, worst = 0;
  for (size_t i = 0; i < n; ++i) ss += double(theirs[i]) * theirs[i];
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(ours[i]) - theirs[i]));
  return worst / std::sqrt(ss / double(std::max<size_t>(n, 1)));
}

void BM_Sgemm(benchmark::State& state, int64_t m, int64_t n, int64_t k, bool tb, int64_t prec) {
  const int threads = int(state.range(0));
  ops::Problem p;
  p.op = "matmul";
  p.dims = {m, n, k};
  if (tb) p.attrs["trans_b"] = 1;
  if (prec) p.attrs["prec"] = prec;
  OurOp ours(p, threads);
  // Every side reads the same A and B (our device buffers are host memory on
  // the CPU): each run then follows one that touched the same inputs, so no
  // side starts with colder caches than another. (With separate copies ours
  // always followed oneDNN's run over other buffers, and read 10-15% slower.)
  auto& io = ours.sets[0];
  const float* a = static_cast<const float*>(io.bufs[0]->host_ptr());
  const float* b = static_cast<const float*>(io.bufs[1]->host_ptr());
  std::vector<float> c(size_t(m * n));
  set_vendor_threads(threads);
  auto ob = [&] { return seconds([&] { openblas_sgemm(tb, m, n, k, a, b, c.data()); }); };
  auto dn = [&] { return seconds([&] { onednn_sgemm(tb, m, n, k, a, b, c.data()); }); };
  ours.run();
  ob();
  dn();
  for (auto _ : state) state.SetIterationTime(ours.run());
  std::vector<double> t_ours, t_ob, t_dn;
  const int rounds = m * n * k >= (int64_t(1) << 32) ? 5 : 11;
  for (int r = 0; r < rounds; ++r) {
    t_ours.push_back(ours.run());
    t_ob.push_back(ob());
    t_dn.push_back(dn());
  }
  const double flop = 2.0 * double(m) * double(n) * double(k);
  double g_ours = flop / median(t_ours) / 1e9, g_ob = flop / median(t_ob) / 1e9, g_dn = flop / median(t_dn) / 1e9;
  state.counters["GFLOP_per_s"] = g_ours;
  state.counters["openblas_GFLOP_per_s"] = g_ob;
  state.counters["onednn_GFLOP_per_s"] = g_dn;
  state.counters["ratio"] = g_ours / std::max(g_ob, g_dn);
  if (prec) state.counters["err_vs_onednn"] = rel_err_vs(static_cast<const float*>(io.bufs[2]->host_ptr()), c.data(), c.size());
  state.SetLabel(ours.variant);
}

// bf16 (f16) A (M×K) and B (N×K, trans_b) into f32 C. Ours as dispatched
// (AMX tiles, or bf16 pairs on vdpbf16ps, where the host has them; f16 as
// four exact bf16 terms on the tiles) against oneDNN's bf16 (f16) matmul on
// the same buffers (AMX too where present), interleaved; also our widening
// GEMM (the heuristic as without tiles and the pair dot product: converted
// to f32 while packing).
void BM_Bf16Gemm(benchmark::State& state, int64_t m, int64_t n, int64_t k, ir::ScalarKind dt) {
  const int threads = int(state.range(0));
  ops::Problem p;
  p.op = "matmul";
  p.dims = {m, n, k};
  p.dtype = dt;
  p.attrs["trans_b"] = 1;
  OurOp ours(p, threads);
  auto caps = ours.dev->caps();
  caps.bf16_dot = false;
  caps.matrix_tiles = false;  // the widened f32 GEMM, not AMX tiles
  const ops::Variant wide_v = ops::find_op("matmul")->heuristic(p, caps);
  OurOp wide(p, threads, 1, &wide_v);
  auto& io = ours.sets[0];
  std::vector<float> c(size_t(m * n));
  set_vendor_threads(threads);
  OnednnBf16Matmul dn(m, n, k, io.bufs[0]->host_ptr(), io.bufs[1]->host_ptr(), c.data(), dt == ir::ScalarKind::F16 ? dnnl_f16 : dnnl_bf16);
  auto vendor = [&] { return seconds([&] { dn.run(); }); };
  ours.run();
  wide.run();
  if (dn.ok()) vendor();
  for (auto _ : state) state.SetIterationTime(ours.run());
  std::vector<double> t_ours, t_wide, t_dn;
  for (int r = 0; r < 11; ++r) {
    t_ours.push_back(ours.run());
    t_wide.push_back(wide.run());
    if (dn.ok()) t_dn.push_back(vendor());
  }
  const double flop = 2.0 * double(m) * double(n) * double(k);
  const double g_ours = flop / median(t_ours) / 1e9, g_wide = flop / median(t_wide) / 1e9;
  state.counters["GFLOP_per_s"] = g_ours;
  state.counters["widened_GFLOP_per_s"] = g_wide;
  state.counters["ratio_vs_widened"] = g_ours / g_wide;
  if (dn.ok()) {
    const double g_dn = flop / median(t_dn) / 1e9;
    state.counters[dt == ir::ScalarKind::F16 ? "onednn_f16_GFLOP_per_s" : "onednn_bf16_GFLOP_per_s"] = g_dn;
    state.counters["ratio"] = g_ours / g_dn;
    state.SetLabel(ours.variant + "; oneDNN " + dn.impl());
  } else {
    state.SetLabel(ours.variant + "; oneDNN " + ir::Type(dt).str() + " matmul unavailable: no ratio");
  }
}

// Problem p as dispatched (reading `bytes` of weights per run, rotating
// copies of its inputs past twice the LLC) against the triad, interleaved:
// GB/s of weights read, and their ratio; ours timed after runs of itself
// that evict the triad's lines (ratio_to_triad).
void weights_vs_triad(benchmark::State& state, const ops::Problem& p, double bytes) {
  const int threads = int(state.range(0));
  const uint64_t llc = codegen::cpu_caps().llc_bytes;
  OurOp ours(p, threads, rotation_copies(bytes, llc));
  ours.run();
  for (auto _ : state) state.SetIterationTime(ours.run());
  ratio_to_triad(state, [&] { return ours.run(); }, bytes, threads, 30, double(llc));
  state.SetLabel(ours.variant);
}

void BM_Gemv(benchmark::State& state, int64_t n, int64_t k, ir::ScalarKind dt) {
  ops::Problem p;
  p.op = "matmul";
  p.dims = {1, n, k};
  p.dtype = dt;
  p.attrs["trans_b"] = 1;
  weights_vs_triad(state, p, double(ir::Type(dt).bytes()) * double(n) * double(k));
}

// The GEMVs off whole lines (a masked last line per row): Bᵀ with K % 16
// != 0, and a K×N B with N % 16 != 0 (GPT-2's vocabulary head); f32 weights
// rotated through copies past the L3.
void BM_GemvOdd(benchmark::State& state, int64_t n, int64_t k, bool trans_b) {
  ops::Problem p;
  p.op = "matmul";
  p.dims = {1, n, k};
  p.attrs["trans_b"] = trans_b ? 1 : 0;
  const double bytes = 4.0 * double(n) * double(k);
  weights_vs_triad(state, p, bytes);
}

// One token through a gated MLP (decode): G, U and Dn read once each.
void BM_GatedDecode(benchmark::State& state, int64_t d, int64_t f, ir::ScalarKind dt) {
  ops::Problem p;
  p.op = "gated_mlp";
  p.dims = {1, d, f};
  p.dtype = dt;
  weights_vs_triad(state, p, 3.0 * double(ir::Type(dt).bytes()) * double(d) * double(f));
}

// The unfused baseline's elementwise kernels, on f32x16 lines.
ir::Kernel silu_lines() {
  using namespace dsl;
  return kernel("bench_silu_l16", [](KernelBuilder& kb) {
    auto x = kb.inout("x", line(f32, 16));
    auto n = kb.scalar("n", u32);
    Value i = global_id(0);
    if_(i < n, [&] {
      Value v = x[i];
      x[i] = v / (ops::fast_exp(-v) + 1.0f);
    });
  });
}
ir::Kernel mul_lines() {
  using namespace dsl;
  return kernel("bench_mul_l16", [](KernelBuilder& kb) {
    auto x = kb.inout("x", line(f32, 16));
    auto y = kb.input("y", line(f32, 16));
    auto n = kb.scalar("n", u32);
    Value i = global_id(0);
    if_(i < n, [&] { x[i] = x[i] * y[i]; });
  });
}

void BM_GatedMlp(benchmark::State& state, int64_t t, int64_t d, int64_t f, int64_t prec) {
  const int threads = int(state.range(0));
  ops::Problem p;
  p.op = "gated_mlp";
  p.dims = {t, d, f};
  if (prec) p.attrs["prec"] = prec;
  OurOp ours(p, threads);
  // Unfused: hg = X·Gᵀ, hu = X·Uᵀ, hg = silu(hg), hg *= hu, Y = hg·Dnᵀ.
  // The unfused path reads our op's own inputs (host memory on the CPU), as
  // in BM_Sgemm: no side starts from colder caches.
  auto in = [&](int i) { return static_cast<const float*>(ours.sets[0].bufs[size_t(i)]->host_ptr()); };
  const float *x = in(0), *g = in(1), *u = in(2), *dn = in(3);
  const int64_t fl = (f + 15) / 16 * 16;  // whole lines for the elementwise kernels
  std::vector<float> y(size_t(t * d));
  auto hg = ours.dev->alloc(size_t(t * fl) * 4), hu = ours.dev->alloc(size_t(t * fl) * 4);
  float* hgp = static_cast<float*>(hg->host_ptr());
  float* hup = static_cast<float*>(hu->host_ptr());
  if (!hgp || !hup || f % 16) {
    state.SkipWithError("needs host-visible CPU buffers and F % 16 == 0");
    return;
  }
  auto k_silu = ours.dev->compile(silu_lines()), k_mul = ours.dev->compile(mul_lines());
  const uint32_t lines = uint32_t(t * f / 16);
  rt::LaunchArgs a_silu, a_mul;
  a_silu.dims.grid = {(lines + 255) / 256, 1, 1};
  a_silu.dims.workgroup = {256, 1, 1};
  a_silu.buffers = {hg.get()};
  a_silu.scalars = {ir::scalar_slot(lines)};
  a_mul.dims = a_silu.dims;
  a_mul.buffers = {hg.get(), hu.get()};
  a_mul.scalars = a_silu.scalars;
  set_vendor_threads(threads);
  using Gemm = void (*)(bool, int64_t, int64_t, int64_t, const float*, const float*, float*);
  auto unfused = [&](Gemm gemm) {
    return seconds([&] {
      gemm(true, t, f, d, x, g, hgp);
      gemm(true, t, f, d, x, u, hup);
      ours.dev->launch(*k_silu, a_silu);
      ours.dev->launch(*k_mul, a_mul);
      ours.dev->synchronize();
      gemm(true, t, d, f, hgp, dn, y.data());
    });
  };
  ours.run();
  unfused(openblas_sgemm);
  unfused(onednn_sgemm);
  for (auto _ : state) state.SetIterationTime(ours.run());
  std::vector<double> t_ours, t_ob, t_dn;
  const int rounds = t * d * f >= (int64_t(1) << 32) ? 3 : 7;
  for (int r = 0; r < rounds; ++r) {
    t_ours.push_back(ours.run());
    t_ob.push_back(unfused(openblas_sgemm));
    t_dn.push_back(unfused(onednn_sgemm));
  }
  const double flop = 6.0 * double(t) * double(d) * double(f);
  double g_ours = flop / median(t_ours) / 1e9, g_ob = flop / median(t_ob) / 1e9, g_dn = flop / median(t_dn) / 1e9;
  state.counters["GFLOP_per_s"] = g_ours;
  state.counters["unfused_openblas_GFLOP_per_s"] = g_ob;
  state.counters["unfused_onednn_GFLOP_per_s"] = g_dn;
  state.counters["ratio"] = g_ours / std::max(g_ob, g_dn);
  if (prec) state.counters["err_vs_onednn"] = rel_err_vs(static_cast<const float*>(ours.sets[0].bufs[4]->host_ptr()), y.data(), y.size());
  state.SetLabel(ours.variant);
}

// bf16 weights: ours (the [G;U] GEMM on bf16 pairs where the host has
// vdpbf16ps; H in f32, or with h_bf16 rounded to bf16 and the down GEMM on
// pairs too) against a lower bound of the unfused bf16 path: the three
// products alone as oneDNN bf16 matmuls (X·Gᵀ, X·Uᵀ, and H already in bf16
// times Dnᵀ; no SiLU or product passes, no rounding of H counted), and
// against our own op on f32 weights of the same shape.
void BM_GatedMlpBf16(benchmark::State& state, int64_t t, int64_t d, int64_t f, bool h_bf16) {
  const int threads = int(state.range(0));
  ops::Problem p;
  p.op = "gated_mlp";
  p.dims = {t, d, f};
  p.dtype = ir::ScalarKind::BF16;
  if (h_bf16) p.attrs["h_bf16"] = 1;
  OurOp ours(p, threads);
  ops::Problem p32 = p;
  p32.dtype = ir::ScalarKind::F32;
  p32.attrs.clear();
  OurOp f32op(p32, threads);
  auto in = [&](int i) { return ours.sets[0].bufs[size_t(i)]->host_ptr(); };
  std::vector<uint16_t> h(size_t(t * f), 0x3f00);  // bf16 0.5
  std::vector<float> cg(size_t(t * f)), cu(size_t(t * f)), y(size_t(t * d));
  set_vendor_threads(threads);
  OnednnBf16Matmul gate(t, f, d, in(0), in(1), cg.data()), up(t, f, d, in(0), in(2), cu.data()),
      down(t, d, f, h.data(), in(3), y.data());
  if (!gate.ok() || !up.ok() || !down.ok()) {
    state.SkipWithError("oneDNN bf16 matmul unavailable");
    return;
  }
  auto vendor = [&] {
    return seconds([&] {
      gate.run();
      up.run();
      down.run();
    });
  };
  ours.run();
  f32op.run();
  vendor();
  for (auto _ : state) state.SetIterationTime(ours.run());
  std::vector<double> t_ours, t_f32, t_dn;
  for (int r = 0; r < 3; ++r) {
    t_ours.push_back(ours.run());
    t_f32.push_back(f32op.run());
    t_dn.push_back(vendor());
  }
  const double flop = 6.0 * double(t) * double(d) * double(f);
  const double g_ours = flop / median(t_ours) / 1e9, g_f32 = flop / median(t_f32) / 1e9, g_dn = flop / median(t_dn) / 1e9;
  state.counters["GFLOP_per_s"] = g_ours;
  state.counters["f32_op_GFLOP_per_s"] = g_f32;
  state.counters["onednn_bf16_gemms_GFLOP_per_s"] = g_dn;
  state.counters["ratio"] = g_ours / g_dn;
  state.counters["ratio_vs_f32_op"] = g_ours / g_f32;
  state.SetLabel(ours.variant + "; oneDNN " + gate.impl());
}

std::string shape(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

}  // namespace

void register_matmul_benchmarks() {
  for (int64_t s : {1024, 2048})
    benchmark::RegisterBenchmark(("matmul/sgemm/" + shape(s, s, s)).c_str(), BM_Sgemm, s, s, s, false, int64_t(0))
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  // Off the powers of two: edge tiles on every side (1023 x 1025 x 1027), a
  // ViT-B MLP's 197 tokens, skinny N (96 columns; 16: a LoRA rank) and skinny
  // M. The square shapes are the reference bar; these show whether it holds
  // where tiles do not divide.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1000, 1000, 1000}, {1023, 1025, 1027}, {197, 3072, 768},
                         {4096, 96, 1024}, {2048, 16, 4096}, {96, 4096, 1024}})
    benchmark::RegisterBenchmark(("matmul/sgemm_odd/" + shape(m, n, k)).c_str(), BM_Sgemm, m, n, k, false, int64_t(0))
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  // A prompt's or a decode batch's rows against a 7B model's up projection.
  for (int64_t m : {16, 64, 256})
    benchmark::RegisterBenchmark(("matmul/sgemm_bt/" + shape(m, 11008, 4096)).c_str(), BM_Sgemm, m, 11008, 4096, true, int64_t(0))
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  // ... and against a K×N B (ONNX MatMul's weight layout).
  for (int64_t m : {16, 64})
    benchmark::RegisterBenchmark(("matmul/sgemm_kn/" + shape(m, 11008, 4096)).c_str(), BM_Sgemm, m, 11008, 4096, false, int64_t(0))
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int64_t s : {1024, 2048})
    benchmark::RegisterBenchmark(("matmul/bf16/" + shape(s, s, s)).c_str(), BM_Bf16Gemm, s, s, s, ir::ScalarKind::BF16)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  // f16 (ratio_vs_widened: against our f32-widening GEMM, f16's form without the bf16 terms).
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1024, 1024, 1024}, {2048, 2048, 2048}, {2048, 1024, 512}})
    benchmark::RegisterBenchmark(("matmul/f16/" + shape(m, n, k)).c_str(), BM_Bf16Gemm, m, n, k, ir::ScalarKind::F16)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  benchmark::RegisterBenchmark("matmul/gemv/1x4096x4096", BM_Gemv, 4096, 4096, ir::ScalarKind::F32)
      ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  benchmark::RegisterBenchmark("matmul/gemv_bf16/1x4096x4096", BM_Gemv, 4096, 4096, ir::ScalarKind::BF16)
      ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (auto [n, k, bt] : {std::tuple{4096, 4095, true}, std::tuple{4095, 4096, false}, std::tuple{50257, 768, false}})
    benchmark::RegisterBenchmark(("matmul/gemv_odd/" + std::string(bt ? "bt/" : "kn/") + shape(1, n, k)).c_str(), BM_GemvOdd, n, k, bt)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::BF16})
    benchmark::RegisterBenchmark(dt == ir::ScalarKind::F32 ? "gated_mlp/decode/1x1024x11008" : "gated_mlp/decode_bf16/1x1024x11008",
                                 BM_GatedDecode, 1024, 11008, dt)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  benchmark::RegisterBenchmark("gated_mlp/256x1024x11008", BM_GatedMlp, 256, 1024, 11008, int64_t(0))
      ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  for (bool h : {false, true})
    benchmark::RegisterBenchmark(h ? "gated_mlp/bf16_h/256x1024x11008" : "gated_mlp/bf16/256x1024x11008", BM_GatedMlpBf16,
                                 256, 1024, 11008, h)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  benchmark::RegisterBenchmark("gated_mlp/2048x1024x11008", BM_GatedMlp, 2048, 1024, 11008, int64_t(0))
      ->ArgName("threads")->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);
  // f32 with prec=1 ("high": bf16x3 terms on AMX tiles, ~2^-16 per product)
  // against the same f32 vendor baselines; err_vs_onednn is the price.
  for (int64_t s : {1024, 2048})
    benchmark::RegisterBenchmark(("matmul/sgemm_prec1/" + shape(s, s, s)).c_str(), BM_Sgemm, s, s, s, false, int64_t(1))
        ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  benchmark::RegisterBenchmark("gated_mlp/prec1/2048x1024x11008", BM_GatedMlp, 2048, 1024, 11008, int64_t(1))
      ->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);
}

}  // namespace kgen::bench
