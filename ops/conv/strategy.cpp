// The convolution family's variant choice, rule by rule. conv2d, in order:
//   1. Packed weights (w_layout 32 or 16) run the one kernel that reads them.
//   2. GPU: the implicit GEMM where a group has the channels to fill its
//      tiles, else a work-item per output position.
//   3. CPU depthwise: the kernels that read x directly, else rows over the
//      pre-pass.
//   4. CPU pointwise on large maps: a GEMM on x itself.
//   5. AVX-512: Winograd on wide-channel 3×3 layers, lines along the channels
//      on 14-28 column maps.
//   6. AVX2: Winograd where it saves a third of the multiplies.
//   7. Otherwise the direct kernel, its register block fitted to the map.
// Pooling: the CPU rows kernel with a prefetch of about 8 KB of input ahead;
// elsewhere a work-item per output (or per plane).
// The rules read vector widths and register counts (capabilities), no CPU
// family traits: the AVX2 rules were measured on Zen 3, the AVX-512 ones on
// Zen 5.
#include "ops/conv/strategy.h"

#include <algorithm>
#include <utility>

#include "ops/conv/conv.h"
#include "ops/conv/pool.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"
#include "ops/reduce/reduce.h"

namespace kgen::ops {

namespace {

using namespace conv_impl;

bool is_depthwise(const ConvShape& s) { return s.groups == s.c && s.groups == s.oc; }

// ---- 1. Packed weights ----------------------------------------------------

// impl=8 with two lines of 16 channels (what w_layout=32 holds) × a row's
// equal chunk of outputs.
Variant channel_lines_conv(const ConvShape& s, const TargetCaps& caps) {
  return Variant{}.set("impl", kDirectOc).set("nl", 2).set("pb", direct_oc_chunk(s, caps, 2));
}

// ---- 2. GPU -----------------------------------------------------------------

// The K split that brings the implicit GEMM's workgroups to kGpuGroupsWanted
// while each split keeps enough of K.
int gpu_gemm_k_split(const ConvShape& s, int tn) {
  return gpu_k_split_for(conv_gpu_gemm_tiles(s, tn), s.cg() * s.kh * s.kw, 128);
}

// The implicit GEMM where a group has 16+ output channels (H200, 3×3 64->64
// 56², batch 8: 0.486 -> 0.115 ms against the direct kernel), a K split where
// its tiles are few, double-buffered where the shared memory holds it; else
// one work-item per output position and up to 4 channels.
Variant gpu_conv(const ConvShape& s, const TargetCaps& caps) {
  if (s.ocg() >= 16 && conv_gpu_gemm_fits(s)) {
    const int tn = s.ocg() <= 64 ? 4 : 8, ks = gpu_gemm_k_split(s, tn);
    Variant v = Variant{}.set("impl", kGpuGemm).set("tn", tn);
    if (ks > 1) v.set("ks", ks);
    if (line_tile_fits(caps.max_shared_bytes, 16, uint32_t(tn), true)) v.set("db", 1);
    return v;
  }
  return Variant{}.set("impl", kGpu).set("wg", 64).set("ocb", s.ocg() >= 4 ? 4 : 1);
}

// ---- 3. CPU depthwise -------------------------------------------------------

// 16 output rows per work-item unless that leaves under 64 work-items.
int depthwise_rows_per_item(const ConvShape& s) { return s.n * s.c * ((s.oh() + 15) / 16) >= 64 ? 16 : 4; }

// The small-plane kernel through the padded phase planes where their rows
// are wide enough to fill its lines: 12+ columns at stride 1, 8+ at stride 2.
bool depthwise_small_padded(const ConvShape& s) {
  const int64_t wq = (s.w + s.pl + s.pr + s.sw - 1) / s.sw;
  return wq >= (s.sh * s.sw > 1 ? 8 : 12);
}

// Small planes fully unrolled (1×960×7², 1 thread: 0.064 -> 0.0075 ms
// against the rows kernel); straight from x where the rows allow, since the
// pre-pass costs more than the conv (4 rows at a time sharing input lines at
// stride 1; at stride 2 one row is as fast); else rows of the pre-passed
// input, 4 at a time; else the direct kernel with one channel per block.
Variant depthwise_conv(const ConvShape& s, const TargetCaps& caps) {
  if (depthwise_small_fits(s)) {
    Variant v = Variant{}.set("impl", kDepthwiseSmall);
    return depthwise_small_padded(s) ? v.set("vp", 1) : v;
  }
  const int rb = depthwise_rows_per_item(s);
  if (depthwise_direct_fits(s)) return Variant{}.set("impl", kDepthwiseDirect).set("rb", rb).set("rows", s.sw == 1 ? 4 : 1);
  if (depthwise_rows_fit(s)) return Variant{}.set("impl", kDepthwise).set("rb", rb).set("rows", 4);
  return conv_direct_variant(1, conv_direct_block_fits(1, 8, caps) ? 8 : 3, 4);
}

// ---- 4. CPU pointwise -------------------------------------------------------

// 1×1 on maps of 14×14 (AVX-512) or 28×28 (AVX2) and up: the GEMM over
// [OC × C]·[C × HW] beats the direct kernel (Zen 5, 14² 256->256: 0.18 ->
// 0.14 ms); smaller maps pad its 48-wide panels too much.
bool pointwise_gemm_pays(const ConvShape& s, const TargetCaps& caps) {
  return conv_is_pointwise(s) && s.h * s.w >= (caps.vector_bits >= 512 ? 196 : 784);
}

Variant pointwise_gemm_conv(const TargetCaps& caps) {
  const auto blocks = gemm_register_blocks(caps);
  return conv_gemm_variant(kGemm1x1, blocks.front().first, blocks.front().second);
}

// ---- 5, 6. Winograd and channel lines -----------------------------------------

// Winograd fits and its padded panels save at least `factor` of the direct
// form's multiplies (with the default GEMM tile's panel width).
bool winograd_saves(const ConvShape& s, const TargetCaps& caps, double factor) {
  return conv_winograd_fits(s) &&
         conv_winograd_saving(s, default_cpu_tile(s.ocg(), s.oh() * s.ow() / 4, s.cg(), caps).nr()) >= factor;
}

// AVX-512: 48+ input and 32+ output channels per group, on maps of 56+
// columns or with 8192+ channel pairs, from 12×12 outputs: its 16 GEMMs then
// run near the FMA peak and the transforms (growing with Cg + OCg, not
// Cg·OCg) stay a small share (Zen 5, 64->64 56², 1 thread: 1.07 -> 0.71 ms).
// The direct kernel has 32 registers here, so a saving of 0.9 suffices.
bool avx512_winograd_pays(const ConvShape& s, const TargetCaps& caps) {
  return caps.vector_bits >= 512 && s.cg() >= 48 && s.ocg() >= 32 && (s.ow() >= 56 || s.cg() * s.ocg() >= 8192) &&
         s.oh() * s.ow() >= 144 && winograd_saves(s, caps, 0.9);
}

// AVX-512, maps of 14 to 28 columns with 32+ channels per group: lines along
// the channels, 2 of them × a row's equal chunk of outputs (1×256×14², 1
// thread: 1.25 -> 1.05 ms); 7² maps and 56² ones stay on the direct kernel.
bool avx512_channel_lines_pay(const ConvShape& s, const TargetCaps& caps) {
  return caps.vector_bits >= 512 && s.ocg() >= 32 && s.ow() >= 14 && s.ow() <= 28;
}

// AVX2: Winograd where it saves a third of the multiplies and the GEMMs have
// 16+ channels each way (Zen 3, 64->64 56², 1 thread: 3.28 -> 2.01 ms).
bool avx2_winograd_pays(const ConvShape& s, const TargetCaps& caps) {
  return caps.vector_bits < 512 && s.cg() >= 16 && s.ocg() >= 16 && winograd_saves(s, caps, 1.5);
}

// ---- 7. The direct kernel ---------------------------------------------------

// Of the 24-accumulator blocks, the one computing the fewest padded
// positions × channels, 5% less than 8 × 3 to replace it: on small maps 3
// lines overshoot a plane's virtual positions (7×7 pad 1: 96 of 63).
std::pair<int, int> least_padded_block(const ConvShape& s) {
  const int64_t ocg = s.ocg();
  auto work = [&](int64_t b, int64_t l) {
    return ((s.virtual_positions() + 16 * l - 1) / (16 * l) * 16 * l) * ((ocg + b - 1) / b * b);
  };
  int ocb = 8, lines = 3;
  for (auto [b, l] : {std::pair{6, 4}, {4, 6}, {12, 2}})
    if (work(b, l) * 20 < work(ocb, lines) * 19) ocb = b, lines = l;
  return {ocb, lines};
}

// OCB channels × L lines: 8 × 3 (24 accumulators) on 32 registers with enough
// output channels per group, else fewer channels and longer rows; 6 × 1 on 16
// registers (two per line).
std::pair<int, int> direct_register_block(const ConvShape& s, const TargetCaps& caps) {
  const int64_t ocg = s.ocg();
  if (!conv_direct_block_fits(8, 3, caps)) {
    if (ocg <= 2) return {int(ocg), 2};
    if (ocg <= 3) return {3, 1};
    return {6, 1};
  }
  if (ocg <= 2) return {int(ocg), 8};
  if (ocg <= 4) return {4, 6};
  if (ocg <= 6) return {6, 4};
  return least_padded_block(s);
}

// Blocks per workgroup: fewer on small maps, so that the threads get enough
// workgroups.
int direct_blocks_per_group(const ConvShape& s, int lines) {
  const int64_t blocks = (s.virtual_positions() + 16 * lines - 1) / (16 * lines);
  return blocks * s.n >= 64 ? 4 : blocks * s.n >= 16 ? 2 : 1;
}

// Small maps broadcast the weights from w's own rows, since repacking them on
// every call costs as much as a few positions' FMAs (1×512×7² 512->512, 1
// thread: 1.48 -> 1.21 ms); large maps keep the packed copy.
Variant direct_conv(const ConvShape& s, const TargetCaps& caps) {
  const auto [ocb, lines] = direct_register_block(s, caps);
  Variant v = conv_direct_variant(ocb, lines, direct_blocks_per_group(s, lines));
  if (s.n * s.oh() * s.ow() <= 1024) v.set("wd", 1);
  return v;
}

// ---- Pooling ----------------------------------------------------------------

// Output rows ahead that the rows kernel prefetches: about 8 KB of input
// (rotating inputs, 3×3/2, 1 thread: 1.29 -> 0.79 ms).
int pool_rows_prefetch(const PoolShape& s) {
  const int64_t step = 4 * s.sh * s.w;  // input bytes per output row
  return int(std::clamp<int64_t>(8192 / step, 1, 32));
}

}  // namespace

Variant conv2d_strategy(const Problem& p, const TargetCaps& caps) {
  const ConvShape s = conv_shape(p);
  if (s.w_layout == kWeightsOc32) return channel_lines_conv(s, caps);
  if (s.w_layout == kWeightsWinograd) return Variant{}.set("impl", kWinograd);
  if (!is_cpu(caps)) return gpu_conv(s, caps);
  if (is_depthwise(s)) return depthwise_conv(s, caps);
  if (pointwise_gemm_pays(s, caps)) return pointwise_gemm_conv(caps);
  if (avx512_winograd_pays(s, caps)) return Variant{}.set("impl", kWinograd);
  if (avx512_channel_lines_pay(s, caps)) return channel_lines_conv(s, caps);
  if (avx2_winograd_pays(s, caps)) return Variant{}.set("impl", kWinograd);
  return direct_conv(s, caps);
}

// Winograd's V and M chunk: 8 MiB on AVX-512 (fewer chunks mean fewer
// launches and longer GEMMs; 16 MiB lost at batch 8), 2 MiB on AVX2 (Zen 3).
int64_t conv_winograd_chunk_kib(const TargetCaps& caps) { return caps.vector_bits >= 512 ? 8192 : 2048; }

// Stride 1: two output rows per work-item, sharing KH - 1 input rows, the
// prefetch distance in their steps (8×64×56² 3×3/1 max, 1 thread: 0.55 ->
// 0.39 ms); other strides one row. GPU targets: a work-item per output.
Variant window_pool_strategy(const Problem& p, const TargetCaps& caps) {
  const PoolShape s = pool_shape(p);
  if (!is_cpu(caps) || !pool_rows_kernel_fits(s)) return Variant{}.set("impl", 0).set("wg", 64);
  if (s.sh == 1 && s.kh >= 2)
    return Variant{}.set("impl", 1).set("pf", std::min(8, std::max(1, pool_rows_prefetch(s) / 2))).set("rb", 2);
  return Variant{}.set("impl", 1).set("pf", pool_rows_prefetch(s));
}

// CPU: 16 small planes per work-item, else lines of one plane. GPU: a
// workgroup per large plane (coalesced reads, partials combined through the
// subgroup or shared memory), a work-item per small one.
Variant global_avgpool_strategy(const Problem& p, const TargetCaps& caps) {
  if (is_cpu(caps)) return Variant{}.set("impl", global_avgpool_small_planes(p) ? 2 : 0);
  if (const int wg = reduce_rows_group_wg(p.dim(2) * p.dim(3), caps)) return Variant{}.set("impl", 3).set("wg", wg);
  return Variant{}.set("impl", 1).set("wg", 64);
}

}  // namespace kgen::ops
