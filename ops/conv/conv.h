// Convolution family: "conv2d" (NCHW f32, any stride/padding/dilation/groups,
// optional bias and fused ReLU) and pooling ("maxpool2d", "avgpool2d",
// "global_avgpool").
//
// CPU direct convolution (ops/conv/direct.cpp). A pre-pass (ops/conv/prep.cpp)
// copies the input into a zero-padded, stride-deinterleaved layout xq: for
// each channel, sh·sw "phase planes" of Hq×Wq with
//   xq[c][ph][pw][i][j] = x[c][i·sh + ph - pad_t][j·sw + pw - pad_l]  (0 outside)
// so that every filter tap (kh, kw) reads output position (oh, ow) at
//   plane (kh·dh % sh, kw·dw % sw), row oh + kh·dh / sh, column ow + kw·dw / sw.
// Flattening a plane row-major, tap t of channel c is one fixed offset off[c,t]
// from the "virtual" output position p = oh·Wq + ow: 16 consecutive p are one
// contiguous (unaligned) line of xq for every tap, whatever the stride,
// dilation or padding. Positions with ow >= OW (Wq - OW per row) are computed
// and dropped at the store. The kernel keeps an OCB × L block of accumulator
// lines (OCB output channels × 16·L positions) in zmm registers; per (channel,
// tap) it loads L input lines, broadcasts OCB weights from a repacked copy
// (wp[g][oc block][c·T + t][OCB], contiguous) and issues OCB·L FMAs.
//
// im2col + GEMM (ops/conv/im2col.cpp): the same xq and tap offsets make im2col
// a copy of lines straight into the matmul family's packed-B panel layout
// (ops/matmul/matmul.h); the weights become the packed A (one copy per batch·group)
// and matmul's macro-kernel multiplies; an epilogue drops the virtual columns
// and applies bias/ReLU. A 1×1, stride-1, unpadded conv is a GEMM on x itself.
//
// Winograd F(2×2, 3×3) (ops/conv/winograd.cpp): 3×3 stride 1 as 16 GEMMs
// over transformed tiles, 2.25× fewer multiplies than the direct form.
//
// GPU (ops/conv/gpu.cpp): one work-item per output element (and a few output
// channels), or an implicit GEMM on the GPU GEMM's line tiles; both read x
// with bounds checks.
//
// Fused epilogue (plan_conv2d, ops/conv/epilogue.cpp): y[n, oc, oh, ow] is
// the matmul's C viewed as [batch = n, row = oc, column = oh·OW + ow], so
// conv2d takes matmul's epilogue (ops/matmul/epilogue.h) as it is: a
// per-channel scale is a [OC, 1] input, a residual [N, OC, OH·OW]. The CPU
// forms models run (direct, along channels, both depthwise-from-x forms, the
// 1×1 GEMM and im2col) apply it where they store y; the others store an f32
// temporary and run it as a chain after.
#pragma once
#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"
#include "ops/core/op.h"

namespace kgen::ops {

// A conv2d problem's geometry (derived from Problem dims/attrs).
struct ConvShape {
  int64_t n, c, h, w, oc, kh, kw;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw, groups;
  bool bias, relu;
  // 0: w is OIHW. kWeightsOc32: w comes packed by 32 output channels (see
  // conv_pack_weights_oc32), as a model's constant weights are once at load
  // time; the plan then reads it as it is instead of repacking every call.
  // It pays where impl=8 is the kernel of choice (3×3 on maps of 7-56
  // columns with 32+ channels per group; 1 thread, 512 at 7²: 1.34 -> 1.01
  // ms); 1×1 and few-channel stems are faster on their own paths with OIHW
  // weights.
  int64_t w_layout = 0;
  int64_t cg() const { return c / groups; }    // input channels per group
  int64_t ocg() const { return oc / groups; }  // output channels per group
  int64_t taps() const { return kh * kw; }
  int64_t oh() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  // The padded, phase-split input: planes of hq × wq per (channel, phase).
  int64_t hq() const { return (h + pt + pb + sh - 1) / sh; }
  int64_t wq() const { return (w + pl + pr + sw - 1) / sw; }
  int64_t plane() const { return hq() * wq(); }
  int64_t chan_stride() const { return sh * sw * plane(); }
  int64_t virtual_positions() const { return oh() * wq(); }  // p = oh·wq + ow
};
ConvShape conv_shape(const Problem& p);

// conv2d's fused epilogue: matmul's, with in(0) = the conv's f32 output
// after its own bias and ReLU (attributes bias, relu), and inputs that
// broadcast against [N, OC, OH·OW]. out_dtype: y's type, f32, f16, bf16 or
// an integer kind (u8/i8 after round and saturate_cast, i32).
using ConvEpilogue = MatmulEpilogue;
// The plan of y = epilogue(conv2d) for the conv2d problem `p` and variant:
// io slots x, w, [b], the epilogue's inputs in order, y. A null epilogue
// plans the plain conv (conv2d's own plan).
Plan plan_conv2d(const Problem& p, const Variant& v, const TargetCaps& caps, const ConvEpilogue* ep);
// The epilogue as a chain over [N, OC, OH·OW] with the f32 conv as input 0
// (the forms that do not fuse it, and references).
fusion::Chain conv_epilogue_chain(const ConvShape& s, const ConvEpilogue& ep);
// Whether the variant's form applies the epilogue at its own store of y
// (any type of y; the 1×1 GEMM may still add the launch that compacts C).
bool conv_epilogue_fuses(const Variant& v, const TargetCaps& caps);
// The variant's form over `nio` tensors x, w, [b], y, then (with eu, whose
// spec its store applies) the epilogue's operands (ops/conv/ops.cpp).
Plan plan_conv2d_form(const Problem& p, const Variant& v, const TargetCaps& caps, size_t nio, const EpilogueUse* eu);

// conv2d's forms, variant key "impl" (ops/conv/ops.cpp lists them).
namespace conv_impl {
enum Impl : int64_t {
  kDirect = 0, kIm2col = 1, kGemm1x1 = 2, kDepthwise = 3, kGpu = 4,
  kGpuGemm = 5, kDepthwiseDirect = 6, kDepthwiseSmall = 7, kDirectOc = 8, kWinograd = 9,
};
}  // namespace conv_impl

// The w_layout=32 form of OIHW weights: [G][ceil(OCg/32)][Cg·KH·KW][32], 32
// output channels of a group per run (zeros past OCg), what impl=8 with two
// lines reads. Sizes in floats; unpack is the inverse (pad lanes ignored).
constexpr int64_t kWeightsOc32 = 32;
int64_t conv_weights_oc32_size(const ConvShape& s);
void conv_pack_weights_oc32(const ConvShape& s, const float* w, float* packed);
void conv_unpack_weights_oc32(const ConvShape& s, const float* packed, float* w);

// The w_layout=16 form of 3×3 OIHW weights: Winograd's U = G g Gᵀ (F(2×2,
// 3×3)) per filter and input channel, [G][16][OCg][Cg] with ξ = 4i + j of the
// 4×4 U: what impl=9 multiplies, made once (a model's constant weights)
// instead of on every call (a quarter of the conv's time at 256 channels,
// 14²). Pack rounds once from double; unpack is the exact inverse on U's
// range (g = L U Lᵀ with L G = I: rows 0, 1 - 2 and 3 of U).
constexpr int64_t kWeightsWinograd = 16;
int64_t conv_weights_winograd_size(const ConvShape& s);
void conv_pack_weights_winograd(const ConvShape& s, const float* w, float* u);
void conv_unpack_weights_winograd(const ConvShape& s, const float* u, float* w);

// Pre-pass: xq (see above) from x, plus `slack` zeroed floats after the last
// plane (virtual positions past the plane read there). Grid: x = sh·sw
// phase planes, y = C, z = N. sw_fixed: the column stride baked in (1 or 2),
// or 0 (read from the scalars). Scalars: see plan_conv_prep.
ir::Kernel conv_pad_phase_kernel(int sw_fixed);
// off[c·T + t] = c·chan_stride + phase-plane offset + row/column shift of tap t
// (u32). One work-item per entry.
ir::Kernel conv_tap_offsets_kernel();

// Appends the pre-pass and tap-table steps; returns {xq slot, table slot}.
// taps = false: xq only (tab -1), for paths that address it themselves.
struct ConvPrep {
  int xq, tab = -1;
};
ConvPrep plan_conv_prep(Plan& pl, size_t nio, const ConvShape& s, int x_slot, int64_t slack, bool taps = true);

// CPU direct kernel: OCB output channels × L lines of 16 positions per block,
// PB blocks per workgroup. Buffers: xq, tab, wp, [bias], y.
struct DirectTile {
  int ocb = 8, lines = 3, pb = 4;
  bool oc_fast = false;  // workgroup order: OC blocks vary fastest (see ops/conv/direct.cpp)
  bool w_direct = false;  // broadcast the weights from w's rows (no repack into wp)
};
// ep: the fused epilogue, its operands after y (EpilogueEmitter).
ir::Kernel conv_direct_kernel(const DirectTile& t, bool bias, bool relu, const EpilogueSpec* ep = nullptr);
// wp[g][ob][j][OCB] from w (zero past OCg). One work-item per (j, ob, g).
ir::Kernel conv_pack_direct_weights_kernel(int ocb);
// eu: the epilogue the kernel applies, its operands' slots (y keeps its slot).
void plan_conv_direct(Plan& pl, size_t nio, const ConvShape& s, const DirectTile& t, const EpilogueUse* eu = nullptr);
// OCB·L accumulators + L input lines + a broadcast fit the register file.
bool conv_direct_block_fits(int ocb, int lines, const TargetCaps& caps);
// The impl=0 variant with this register block and blocks per workgroup.
Variant conv_direct_variant(int ocb, int lines, int pb);
// Appends the repack of w into wp (OCB channels contiguous per entry) and
// returns wp's slot.
int plan_conv_pack_direct_weights(Plan& pl, size_t nio, const ConvShape& s, int ocb);

// CPU direct kernel with lines along output channels (ops/conv/direct_oc.cpp):
// PB consecutive outputs of a row × 16·NL channels per work-item, for small
// maps with many channels. Buffers: xq, tab, wp, [bias], y.
struct DirectOcTile {
  int pb = 7, nl = 4;
};
DirectOcTile direct_oc_tile(const ConvShape& s, const TargetCaps& caps);
int direct_oc_chunk(const ConvShape& s, const TargetCaps& caps, int nl);  // pb: a row in equal chunks
bool direct_oc_fits(const ConvShape& s, const DirectOcTile& t, const TargetCaps& caps);
ir::Kernel conv_direct_oc_kernel(int pb, int nl, bool bias, bool relu, const EpilogueSpec* ep = nullptr);
void plan_conv_direct_oc(Plan& pl, size_t nio, const ConvShape& s, const DirectOcTile& t, const EpilogueUse* eu = nullptr);

// CPU depthwise (groups == C == OC, KH·KW <= 49; ops/conv/depthwise.cpp):
// rb output rows of one channel per work-item, `rows` of them at a time
// (sharing the input lines they have in common), the taps unrolled, lines of
// 16 outputs within each row. Buffers: xq, tab, w, [bias], y.
struct DepthwiseTile {
  int kh = 3, kw = 3, sh = 1, dh = 1;  // the conv's (baked into the kernel)
  int rb = 4, rows = 1;
};
bool depthwise_rows_fit(const ConvShape& s);
ir::Kernel conv_depthwise_rows_kernel(const DepthwiseTile& t, bool bias, bool relu);
void plan_conv_depthwise_rows(Plan& pl, size_t nio, const ConvShape& s, int rb, int rows);

// CPU depthwise straight from x (ops/conv/depthwise_direct.cpp): column
// stride 1 or 2, W >= 16, OW >= 16 (depthwise_direct_fits); the kernel is
// specialised to the row geometry. Buffers: x, w, [bias], y.
bool depthwise_direct_fits(const ConvShape& s);
ir::Kernel conv_depthwise_direct_kernel(const ConvShape& s, int rb, int rows, const EpilogueSpec* ep = nullptr);
void plan_conv_depthwise_direct(Plan& pl, const ConvShape& s, int rb, int rows, const EpilogueUse* eu = nullptr);

// CPU depthwise of small planes (16..256 outputs, 16..1024 inputs; ops/
// ops/conv/depthwise_small.cpp): a plane per work-item, lines along the
// flattened plane, taps built by constant shuffles; the kernel is
// specialised to the whole geometry. Buffers: x, w, [bias], y.
// padded: taps as windows of the zero-padded plane's phase planes.
bool depthwise_small_fits(const ConvShape& s);
ir::Kernel conv_depthwise_small_kernel(const ConvShape& s, bool padded, const EpilogueSpec* ep = nullptr);
void plan_conv_depthwise_small(Plan& pl, const ConvShape& s, bool padded, const EpilogueUse* eu = nullptr);

// GEMM paths (compose with the matmul family's packed macro-kernel).
// mr/nl/kc/mc/nc: ops::GemmTile. eu: the epilogue, applied by the
// macro-kernel where C is y (1×1, one group, no bias or ReLU, a C type it
// stores), else by the launch that compacts C into y.
void plan_conv_im2col_gemm(Plan& pl, size_t nio, const ConvShape& s, const Variant& gemm_tile, const TargetCaps& caps,
                           const EpilogueUse* eu = nullptr);
void plan_conv_1x1_gemm(Plan& pl, size_t nio, const ConvShape& s, const Variant& gemm_tile, const TargetCaps& caps,
                        const EpilogueUse* eu = nullptr);
bool conv_is_pointwise(const ConvShape& s);  // 1×1, stride 1, no padding
// The GEMM tile of a conv product (m × n × k): the matmul default for it,
// overridden by the variant's GemmTile params, with A in layout `ak` and no
// A prefetch; throws on a tile that cannot be built.
GemmTile conv_gemm_tile(const Variant& v, int64_t m, int64_t n, int64_t k, int ak, const TargetCaps& caps);
// A GEMM path's variant (impl 1, 2 or 9) with register block mr × nl and all
// of K per pass (kc=0), the rest of the tile at GemmTile's defaults.
Variant conv_gemm_variant(int64_t impl, int mr, int nl);

// Winograd F(2×2, 3×3) (ops/conv/winograd.cpp): 3×3, stride 1, dilation 1,
// OIHW weights, any padding and groups. 16 GEMMs per group on matmul's
// macro-kernel (GemmTile from the variant) between an input transform into
// packed-B panels and an output transform into y.
bool conv_winograd_fits(const ConvShape& s);
// The direct form's multiplies over Winograd's (16 per virtual tile, whole
// panels of nr tiles) for one channel pair: 2.16 at 56², 1.72 at 14² (nr 16),
// under 1 at 7².
double conv_winograd_saving(const ConvShape& s, int nr);
// The chunk (images, or tile rows of one image) is as many as keep V and M
// within the variant's ck KiB, else conv_winograd_chunk_kib (strategy.h).
ir::Kernel conv_winograd_weights_kernel();
ir::Kernel conv_winograd_input_kernel(int nl);
ir::Kernel conv_winograd_output_kernel(bool bias, bool relu);
void plan_conv_winograd(Plan& pl, size_t nio, const ConvShape& s, const Variant& gemm_tile, const TargetCaps& caps);

// GPU: workgroup `wg` work-items along output positions, `ocb` output
// channels per work-item.
ir::Kernel conv_gpu_kernel(int wg, int ocb, bool bias, bool relu);
void plan_conv_gpu(Plan& pl, const ConvShape& s, int wg, int ocb);
// GPU implicit GEMM (impl=5): per group, positions (the batch's N·OH·OW) ×
// output channels × (Cg·KH·KW) on the line tiles (ops/matmul/line_tile_gemm.h), A
// gathered from x, W as Bᵀ rows; 128 positions × 16·tn channels per
// workgroup (tn 4 or 8). Grid (channel tiles, position tiles, groups).
// ks > 1: a K split, grid z = groups·ks; each split writes its partial y to
// part[split] (no bias or ReLU) and conv_ksplit_sum_kernel adds them up,
// then bias and ReLU (for few position tiles: batch 1 at 56×56 is 25).
// double_buffer: two shared buffers (ops/matmul/line_tile_gemm.h), variant db=1.
ir::Kernel conv_gpu_gemm_kernel(int tn, bool bias, bool relu, int ks = 1, bool double_buffer = false);
ir::Kernel conv_ksplit_sum_kernel(int ks, bool bias, bool relu);
// The implicit GEMM's workgroups without a K split: position tiles × channel
// tiles × groups.
int64_t conv_gpu_gemm_tiles(const ConvShape& s, int tn);
void plan_conv_gpu_gemm(Plan& pl, size_t nio, const ConvShape& s, int tn, int ks, bool double_buffer);
bool conv_gpu_gemm_fits(const ConvShape& s);  // grid y: at most 65535 position tiles

// Plain C++ conv2d (double accumulation), the op's reference.
void conv2d_reference(const ConvShape& s, const float* x, const float* w, const float* b, float* y);

void register_conv_ops();  // conv2d and the pooling ops

}  // namespace kgen::ops
