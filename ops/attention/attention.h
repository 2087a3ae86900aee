// Scaled dot-product attention, f32: out = softmax(Q Kᵀ · scale + mask) V with
// Q: B×H×S×D, K, V: B×Hkv×Skv×D (grouped-query attention: head h reads kv
// head h / (H/Hkv)), out: B×H×S×D. Causal masking aligns the ends of the
// sequences: query i sees keys j <= i + Skv - S. A query that sees no key
// (causal with S > Skv) outputs zeros.
//
// Kernels:
//  - naive: three launches through a B×H×S×Skv score temporary (scores,
//    row softmax, P·V), the textbook composition the flash kernels beat.
//  - flash (CPU): one work-item per workgroup takes a block of `qb` query
//    rows; key blocks of `kb` keys are scored 16 at a time as f32x16 lines
//    against a key-transposed copy Kᵀ (built by a cheap O(Skv·D) pre-pass so
//    that scores come out as lines over keys with no horizontal sums), then
//    an online softmax (running max, running sum, rescaled accumulators kept
//    in registers: qb × D/16 lines) folds them into the output. Blocks above
//    the causal diagonal are never visited; only blocks crossing it (or the
//    ragged end of Skv) take the masked path. No S×Skv temporary.
//  - flash on register tiles (CPU): the matmul micro-kernel's form for both
//    products of a key block (mr query rows × 16·nl lines in registers, a
//    broadcast per row and step): scores against K packed once per call
//    as panels of 16 keys × D, P·V over V's rows; the online softmax runs
//    on the whole mr × bk score tile in between. qt tiles per work-item
//    share each key block; a block across the causal diagonal is computed
//    up to the tile's last visible key. Any D (tails padded to lines).
//  - split-key decode (CPU): for few query rows against a long K/V, one
//    work-item per (kv head, chunk of kc keys) computes the chunk for all
//    G·S query rows of that kv head, so K and V stream from memory once;
//    a combine kernel merges the chunks' partial softmax states.
//  - flash (GPU): a workgroup of `bq` work-items, one query row each; key and
//    value blocks of `bk` rows are staged in shared memory by the whole
//    group, each work-item runs the online softmax over them with its D
//    accumulators in registers. Tiled: each work-item scores a 4×4 block
//    (4 rows × 4 keys) and accumulates 4 rows of the output, both products
//    as small GEMMs over f32x4 lines in shared memory.
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace kgen::ops {

// Naive composition. `lanes` 16 (D % 16 == 0, Skv padded to 16) for the CPU,
// 1 for GPU targets. `wg` work-items per group (1 on the CPU).
ir::Kernel attention_scores_kernel(int d, int lanes, int wg, ir::Type dt = ir::Type(ir::ScalarKind::F32));
ir::Kernel attention_softmax_kernel(int lanes, int wg, bool cpu);
ir::Kernel attention_pv_kernel(int d, int lanes, bool cpu, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// The same on the CPU (D % 16 == 0) with the G = H/Hkv query heads that share
// a kv head in one work-item (grid y: B·Hkv·S, one per kv head and query
// position), so each K and V row is read once for all of them instead of
// once per head (decode-sized S, grouped-query attention). pv: `dl` lines of
// D per work-item (grid x: ceil(D/16 / dl)), G·dl accumulators.
ir::Kernel attention_scores_grouped_kernel(int d, int g, ir::Type dt = ir::Type(ir::ScalarKind::F32));
ir::Kernel attention_pv_grouped_kernel(int d, int g, int dl, ir::Type dt = ir::Type(ir::ScalarKind::F32));

// Kᵀ pre-pass for the CPU flash kernel: kt[(bk*D + d)*SkvP + j] = k[bk, j, d]
// (zero for Skv <= j < SkvP), written as f32x16 lines.
ir::Kernel attention_kt_kernel(int d, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// CPU flash kernel: `qb` query rows per work-item, key blocks of 16*nk keys.
// (dt: q's type; Kᵀ and V come in f32.) dc: 0 keeps the qb × D/16 output
// accumulators in registers; else they live in an L1 array and P·V walks
// them dc lines (dividing D/16) at a time (large D).
ir::Kernel flash_attention_cpu_kernel(int d, int qb, int nk, ir::Type dt = ir::Type(ir::ScalarKind::F32), int dc = 0);
// CPU flash attention on the matmul family's register tiles (see
// ops/attention/flash_tiles.cpp): a work-item takes qt tiles of mr query rows;
// per key block of bk keys, scores as mr × 16·nl tiles against the packed K
// panels (attention_kpanel_kernel), the online softmax on the whole tile,
// then P·V as mr × 16·nl tiles over V's rows (f32, ceil(D/16) lines each:
// attention_vpad_kernel's where D % 16 != 0); o f32. Scalars as every
// attention kernel, skvp = Skv rounded up to bk.
ir::Kernel flash_attention_tiles_kernel(int d, int mr, int nl, int bk, int qt, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// V (any D, dt) as f32 rows of ceil(D/16) lines, zero past D; grid (B·Hkv·Skv).
ir::Kernel attention_vpad_kernel(int d, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// K as panels of 16 keys: kp[(kvh·SkvP/16 + j/16)·D + d] lane j % 16 = k[kvh,
// j, d] (zero for Skv <= j < SkvP), f32; grid (SkvP/16, B·Hkv).
ir::Kernel attention_kpanel_kernel(int d, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// The most query rows (G·S) a decode work-item takes per kv head: its
// scores (rows × kc floats) and accumulators live on the stack.
constexpr int kDecodeMaxRows = 16;
// Split-key decode (ops/attention/decode.cpp): grid (ceil(Skv/kc), B·Hkv);
// work-item (c, kvh) takes keys c·kc .. c·kc + kc - 1 of kv head kvh for its
// r = G·S query rows (row rr: query head kvh·G + rr / S, position rr % S) and
// writes po[(item·r + rr)·ceil(D/w)·w + d] (unnormalised outputs, f32, rows
// padded to whole lines) and pml[(item·r + rr)·2 + {0, 1}] (max, sum), item =
// kvh·nch + c. Lines of w lanes (8 or 16: the target's vector register).
// q, k, v of type dt, any D; r <= kDecodeMaxRows.
ir::Kernel attention_decode_kernel(int d, int r, int kc, int w, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// o (B·H·S × D, f32) from the decode kernel's chunks: one work-item per
// query row (wrapped grid); the shape scalars then nch (chunks per kv head).
ir::Kernel attention_decode_combine_kernel(int d, int r, int w);
// GPU flash kernel: `bq` rows per workgroup, `bk` keys per staged block,
// `tpr` work-items per row (1, or 4 on targets with subgroups).
ir::Kernel flash_attention_gpu_kernel(int d, int bq, int bk, int tpr = 1, ir::Type dt = ir::Type(ir::ScalarKind::F32));
// GPU flash kernel with register tiles (needs subgroups of a multiple of
// bk/4 lanes): bq/4 × bk/4 work-items, each scoring 4 rows × 4 keys of a
// block and accumulating those 4 rows × D/(bk/4) of the output. bq 32 or 64,
// bk 16 or 32 dividing D; flash_tiled_shared_bytes says what it stages.
// ks > 1: the keys a row group sees split in ks ranges, one workgroup each
// (more workgroups where B·H·S/bq leaves the GPU's cores idle); outputs
// po (ks × B·H·S × D, unnormalised) and pml ((max, sum) per split and row),
// which flash_attention_merge_kernel turns into o.
// `unroll`: steps (4, 8 or 16) per pass of the two product loops.
// kv1: K and V staged in turn through one buffer (less shared memory).
ir::Kernel flash_attention_gpu_tiled_kernel(int d, int bq, int bk, ir::Type dt = ir::Type(ir::ScalarKind::F32), int ks = 1,
                                            int unroll = 4, bool kv1 = false);
uint32_t flash_tiled_shared_bytes(int d, int bq, int bk, bool kv1 = false);
ir::Kernel flash_attention_merge_kernel(int d, int ks);

void register_attention_ops();

}  // namespace kgen::ops
