// The "conv2d" op: y (N × OC × OH × OW) = conv(x (N × C × H × W), w (OC ×
// C/groups × KH × KW)) [+ b (OC)] [ReLU], NCHW f32.
//
// Variants (param "impl"):
//   0 direct:    CPU register-blocked direct conv (ocb, lines, pb, ocf, wd: DirectTile)
//   1 im2col:    CPU im2col into packed panels + matmul's macro-kernel
//                (mr, nl, kc, mc, nc: GemmTile)
//   2 gemm1x1:   CPU pointwise conv as a GEMM on x itself (GemmTile)
//   3 depthwise: CPU groups == C == OC, KH·KW <= 49: rows of one channel
//                per work-item, taps unrolled (rb: rows per work-item)
//   4 gpu:       one work-item per output position × ocb channels (wg, ocb)
//   5 gpu gemm:  implicit GEMM on the GPU GEMM's line tiles (tn 4 or 8)
//   6 depthwise direct: CPU depthwise from x itself, no pre-pass (column
//                stride 1 or 2, W >= 16, OW >= 16; rb, rows as impl 3)
//   7 depthwise small: CPU depthwise of planes of 16..256 outputs, a plane
//                per work-item, fully unrolled
//   8 direct oc: CPU direct conv with lines along output channels: pb
//                outputs of a row × 16·nl channels (small maps, many channels)
//   9 winograd:  CPU F(2×2, 3×3) for 3×3 stride 1: 16 GEMMs on matmul's
//                macro-kernel between the tile transforms (GemmTile)
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "ops/conv/conv.h"
#include "ops/conv/strategy.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"
#include "ops/core/op.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace {

using namespace conv_impl;

void validate(const Problem& p) {
  if (p.dims.size() != 7) throw std::invalid_argument("expected 7 sizes N C H W OC KH KW");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("dtype must be f32");
  static const char* known[] = {"stride_h", "stride_w", "pad_h", "pad_w", "pad_b", "pad_r",
                                "dilation_h", "dilation_w", "groups", "bias", "relu", "w_layout"};
  for (const auto& [k, v] : p.attrs) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok)
      throw std::invalid_argument("unknown attribute '" + k +
                                  "' (stride_h stride_w pad_h pad_w pad_b pad_r dilation_h dilation_w groups bias relu w_layout)");
  }
  const ConvShape s = conv_shape(p);
  if (s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1) throw std::invalid_argument("strides and dilations must be >= 1");
  if (s.pt < 0 || s.pl < 0 || s.pb < 0 || s.pr < 0) throw std::invalid_argument("paddings must be >= 0");
  if (s.groups < 1 || s.c % s.groups || s.oc % s.groups)
    throw std::invalid_argument("groups must divide C and OC");
  if ((s.bias && p.attr("bias") != 1) || (s.relu && p.attr("relu") != 1)) throw std::invalid_argument("bias and relu are 0 or 1");
  if (s.w_layout != 0 && s.w_layout != kWeightsOc32 && s.w_layout != kWeightsWinograd)
    throw std::invalid_argument("w_layout is 0 (OIHW), 32 (packed by 32 output channels, CPU only) or 16 (Winograd U, CPU only)");
  if (s.w_layout == kWeightsWinograd && !(s.kh == 3 && s.kw == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1))
    throw std::invalid_argument("w_layout=16 (Winograd F(2x2,3x3) weights) needs a 3x3 kernel, stride 1 and dilation 1");
  if (s.h + s.pt + s.pb < s.dh * (s.kh - 1) + 1 || s.w + s.pl + s.pr < s.dw * (s.kw - 1) + 1)
    throw std::invalid_argument("the (dilated) kernel is larger than the padded input");
  // 32-bit indexing: the pre-passed input, the im2col panels and y.
  const double xq = double(s.n) * double(s.c) * double(s.chan_stride());
  const double cols = double(s.n) * double(s.c) * double(s.taps()) * double(s.virtual_positions() + 64);
  const double y = double(s.n) * double(s.oc) * double(s.virtual_positions());
  if (std::max({xq, cols, y}) >= 4.0e9) throw std::invalid_argument("too large for 32-bit indexing");
}

Variant direct(int ocb, int lines, int pb) { return conv_direct_variant(ocb, lines, pb); }
Variant gemm(Impl impl, int mr, int nl) { return conv_gemm_variant(impl, mr, nl); }

// Winograd's default register block with the other chunk sizes (2, 8, 16
// MiB of V + M): the best one depends on the cache sizes and the map.
void push_winograd_chunks(std::vector<Variant>& out, const TargetCaps& caps) {
  for (int64_t ck : {2048, 8192, 16384})
    if (ck != conv_winograd_chunk_kib(caps)) out.push_back(Variant{}.set("impl", kWinograd).set("ck", ck));
}

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  const ConvShape s = conv_shape(p);
  std::vector<Variant> out;
  if (s.w_layout == kWeightsWinograd) {  // transformed weights: the Winograd path (CPU)
    if (is_cpu(caps)) {
      for (auto [mr, nl] : gemm_register_blocks(caps)) out.push_back(gemm(kWinograd, mr, nl));
      push_winograd_chunks(out, caps);
    }
    return out;
  }
  if (s.w_layout == kWeightsOc32) {  // packed weights: only the kernel that reads them (CPU)
    if (!is_cpu(caps)) return out;
    std::vector<int> pbs = {direct_oc_chunk(s, caps, 2)};
    for (int pb : {7, 14})
      if (pb != pbs[0]) pbs.push_back(pb);
    for (int pb : pbs) {
      DirectOcTile t;
      t.nl = 2, t.pb = pb;
      if (direct_oc_fits(s, t, caps)) out.push_back(Variant{}.set("impl", kDirectOc).set("pb", pb).set("nl", 2));
    }
    return out;
  }
  if (!is_cpu(caps)) {
    for (int ocb : {1, 4}) out.push_back(Variant{}.set("impl", kGpu).set("wg", 64).set("ocb", ocb));
    if (conv_gpu_gemm_fits(s))
      for (int tn : {4, 8})
        for (int ks : {1, 2, 4, 8})
          if (ks == 1 || s.cg() * s.kh * s.kw / ks >= 32)
            for (int db : {0, 1}) {
              if (!line_tile_fits(caps.max_shared_bytes, 16, tn, db)) continue;
              Variant v = Variant{}.set("impl", kGpuGemm).set("tn", tn);
              if (ks > 1) v.set("ks", ks);
              if (db) v.set("db", 1);
              out.push_back(v);
            }
    return out;
  }
  if (depthwise_small_fits(s)) {
    out.push_back(Variant{}.set("impl", kDepthwiseSmall));
    out.push_back(Variant{}.set("impl", kDepthwiseSmall).set("vp", 1));
  }
  if (depthwise_direct_fits(s))
    for (int rb : {4, 16})
      for (int rows : {1, 2, 4}) out.push_back(Variant{}.set("impl", kDepthwiseDirect).set("rb", rb).set("rows", rows));
  if (depthwise_rows_fit(s))
    for (int rb : {4, 8, 16})
      for (int rows : {1, 2, 4}) out.push_back(Variant{}.set("impl", kDepthwise).set("rb", rb).set("rows", rows));
  // Register blocks: OCB·L accumulators + L input lines + a broadcast fit
  // the register file (32 zmm; 16 ymm on AVX2, two per line).
  for (auto [ocb, lines] : {std::pair{8, 3}, {6, 4}, {4, 6}, {12, 2}, {4, 4}, {2, 8}, {1, 12}, {6, 1}, {3, 1}, {2, 2}, {1, 3}}) {
    if (ocb > 2 * s.ocg() && ocb > 1) continue;  // mostly zero channels
    if (!conv_direct_block_fits(ocb, lines, caps)) continue;
    for (int pb : {2, 8}) out.push_back(direct(ocb, lines, pb));
  }
  // Lines along output channels: 1 or 2 lines, the default chunk of a row.
  for (int nl : {1, 2}) {
    DirectOcTile t = direct_oc_tile(s, caps);
    t.nl = nl, t.pb = direct_oc_chunk(s, caps, nl);
    if (s.ocg() >= 16 * nl && direct_oc_fits(s, t, caps))
      out.push_back(Variant{}.set("impl", kDirectOc).set("pb", t.pb).set("nl", t.nl));
  }
  const Variant def = conv2d_strategy(p, caps);
  if (def.get("impl", kDirect) == kDirect) {  // the default block with OC blocks fastest in the grid, and from w
    out.push_back(direct(int(def.get("ocb", 8)), int(def.get("lines", 3)), 4).set("ocf", 1));
    out.push_back(direct(int(def.get("ocb", 8)), int(def.get("lines", 3)), int(def.get("pb", 4))).set("wd", 1));
  }
  for (auto [mr, nl] : gemm_register_blocks(caps)) {
    out.push_back(gemm(kIm2col, mr, nl));
    if (conv_is_pointwise(s)) out.push_back(gemm(kGemm1x1, mr, nl));
    if (conv_winograd_fits(s)) out.push_back(gemm(kWinograd, mr, nl));
  }
  if (conv_winograd_fits(s)) push_winograd_chunks(out, caps);
  return out;
}

Problem conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t kh, int64_t kw,
             std::map<std::string, int64_t> attrs = {}) {
  Problem p;
  p.op = "conv2d";
  p.dims = {n, c, h, w, oc, kh, kw};
  p.attrs = std::move(attrs);
  return p;
}

}  // namespace

Plan plan_conv2d_form(const Problem& p, const Variant& v, const TargetCaps& caps, size_t nio, const EpilogueUse* eu) {
  const ConvShape s = conv_shape(p);
  Plan pl;
  const int64_t impl = v.get("impl", kDirect);
  if (s.w_layout == kWeightsOc32 && (!is_cpu(caps) || impl != kDirectOc || v.get("nl", 2) != 2))
    throw std::invalid_argument("conv2d: w_layout=32 (weights packed by 32 output channels) runs impl=8 with nl=2 on the cpu target, not " + v.str());
  if (s.w_layout == kWeightsWinograd && (!is_cpu(caps) || impl != kWinograd))
    throw std::invalid_argument("conv2d: w_layout=16 (Winograd weights) runs impl=9 on the cpu target, not " + v.str());
  if (impl != kGpu && impl != kGpuGemm && !is_cpu(caps)) throw std::invalid_argument("conv2d: impl " + std::to_string(impl) + " is for the cpu target");
  switch (impl) {
    case kDirect: {
      DirectTile t;
      t.ocb = int(v.get("ocb", 8));
      t.lines = int(v.get("lines", 3));
      t.pb = int(v.get("pb", 4));
      t.oc_fast = v.get("ocf", 0) != 0;
      t.w_direct = v.get("wd", 0) != 0;
      if (t.ocb < 1 || t.lines < 1 || t.ocb * t.lines + t.lines > 31 || t.pb < 1)
        throw std::invalid_argument("conv2d: bad direct tile " + v.str());
      plan_conv_direct(pl, nio, s, t, eu);
      return pl;
    }
    case kDepthwise: {
      if (!depthwise_rows_fit(s)) throw std::invalid_argument("conv2d: impl=3 (depthwise) needs groups == C == OC and kernel_h·kernel_w <= 49");
      const int rb = int(v.get("rb", 4)), rows = int(v.get("rows", 1));
      if (rb < 1 || rb > 4096) throw std::invalid_argument("conv2d: rb must be 1..4096");
      if (rows < 1 || rows > 8) throw std::invalid_argument("conv2d: rows must be 1..8");
      plan_conv_depthwise_rows(pl, nio, s, rb, rows);
      return pl;
    }
    case kDepthwiseDirect: {
      if (!depthwise_direct_fits(s))
        throw std::invalid_argument("conv2d: impl=6 (depthwise direct) needs groups == C == OC, stride_w 1 or 2, W >= 16 and OW >= 16");
      const int rb = int(v.get("rb", 4)), rows = int(v.get("rows", 1));
      if (rb < 1 || rb > 4096) throw std::invalid_argument("conv2d: rb must be 1..4096");
      if (rows < 1 || rows > 8) throw std::invalid_argument("conv2d: rows must be 1..8");
      plan_conv_depthwise_direct(pl, s, rb, rows, eu);
      return pl;
    }
    case kDepthwiseSmall:
      if (!depthwise_small_fits(s))
        throw std::invalid_argument("conv2d: impl=7 (depthwise small) needs groups == C == OC and 16..256 outputs, 16..1024 inputs per plane");
      plan_conv_depthwise_small(pl, s, v.get("vp", 0) != 0, eu);
      return pl;
    case kDirectOc: {
      DirectOcTile t = direct_oc_tile(s, caps);
      t.pb = int(v.get("pb", t.pb)), t.nl = int(v.get("nl", t.nl));
      if (!direct_oc_fits(s, t, caps)) throw std::invalid_argument("conv2d: bad impl=8 tile " + v.str() + " (pb <= OW, pb·nl + nl vector registers)");
      plan_conv_direct_oc(pl, nio, s, t, eu);
      return pl;
    }
    case kIm2col: plan_conv_im2col_gemm(pl, nio, s, v, caps, eu); return pl;
    case kGemm1x1: plan_conv_1x1_gemm(pl, nio, s, v, caps, eu); return pl;
    case kWinograd: plan_conv_winograd(pl, nio, s, v, caps); return pl;
    case kGpu: {
      int wg = int(v.get("wg", 64)), ocb = int(v.get("ocb", 1));
      if (wg < 1 || wg > 1024 || ocb < 1 || ocb > 16) throw std::invalid_argument("conv2d: bad gpu variant " + v.str());
      plan_conv_gpu(pl, s, wg, ocb);
      return pl;
    }
    case kGpuGemm:
      if (v.get("db", 0) != 0 && v.get("db", 0) != 1) throw std::invalid_argument("conv2d: db must be 0 or 1");
      plan_conv_gpu_gemm(pl, nio, s, int(v.get("tn", 4)), int(v.get("ks", 1)), v.get("db", 0) == 1);
      return pl;
  }
  throw std::invalid_argument("conv2d: unknown impl in variant '" + v.str() + "'");
}

void conv2d_reference(const ConvShape& s, const float* x, const float* w, const float* b, float* y) {
  const int64_t OH = s.oh(), OW = s.ow(), CG = s.cg(), OCG = s.ocg();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.oc; ++oc) {
      const int64_t g = oc / OCG;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b ? double(b[oc]) : 0.0;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t kh = 0; kh < s.kh; ++kh) {
              const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
              if (ih < 0 || ih >= s.h) continue;
              for (int64_t kw = 0; kw < s.kw; ++kw) {
                const int64_t iw = ow * s.sw - s.pl + kw * s.dw;
                if (iw < 0 || iw >= s.w) continue;
                acc += double(w[((oc * CG + c) * s.kh + kh) * s.kw + kw]) *
                       double(x[((n * s.c + g * CG + c) * s.h + ih) * s.w + iw]);
              }
            }
          if (s.relu && acc < 0) acc = 0;
          y[((n * s.oc + oc) * OH + oh) * OW + ow] = float(acc);
        }
    }
}

void register_pool_ops();  // ops/conv/pool.cpp

void register_conv_ops() {
  OpDef d;
  d.name = "conv2d";
  d.attr_defaults = {{"stride_h", 1}, {"stride_w", 1}, {"pad_h", 0}, {"pad_w", 0}, {"dilation_h", 1}, {"dilation_w", 1},
                     {"groups", 1}, {"bias", 0}, {"relu", 0}, {"w_layout", 0}};
  d.description = "2-D convolution, NCHW f32: stride, padding (pad_b/pad_r for asymmetric), dilation, groups, bias, fused ReLU";
  d.dims_help = "N C H W OC KH KW";
  d.attrs_help =
      "stride_h=1 stride_w=1 pad_h=0 pad_w=0 pad_b=pad_h pad_r=pad_w dilation_h=1 dilation_w=1 groups=1 bias=0 relu=0 "
      "w_layout=0|32|16 (32: w packed by 32 output channels, [G][OCg/32][Cg·KH·KW][32], CPU; 16: 3x3 w as Winograd's "
      "U = G g Gᵀ, [G][16][OCg][Cg], CPU)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    const ConvShape s = conv_shape(p);
    const ir::Type f(ir::ScalarKind::F32);
    std::vector<TensorSpec> t{tensor("x", f, {s.n, s.c, s.h, s.w}),
                              s.w_layout == kWeightsOc32       ? tensor("w", f, {s.groups, (s.ocg() + kWeightsOc32 - 1) / kWeightsOc32, s.cg() * s.taps(), kWeightsOc32})
                              : s.w_layout == kWeightsWinograd ? tensor("w", f, {s.groups, kWeightsWinograd, s.ocg(), s.cg()})
                                                               : tensor("w", f, {s.oc, s.cg(), s.kh, s.kw})};
    if (s.bias) t.push_back(tensor("b", f, {s.oc}));
    return t;
  };
  d.outputs = [](const Problem& p) {
    const ConvShape s = conv_shape(p);
    return std::vector<TensorSpec>{tensor("y", ir::Type(ir::ScalarKind::F32), {s.n, s.oc, s.oh(), s.ow()})};
  };
  d.candidates = candidates;
  d.heuristic = conv2d_strategy;
  d.variant_keys = {
      key_set("impl", "implementation", {kDirect, kIm2col, kGemm1x1, kDepthwise, kGpu, kGpuGemm, kDepthwiseDirect, kDepthwiseSmall, kDirectOc, kWinograd},
              "0 direct, 1 im2col GEMM, 2 1x1 GEMM, 3 depthwise rows, 4 GPU direct, 5 GPU implicit GEMM, 6 depthwise from x, "
              "7 depthwise small planes, 8 direct along channels, 9 Winograd"),
      key_range("ocb", "channel_block", 1, 30, "direct: output channels per register block; GPU direct: per work-item"),
      key_range("lines", "position_lines", 1, 15, "direct: lines of 16 positions per register block"),
      key_range("pb", "position_blocks", 1, 65536, "direct: blocks of positions per workgroup; along channels: outputs of a row per work-item"),
      key_set("ocf", "channel_blocks_fastest", {0, 1}, "direct: workgroups with output-channel blocks varying fastest"),
      key_set("wd", "weights_from_w", {0, 1}, "direct: broadcast the weights from w's rows (no repacked copy)"),
      key_range("rb", "rows_per_item", 1, 4096, "depthwise rows and from x: output rows per work-item"),
      key_range("rows", "rows_together", 1, 8, "depthwise rows and from x: output rows computed together, sharing input lines"),
      key_set("vp", "padded_phase_planes", {0, 1}, "depthwise small planes: taps as windows of the zero-padded phase planes"),
      key_range("nl", "register_lines", 1, 16, "GEMM paths: f32x16 lines of B per microkernel; along channels: lines of 16 channels"),
      key_range("mr", "register_rows", 1, 31, "GEMM paths: rows of A per microkernel"),
      key_range("kc", "k_slice", 0, 65536, "GEMM paths: K slice per pass over C (0: all of K)"),
      key_range("mc", "row_panels", 1, 4096, "GEMM paths: MR panels per workgroup block"),
      key_range("nc", "column_panels", 1, 4096, "GEMM paths: NR panels per workgroup block"),
      key_range("ck", "chunk_kib", 0, 1048576, "Winograd: KiB of transformed input and products per chunk (0: the default)"),
      key_range("wg", "workgroup", 1, 1024, "GPU direct: work-items per workgroup"),
      key_set("tn", "tile_lines", {4, 8}, "GPU implicit GEMM: 16·tn output channels per workgroup tile"),
      key_range("ks", "k_splits", 1, 16, "GPU implicit GEMM: K split over workgroups, partial outputs summed after"),
      key_set("db", "double_buffer", {0, 1}, "GPU implicit GEMM: two shared-memory buffers"),
  };
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps& caps) { return plan_conv2d(p, v, caps, nullptr); };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    const ConvShape s = conv_shape(p);
    const float* w = static_cast<const float*>(in[1]);
    std::vector<float> oihw;
    if (s.w_layout == kWeightsOc32 || s.w_layout == kWeightsWinograd) {
      oihw.resize(size_t(s.oc * s.cg() * s.taps()));
      if (s.w_layout == kWeightsOc32) conv_unpack_weights_oc32(s, w, oihw.data());
      else conv_unpack_weights_winograd(s, w, oihw.data());
      w = oihw.data();
    }
    conv2d_reference(s, static_cast<const float*>(in[0]), w, s.bias ? static_cast<const float*>(in[2]) : nullptr,
                     static_cast<float*>(out[0]));
  };
  // Random inputs in [-1, 1]; Winograd-domain weights (w_layout=16) as the
  // transform of random OIHW ones (U's range: random 4×4 U are no 3×3 filter).
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    const ConvShape s = conv_shape(p);
    std::mt19937_64 rng(seed);
    auto random = [&](size_t floats) {
      ir::BufferSpec spec;
      spec.elems = floats;
      spec.lo = -1.0, spec.hi = 1.0;
      std::vector<uint8_t> r;
      rt::fill_random(ir::Type(ir::ScalarKind::F32), spec, r, rng);
      return r;
    };
    if (input == 1 && s.w_layout == kWeightsWinograd) {
      const std::vector<uint8_t> oihw = random(size_t(s.oc * s.cg() * 9));
      conv_pack_weights_winograd(s, reinterpret_cast<const float*>(oihw.data()), reinterpret_cast<float*>(bytes.data()));
      return;
    }
    const std::vector<uint8_t> r = random(bytes.size() / 4);
    std::copy(r.begin(), r.end(), bytes.begin());
  };
  d.tolerance = [](const Problem& p) {
    const ConvShape s = conv_shape(p);
    // Winograd's transforms add terms: each output sums 4 to 9 elements of M
    // (coefficients +-1), each M a dot of U (up to 9 weights / 4) by V (sums
    // of 4 inputs), so its rounding error runs a few times the direct conv's.
    const double winograd = conv_winograd_fits(s) ? 4 : 1;
    return winograd * dot_tolerance(s.cg() * s.taps() + (s.bias ? 1 : 0));
  };
  d.flops = [](const Problem& p) {
    const ConvShape s = conv_shape(p);
    return 2.0 * double(s.n * s.oc * s.oh() * s.ow()) * double(s.cg() * s.taps());
  };
  d.bytes = [](const Problem& p) {
    const ConvShape s = conv_shape(p);
    return 4.0 * double(s.n * s.c * s.h * s.w + s.oc * s.cg() * s.taps() + s.n * s.oc * s.oh() * s.ow() +
                        (s.bias ? s.oc : 0));
  };
  d.test_problems = {
      conv(1, 3, 7, 5, 4, 1, 1),                                                   // pointwise
      conv(2, 16, 7, 9, 20, 1, 1, {{"bias", 1}}),                                  // pointwise + bias
      conv(1, 5, 11, 13, 7, 3, 3, {{"pad_h", 1}, {"pad_w", 1}}),                   // OC not a block multiple
      conv(3, 4, 13, 17, 10, 5, 5, {{"stride_h", 2}, {"stride_w", 2}, {"pad_h", 2}, {"pad_w", 2}}),
      conv(1, 6, 17, 19, 9, 3, 3, {{"dilation_h", 2}, {"dilation_w", 2}, {"pad_h", 2}, {"pad_w", 2}}),
      conv(2, 8, 9, 11, 6, 3, 3, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}}),
      conv(1, 12, 15, 13, 12, 3, 3, {{"groups", 12}, {"pad_h", 1}, {"pad_w", 1}}),  // depthwise
      conv(2, 10, 16, 15, 10, 3, 3, {{"groups", 10}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}}),
      // Depthwise rows of 16+ outputs, not a multiple of 16 (a last line
      // overlapping the one before): 5×5 dilated with ReLU, stride 2 with bias.
      conv(1, 3, 9, 45, 3, 5, 5, {{"groups", 3}, {"dilation_w", 2}, {"pad_h", 2}, {"pad_w", 3}, {"relu", 1}}),
      conv(2, 4, 7, 70, 4, 3, 3, {{"groups", 4}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}}),
      conv(1, 3, 5, 7, 5, 3, 3, {{"pad_h", 3}, {"pad_w", 4}}),                     // more padding than needed
      conv(1, 2, 23, 29, 3, 3, 3, {{"pad_h", 0}, {"pad_w", 2}, {"pad_b", 2}, {"pad_r", 0}}),  // asymmetric, primes
      conv(3, 5, 12, 10, 13, 3, 3, {{"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
      conv(1, 3, 20, 23, 5, 3, 2, {{"stride_h", 3}, {"stride_w", 2}, {"dilation_w", 2}, {"pad_w", 1}}),
      conv(1, 2, 3, 3, 3, 3, 3, {{"pad_h", 1}, {"pad_w", 1}}),                     // tiny
      conv(1, 4, 9, 9, 8, 1, 1, {{"stride_h", 2}, {"stride_w", 2}}),               // strided 1x1
      conv(1, 6, 15, 17, 40, 3, 3, {{"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),  // lines along channels
      conv(1, 1, 1, 1, 1, 1, 1),
  };
  // 3×3 shapes of ResNet-style layers, then MobileNetV2's kinds of layer: its stem (3×3
  // stride 2 from RGB), a depthwise 3×3 at stride 1 and 2 and on its small
  // late maps (14² and 7², the most channels), and a 1×1 expansion.
  const std::map<std::string, int64_t> pad1{{"pad_h", 1}, {"pad_w", 1}};
  auto with = [&](std::map<std::string, int64_t> a) { return a.insert(pad1.begin(), pad1.end()), a; };
  d.bench_problems = {conv(1, 64, 56, 56, 64, 3, 3, pad1),
                      conv(8, 64, 56, 56, 64, 3, 3, pad1),
                      conv(1, 3, 224, 224, 32, 3, 3, with({{"stride_h", 2}, {"stride_w", 2}})),
                      conv(1, 144, 56, 56, 144, 3, 3, with({{"groups", 144}})),
                      conv(1, 144, 56, 56, 144, 3, 3, with({{"groups", 144}, {"stride_h", 2}, {"stride_w", 2}})),
                      conv(1, 576, 14, 14, 576, 3, 3, with({{"groups", 576}})),
                      conv(1, 960, 7, 7, 960, 3, 3, with({{"groups", 960}})),
                      conv(1, 24, 56, 56, 144, 1, 1),
                      // ResNet's late 3×3 layers: small maps, many channels.
                      conv(1, 256, 14, 14, 256, 3, 3, pad1),
                      conv(1, 512, 7, 7, 512, 3, 3, pad1),
                      // The same with the weights packed once, as a model's
                      // constant weights are (oneDNN's conv_only bar reorders
                      // its weights once too).
                      conv(1, 256, 14, 14, 256, 3, 3, with({{"w_layout", 32}})),
                      conv(1, 512, 7, 7, 512, 3, 3, with({{"w_layout", 32}})),
                      // Winograd's transformed weights, made once the same way.
                      conv(1, 64, 56, 56, 64, 3, 3, with({{"w_layout", 16}})),
                      conv(1, 256, 14, 14, 256, 3, 3, with({{"w_layout", 16}})),
                      conv(1, 512, 7, 7, 512, 3, 3, with({{"w_layout", 16}}))};
  register_op(std::move(d));
  register_pool_ops();
}

}  // namespace kgen::ops
