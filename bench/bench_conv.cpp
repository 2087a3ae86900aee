// The conv family against its baselines, measured in the same run,
// interleaved (ours, baseline with OpenBLAS, baseline with oneDNN, oneDNN's
// convolution, ours, ...), each timed after an untimed run of itself (steady
// state, warm caches):
//   conv2d/<N>x<C>x<H>x<W>x<OC>x<KH>x<KW>[/<attrs>]/threads:<t>
// (attrs: those other than the padding, e.g. groups=144,stride_h=2,...).
// The main baseline, per image (groups == 1): a host im2col (plain C++ at
// -O3, channels over the threads, zero/copy/zero row segments) into a K ×
// OH·OW column matrix, then y[n] (OC × OH·OW) = w (OC × K) · col with
// cblas_sgemm or dnnl_sgemm. Also oneDNN's convolution primitive
// (onednn_conv.h), the faster of its NCHW and blocked-layout forms, which is
// what a framework on oneDNN runs.
// Counters: GFLOP_per_s (ours); groups == 1: baseline_GFLOP_per_s (im2col +
// the faster vendor), ratio = ours / baseline (speed, > 1: kgen faster),
// ratio_vs_gemm_only = ours / the faster vendor SGEMM alone (the im2col not
// counted: a stricter bar), im2col_ms; every shape: onednn_conv_GFLOP_per_s
// and ratio_vs_onednn_conv (grouped shapes, where per-group im2col + GEMM
// would be a straw man: ratio is this one); ratio_vs_onednn_conv_only
// against the blocked primitive alone, its input already in its layout and
// its output left there (a framework that keeps tensors blocked between
// layers pays no reorders: the strictest bar). Ours is the op as dispatch runs
// it (tuned variant if the database has one, else the heuristic); the label
// says which variant ran, and which oneDNN kernels.
//   maxpool2d, avgpool2d, global_avgpool /<N>x<C>x<H>x<W>/threads:<t>: the
//   op against the STREAM triad (op_bench.h op_vs_triad): GB_per_s of
//   compulsory traffic, triad_GB_per_s, ratio.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "bench/bench_util.h"
#include "bench/onednn_conv.h"
#include "bench/op_bench.h"
#include "bench/suite_registry.h"
#include "ops/conv/conv.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

namespace kgen::bench {

namespace {

// col[(c·KH + kh)·KW + kw][oh·OW + ow] = x[c][oh·sh - pt + kh·dh][ow·sw - pl + kw·dw] (0 outside).
// Channels split over `threads` (OpenMP, the pool oneDNN uses), as a
// framework's im2col would be.
void im2col(const ops::ConvShape& s, const float* x, float* col, int threads) {
  const int64_t OH = s.oh(), OW = s.ow(), P = OH * OW;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t c = 0; c < s.c; ++c) {
    float* out = col + c * s.kh * s.kw * P;
    for (int64_t kh = 0; kh < s.kh; ++kh)
      for (int64_t kw = 0; kw < s.kw; ++kw, out += P)
        for (int64_t oh = 0; oh < OH; ++oh) {
          float* row = out + oh * OW;
          const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
          if (ih < 0 || ih >= s.h) {
            std::memset(row, 0, size_t(OW) * 4);
            continue;
          }
          const float* xr = x + (c * s.h + ih) * s.w;
          const int64_t off = kw * s.dw - s.pl;  // iw = ow·sw + off
          // In-bounds ow: [lo, hi).
          int64_t lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
          int64_t hi = std::min(OW, (s.w - off + s.sw - 1) / s.sw);
          lo = std::min(lo, OW), hi = std::max(hi, lo);
          for (int64_t ow = 0; ow < lo; ++ow) row[ow] = 0;
          if (s.sw == 1)
            std::memcpy(row + lo, xr + lo + off, size_t(hi - lo) * 4);
          else
            for (int64_t ow = lo; ow < hi; ++ow) row[ow] = xr[ow * s.sw + off];
          for (int64_t ow = hi; ow < OW; ++ow) row[ow] = 0;
        }
  }
}

void BM_Conv(benchmark::State& state, ops::Problem p) {
  const int threads = int(state.range(0));
  ops::register_all_ops();
  const ops::ConvShape s = ops::conv_shape(p);
  auto dev = cpu_device(threads);
  std::string src;
  ops::Variant v = ops::choose_variant(*dev, p, &src);
  auto pp = ops::prepare(*dev, p, v);
  auto io = ops::upload(*dev, ops::make_host_tensors(p, 7));
  auto ours = [&] {
    return seconds([&] {
      ops::execute(*dev, pp, io.io());
      dev->synchronize();
    });
  };
  // Baseline buffers: x, w (OC × C/groups·KH·KW), y, and the im2col columns.
  const int64_t K = s.cg() * s.taps(), P = s.oh() * s.ow();
  const bool im2col_baseline = s.groups == 1;  // the dense shapes; per group it would be a straw man
  auto x = random_floats(size_t(s.n * s.c * s.h * s.w), 1), w = random_floats(size_t(s.oc * K), 2);
  std::vector<float> col(im2col_baseline ? size_t(K * P) : 0), y(size_t(s.n * s.oc * P));
  set_vendor_threads(threads);
  double t_im2col = 0;  // of the last baseline run
  auto baseline = [&](bool onednn) {
    double ti = 0, tg = 0;
    for (int64_t n = 0; n < s.n; ++n) {
      ti += seconds([&] { im2col(s, x.data() + n * s.c * s.h * s.w, col.data(), threads); });
      float* yn = y.data() + n * s.oc * P;
      tg += seconds([&] {
        if (onednn)
          dnnl_sgemm('N', 'N', s.oc, P, K, 1.0f, w.data(), K, col.data(), P, 0.0f, yn, P);
        else
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.oc), int(P), int(K), 1.0f, w.data(), int(K),
                      col.data(), int(P), 0.0f, yn, int(P));
      });
    }
    t_im2col = ti;
    return std::pair{ti + tg, tg};
  };
  OnednnConv dconv(s, x.data(), w.data(), y.data());
  auto direct = [&](bool blocked) { return seconds([&] { dconv.run(blocked); }); };
  ours();
  if (im2col_baseline) baseline(false), baseline(true);
  for (auto _ : state) state.SetIterationTime(ours());
  std::vector<double> t_ours, t_ob, t_dn, g_ob, g_dn, t_col, t_plain, t_blocked, t_conv_only;
  for (int r = 0; r < 15; ++r) {
    // Each side after an untimed run of itself (bench_util.h steady()): the
    // shapes' tensors fit the LLC, and the oneDNN baseline, which follows the
    // OpenBLAS one on the same buffers, was the only side timed warm.
    t_ours.push_back(steady(ours));
    if (im2col_baseline) {
      baseline(false);
      auto [a, ga] = baseline(false);
      t_col.push_back(t_im2col);
      baseline(true);
      auto [b, gb] = baseline(true);
      t_ob.push_back(a), g_ob.push_back(ga), t_dn.push_back(b), g_dn.push_back(gb);
    }
    for (bool blocked : {false, true})
      if (dconv.ok(blocked)) (blocked ? t_blocked : t_plain).push_back(steady([&] { return direct(blocked); }));
    if (dconv.ok(true)) t_conv_only.push_back(steady([&] { return seconds([&] { dconv.run(true, true); }); }));
  }
  const double flop = 2.0 * double(s.n * s.oc * P) * double(K);
  const double ours_g = flop / median(t_ours) / 1e9;
  state.counters["GFLOP_per_s"] = ours_g;
  std::string label = v.str() + " (" + src + ")";
  if (im2col_baseline) {
    const double base_g = flop / std::min(median(t_ob), median(t_dn)) / 1e9;
    const double gemm_g = flop / std::min(median(g_ob), median(g_dn)) / 1e9;
    state.counters["baseline_GFLOP_per_s"] = base_g;
    state.counters["openblas_gemm_GFLOP_per_s"] = flop / median(g_ob) / 1e9;
    state.counters["onednn_gemm_GFLOP_per_s"] = flop / median(g_dn) / 1e9;
    state.counters["im2col_ms"] = median(t_col) * 1e3;
    state.counters["ratio"] = ours_g / base_g;
    state.counters["ratio_vs_gemm_only"] = ours_g / gemm_g;
  }
  // oneDNN's convolution: the faster of its NCHW and blocked forms.
  double conv_t = 0;
  for (bool blocked : {false, true})
    if (dconv.ok(blocked)) {
      const double t = median(blocked ? t_blocked : t_plain);
      state.counters[blocked ? "onednn_blocked_GFLOP_per_s" : "onednn_nchw_GFLOP_per_s"] = flop / t / 1e9;
      if (conv_t == 0 || t < conv_t) conv_t = t;
      label += std::string("; oneDNN ") + (blocked ? "blocked " : "nchw ") + dconv.impl(blocked);
    }
  if (!t_conv_only.empty()) {
    const double g = flop / median(t_conv_only) / 1e9;
    state.counters["onednn_blocked_conv_only_GFLOP_per_s"] = g;
    state.counters["ratio_vs_onednn_conv_only"] = ours_g / g;
  }
  if (conv_t > 0) {
    state.counters["onednn_conv_GFLOP_per_s"] = flop / conv_t / 1e9;
    state.counters["ratio_vs_onednn_conv"] = ours_g / (flop / conv_t / 1e9);
    if (!im2col_baseline) state.counters["ratio"] = ours_g / (flop / conv_t / 1e9);
  } else if (!im2col_baseline) {
    state.SkipWithError("oneDNN has no convolution for this shape, and grouped shapes have no im2col baseline");
  }
  state.SetLabel(label);
}

}  // namespace

void register_conv_benchmarks() {
  ops::register_all_ops();
  for (const char* op : {"conv2d", "maxpool2d", "avgpool2d", "global_avgpool"}) {
    const ops::OpDef* d = ops::find_op(op);
    if (!d) continue;
    for (const auto& p : d->bench_problems) {
      std::string name = std::string(op) + "/";
      for (size_t i = 0; i < p.dims.size(); ++i) name += (i ? "x" : "") + std::to_string(p.dims[i]);
      std::string attrs;
      for (const auto& [k, val] : p.attrs)
        if (k.rfind("pad_", 0) != 0) attrs += (attrs.empty() ? "" : ",") + k + "=" + std::to_string(val);
      if (!attrs.empty()) name += "/" + attrs;
      auto* b = std::string(op) == "conv2d" ? benchmark::RegisterBenchmark(name.c_str(), BM_Conv, p)->MinTime(0.3)
                                             : benchmark::RegisterBenchmark(name.c_str(), op_vs_triad, p)->MinTime(0.2);
      b->ArgName("threads")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace kgen::bench
