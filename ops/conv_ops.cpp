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

#include "ops/conv.h"
#include "ops/line_tile_gemm.h"
#include "ops/matmul.h"
#include "ops/matmul_plan.h"
#include "ops/op.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace {

enum Impl : int64_t { kDirect = 0, kIm2col = 1, kGemm1x1 = 2, kDepthwise = 3, kGpu = 4, kGpuGemm = 5, kDepthwiseDirect = 6, kDepthwiseSmall = 7, kDirectOc = 8, kWinograd = 9 };

bool is_depthwise(const ConvShape& s) { return s.groups == s.c && s.groups == s.oc; }

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

bool direct_block_fits(int ocb, int lines, const TargetCaps& caps) { return codegen::lines_fit(caps, ocb * lines + lines, 1); }

Variant heuristic(const Problem& p, const TargetCaps& caps);

Variant direct(int ocb, int lines, int pb) { return Variant{}.set("impl", kDirect).set("ocb", ocb).set("lines", lines).set("pb", pb); }
Variant gemm(Impl impl, int mr, int nl) {
  GemmTile t;
  t.mr = mr, t.nl = nl, t.kc = 0;
  return variant_of(t).set("impl", impl);
}

// Winograd's default register block with the other chunk sizes (2, 8, 16
// MiB of V + M): the best one moved with the cache sizes between Zen 3 and
// Zen 5, and with the map.
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
    if (!direct_block_fits(ocb, lines, caps)) continue;
    for (int pb : {2, 8}) out.push_back(direct(ocb, lines, pb));
  }
  // Lines along output channels: 1 or 2 lines, the default chunk of a row.
  for (int nl : {1, 2}) {
    DirectOcTile t = direct_oc_tile(s, caps);
    t.nl = nl, t.pb = direct_oc_chunk(s, caps, nl);
    if (s.ocg() >= 16 * nl && direct_oc_fits(s, t, caps))
      out.push_back(Variant{}.set("impl", kDirectOc).set("pb", t.pb).set("nl", t.nl));
  }
  const Variant def = heuristic(p, caps);
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

Variant heuristic(const Problem& p, const TargetCaps& caps) {
  const ConvShape s = conv_shape(p);
  // Packed weights: impl=8 with two lines, the layout's 32 channels.
  if (s.w_layout == kWeightsOc32) return Variant{}.set("impl", kDirectOc).set("nl", 2).set("pb", direct_oc_chunk(s, caps, 2));
  if (s.w_layout == kWeightsWinograd) return Variant{}.set("impl", kWinograd);
  if (!is_cpu(caps)) {
    // The implicit GEMM where a group has channels enough to fill its tiles
    // (H200, 3×3 64->64 56×56: batch 1 0.135 -> 0.070 ms, batch 8 0.486 ->
    // 0.115 against the direct kernel; tn 8 0.099 / 0.189), with a K split
    // where its tiles are few (H100, batch 1: 25 tiles, ks 1 / 2 / 4 / 8
    // 0.071 / 0.046 / 0.035 / 0.037 ms; batch 8: ks 2 0.110 against 0.118).
    if (s.ocg() >= 16 && conv_gpu_gemm_fits(s)) {
      const int tn = s.ocg() <= 64 ? 4 : 8, ks = conv_gpu_k_split(s, tn);
      Variant v = Variant{}.set("impl", kGpuGemm).set("tn", tn);
      if (ks > 1) v.set("ks", ks);
      // Double-buffered where the shared memory holds it (H100, ks 4 / 2:
      // batch 1 0.0363 -> 0.0334 ms, batch 8 0.1107 -> 0.1034).
      if (line_tile_fits(caps.max_shared_bytes, 16, uint32_t(tn), true)) v.set("db", 1);
      return v;
    }
    return Variant{}.set("impl", kGpu).set("wg", 64).set("ocb", s.ocg() >= 4 ? 4 : 1);
  }
  // Depthwise: 4 rows at a time (1×144×56² 3×3, 1 thread: the conv kernel
  // 0.112 -> 0.073 ms at stride 1, 0.038 -> 0.028 at 2), 16 rows per
  // work-item unless that leaves under 64 work-items.
  const int dw_rb = s.n * s.c * ((s.oh() + 15) / 16) >= 64 ? 16 : 4;
  // Small planes fully unrolled (1 thread, against impl=3: 1×576×14² 3×3
  // 0.063 -> 0.031 ms, 1×960×7² 0.064 -> 0.0075, at stride 2 1×96×28²
  // 0.048 -> 0.0074, 1×384×14² 0.071 -> 0.0092); through the padded phase
  // planes where their rows are wide enough: 12+ at stride 1 (14² 0.031 ->
  // 0.012, 11² 1.2x faster, 9²-10² and 14² 5×5 even, 7² 10-15% slower), 8+
  // at stride 2 (1×384×14² 0.0083 -> 0.0048, 1×96×28² 0.0113 -> 0.0057,
  // 15² 5×5 1.17x faster; 7² 12% slower).
  if (depthwise_small_fits(s)) {
    Variant v = Variant{}.set("impl", kDepthwiseSmall);
    return depthwise_small_padded_default(s) ? v.set("vp", 1) : v;
  }
  // Straight from x where the rows allow (1×144×56² 3×3 pad 1, 1 thread:
  // stride 1 0.117 -> 0.060 ms, stride 2 0.104 -> 0.028; at stride 2 one
  // row at a time is as fast as 2 or 4).
  if (depthwise_direct_fits(s))
    return Variant{}.set("impl", kDepthwiseDirect).set("rb", dw_rb).set("rows", s.sw == 1 ? 4 : 1);
  if (depthwise_rows_fit(s)) return Variant{}.set("impl", kDepthwise).set("rb", dw_rb).set("rows", 4);
  if (is_depthwise(s)) return direct(1, direct_block_fits(1, 8, caps) ? 8 : 3, 4);
  // Pointwise (1×1, stride 1, no padding) on maps of 14×14 and up: the GEMM
  // over [OC × C]·[C × HW] with the default register block. Zen 5, 1 thread,
  // kgen tune: 14×14 256->256 0.18 -> 0.14 ms (batch 8 1.41 -> 1.17), 28×28
  // 128->512 0.50 -> 0.44, 56×56 64->256 0.51 -> 0.42, 112×112 32->64 0.28
  // -> 0.22 (2 threads 1.16-1.28x too). 7×7 maps pad the 48-wide panels: the
  // direct kernel stays (512->512 0.26 against 0.28). AVX2 (Zen 3, best of
  // 3-5, 1 thread) from 28×28: 24->144 56² 0.37 -> 0.29 ms (2 threads 0.28
  // -> 0.18), 64->256 56² 2.22 -> 1.66, 128->512 28² 1.84 -> 1.55, 32->192
  // 28² 0.25 -> 0.15, 32->64 112² 1.19 -> 0.96; 14² even (256->256 0.44
  // against 0.46), 7² even.
  if (conv_is_pointwise(s) && s.h * s.w >= (caps.vector_bits >= 512 ? 196 : 784)) {
    const auto blocks = gemm_register_blocks(caps);
    return gemm(kGemm1x1, blocks.front().first, blocks.front().second);
  }
  // AVX-512: Winograd F(2×2, 3×3) (below) on 48+ input and 32+ output
  // channels per group, on maps of 56+ columns or with 8192+ channel pairs:
  // its 16 GEMMs then have K and M enough to run near the FMA peak, and the
  // transforms (which grow with Cg + OCg, not Cg·OCg) stay a small share.
  // Zen 5, kgen op, alternated runs, pad 1, 1 / 2 threads, against the
  // direct kernel or the channel-line one (impl=8): 64->64 56² 1.07 ->
  // 0.71 / 0.57 -> 0.42 ms, batch 8 8.2 -> 6.0 / 4.1 -> 3.2; 128->128 56²
  // 4.2 -> 2.9 / 2.3 -> 1.6; 64->64 224² 19.9 -> 12.8 / 9.3 -> 6.7; 64->32
  // 224² 11.9 -> 9.1 / 4.6 -> 4.6; 128 28² 0.93 -> 0.74 / 0.48 -> 0.39;
  // 256 14² 0.95 -> 0.79 / 0.69 -> 0.63, batch 8 7.5 -> 5.4 / 4.2 -> 3.9;
  // 96 27² 0.52 -> 0.45 / 0.27 -> 0.24; 256 12² 0.98 -> 0.78 / 0.50 ->
  // 0.40. From 12×12 outputs on, even where the padded panels leave less
  // than AVX2's saving of 1.5 (the direct kernel pads small maps as well):
  // 13² 64->256 0.32 -> 0.25 / 0.17 -> 0.14, batch 8 2.71 -> 1.71 / 1.32 ->
  // 1.02; 48->192 0.177 -> 0.147 / 0.088 -> 0.093, batch 8 1.34 -> 1.01 /
  // 0.68 -> 0.53; 96->96 0.164 -> 0.145 / 0.090 -> 0.083. Smaller maps lose
  // (128 at 11² even at 1 thread, 0.098 against 0.125 at 2; 10² 0.163
  // against 0.188; 160 at 9² 0.131 against 0.158 at 2 threads), and 7²
  // pads too much (saving < 0.9). Left on the direct kernels: 64 at 28²
  // (0.238 against 0.235, 2 threads 0.20 against 0.23) and 14² (0.065
  // against 0.071), 32->128 27² (0.24 against 0.27), 32 at 112² (0.99 ->
  // 0.90 at 1 thread, but 0.53-0.76 against 0.49-1.0 at 2, where the VM's
  // memory is contended), 16 channels (even).
  // Winograd fits and its padded panels save at least `factor` of the
  // direct form's multiplies (with the default GEMM tile's panel width).
  auto winograd_saves = [&](double factor) {
    return conv_winograd_fits(s) &&
           conv_winograd_saving(s, default_cpu_tile(s.ocg(), s.oh() * s.ow() / 4, s.cg(), caps).nr()) >= factor;
  };
  if (caps.vector_bits >= 512 && s.cg() >= 48 && s.ocg() >= 32 && (s.ow() >= 56 || s.cg() * s.ocg() >= 8192) &&
      s.oh() * s.ow() >= 144 && winograd_saves(0.9))
    return Variant{}.set("impl", kWinograd);
  // Maps of 14 to 28 columns with 32+ channels per group: lines along the
  // channels, 2 of them × 14-ish outputs of a row (1 thread, 3×3 pad 1:
  // 1×256×14² 1.25 -> 1.05 ms, 1×128×28² 1.02 -> 0.94; 2 threads 8×256×14²
  // 4.47 -> 3.71). 7×7 maps stay on the direct kernel (1.44 against 1.88),
  // and 56×56 ones (even).
  if (caps.vector_bits >= 512 && s.ocg() >= 32 && s.ow() >= 14 && s.ow() <= 28)
    return Variant{}.set("impl", kDirectOc).set("pb", direct_oc_chunk(s, caps, 2)).set("nl", 2);
  // Winograd F(2×2, 3×3) where it saves a third of the multiplies or more
  // and the GEMMs have 16+ channels each way. AVX2 (Zen 3), kgen op, best of
  // 3-5, 1 thread, pad 1, against the direct kernel: 64->64 56² 3.28 ->
  // 2.01 ms (2 threads 1.85 -> 1.11; batch 8 15.7 -> 9.7-10.3), 128 28²
  // 3.2 -> 2.35, 256 14² 3.17 -> 2.25, 32 112² 3.36 -> 2.86, 16 56² 0.198 ->
  // 0.163, 64->32 224² 50 -> 19 (2 threads); slower: 512 7² (saving 0.86:
  // 3.3 -> 6.4), 8 channels at 28², 32->9 at 224². AVX-512 has its own rule
  // above (the direct kernel has twice the registers there).
  if (caps.vector_bits < 512 && s.cg() >= 16 && s.ocg() >= 16 && winograd_saves(1.5))
    return Variant{}.set("impl", kWinograd);
  // The direct kernel: 8 channels × 3 lines (24 accumulators) when there are
  // enough output channels per group, else fewer channels and longer rows.
  // AVX2 (16 ymm, two per line): 6 channels × 1 line (12 accumulators).
  const int64_t ocg = s.ocg();
  int ocb = 8, lines = 3;
  if (!direct_block_fits(8, 3, caps)) {
    ocb = 6, lines = 1;
    if (ocg <= 2) ocb = int(ocg), lines = 2;
    else if (ocg <= 3) ocb = 3, lines = 1;
  } else if (ocg <= 2) ocb = int(ocg), lines = 8;
  else if (ocg <= 4) ocb = 4, lines = 6;
  else if (ocg <= 6) ocb = 6, lines = 4;
  else {
    // Of the 24-accumulator blocks, the one computing the fewest padded
    // positions × channels (the default 8 × 3 on a tie): on small maps 3
    // lines can overshoot a plane's virtual positions by half (7×7 pad 1:
    // 63 of them, 96 computed; 4 lines: 64). Zen 5, 1 thread, 1×512×7²
    // 512->512 3×3: 2.66 -> 1.41-1.61 ms.
    auto work = [&](int64_t b, int64_t l) {
      return ((s.virtual_positions() + 16 * l - 1) / (16 * l) * 16 * l) * ((ocg + b - 1) / b * b);
    };
    for (auto [b, l] : {std::pair{6, 4}, {4, 6}, {12, 2}})
      if (work(b, l) * 20 < work(ocb, lines) * 19) ocb = b, lines = l;  // 5% less
  }
  // Enough workgroups for the threads: fewer blocks per group on small maps.
  const int64_t blocks = (s.virtual_positions() + 16 * lines - 1) / (16 * lines);
  const int pb = blocks * s.n >= 64 ? 4 : blocks * s.n >= 16 ? 2 : 1;
  // Small maps broadcast the weights from w's own rows: repacking them on
  // every call costs as much as a few positions' FMAs (1×512×7² 512->512:
  // 0.35 of 1.6 ms; 1 / 2 threads 1.48 -> 1.21, 1.24 -> 0.68 ms). On large
  // maps the packed copy, one line per entry, stays (8×64×56² at 2 threads:
  // 4% faster).
  if (s.n * s.oh() * s.ow() <= 1024) return direct(ocb, lines, pb).set("wd", 1);
  return direct(ocb, lines, pb);
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  const ConvShape s = conv_shape(p);
  const size_t nio = s.bias ? 4 : 3;
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
      plan_conv_direct(pl, nio, s, t);
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
      plan_conv_depthwise_direct(pl, s, rb, rows);
      return pl;
    }
    case kDepthwiseSmall:
      if (!depthwise_small_fits(s))
        throw std::invalid_argument("conv2d: impl=7 (depthwise small) needs groups == C == OC and 16..256 outputs, 16..1024 inputs per plane");
      plan_conv_depthwise_small(pl, s, v.get("vp", 0) != 0);
      return pl;
    case kDirectOc: {
      DirectOcTile t = direct_oc_tile(s, caps);
      t.pb = int(v.get("pb", t.pb)), t.nl = int(v.get("nl", t.nl));
      if (!direct_oc_fits(s, t, caps)) throw std::invalid_argument("conv2d: bad impl=8 tile " + v.str() + " (pb <= OW, pb·nl + nl vector registers)");
      plan_conv_direct_oc(pl, nio, s, t);
      return pl;
    }
    case kIm2col: plan_conv_im2col_gemm(pl, nio, s, v, caps); return pl;
    case kGemm1x1: plan_conv_1x1_gemm(pl, nio, s, v, caps); return pl;
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

Problem conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t kh, int64_t kw,
             std::map<std::string, int64_t> attrs = {}) {
  Problem p;
  p.op = "conv2d";
  p.dims = {n, c, h, w, oc, kh, kw};
  p.attrs = std::move(attrs);
  return p;
}

}  // namespace

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

void register_pool_ops();  // ops/pool.cpp

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
  d.heuristic = heuristic;
  d.plan = plan;
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
    return dot_tolerance(s.cg() * s.taps() + (s.bias ? 1 : 0));
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
  // The 3×3 shapes, then MobileNetV2's kinds of layer: its stem (3×3
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
