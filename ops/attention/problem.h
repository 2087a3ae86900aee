// The attention problem's sizes and what fits a target: shared by the op's
// candidates and plans (ops/attention/ops.cpp) and its strategy
// (ops/attention/strategy.cpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "codegen/target.h"
#include "ops/attention/attention.h"
#include "ops/core/op.h"
#include "ops/matmul/plan.h"

namespace kgen::ops::attention_detail {

enum Impl { kNaive = 0, kFlashCpu = 1, kFlashGpu = 2, kFlashTiles = 3, kDecode = 4 };

struct Att {
  int64_t b, h, s, d, hkv, skv;
  bool causal;
  float scale;
  int64_t rows() const { return b * h * s; }
  // Query i sees keys j <= i + shift (shift >= Skv: everything).
  int64_t shift() const { return causal ? skv - s : skv; }
  int64_t visible(int64_t i) const { return std::clamp<int64_t>(i + shift() + 1, 0, skv); }
};

inline Att att_of(const Problem& p) {
  Att a;
  a.b = p.dim(0);
  a.h = p.dim(1);
  a.s = p.dim(2);
  a.d = p.dim(3);
  a.hkv = p.dims.size() > 4 ? p.dim(4) : a.h;
  a.skv = p.dims.size() > 5 ? p.dim(5) : a.s;
  a.causal = p.attr("causal") != 0;
  a.scale = p.attrs.count("scale_milli") ? float(p.attr("scale_milli")) / 1000.0f : 1.0f / std::sqrt(float(a.d));
  return a;
}

// The largest key block (<= want) whose K and V tiles fit the target's shared memory.
inline int64_t gpu_bk(const Att& a, const TargetCaps& caps, int64_t want) {
  int64_t bk = want;
  while (bk > 1 && 2 * bk * a.d * 4 > int64_t(caps.max_shared_bytes)) bk /= 2;
  return bk;
}

// The GPU kernel with 4 work-items per query row (tpr=4): needs subgroup
// shuffles within aligned groups of 4 lanes, and D % 4 == 0.
inline bool four_per_row(const Att& a, const TargetCaps& caps) {
  return caps.subgroups && caps.subgroup_size % 4 == 0 && a.d % 4 == 0;
}

// The register-tiled GPU kernel (tile=1) with bq rows and bk keys per block:
// row scores meet through shuffles among bk/4 lanes, and its tiles must fit
// the shared memory (kv1: K and V in one buffer).
inline bool tiled_fits(const Att& a, const TargetCaps& caps, int bq, int bk, bool kv1 = false) {
  const uint32_t threads = uint32_t(bq / 4 * bk / 4);
  return !is_cpu(caps) && caps.subgroups && caps.subgroup_size % uint32_t(bk / 4) == 0 && a.d % bk == 0 &&
         (!caps.max_shared_bytes || flash_tiled_shared_bytes(int(a.d), bq, bk, kv1) <= caps.max_shared_bytes) &&
         (!caps.max_workgroup_threads || threads <= caps.max_workgroup_threads);
}
// Workgroups of bq query rows (the flash kernels' grids, before key splits).
inline int64_t row_groups(const Att& a, int bq) { return a.b * a.h * ((a.s + bq - 1) / bq); }
// The split outputs (ks × B·H·S × D) stay within the merge's i32 indices.
inline bool split_indexable(const Att& a, int ks) { return double(ks) * double(a.rows()) * double(a.d) < 2e9; }
// Key splits (ks) of the tiled kernel: worth a try while the row groups
// number under 4·kGpuGroupsWanted with the split and each split keeps 128
// keys.
inline bool tiled_split(const Att& a, int bq, int ks) {
  return row_groups(a, bq) * ks <= 4 * kGpuGroupsWanted && a.skv / ks >= 128 && split_indexable(a, ks);
}
// The tiled kernel's (bq, bk) shapes, in the order the strategy tries them.
constexpr int kTiledShapes[4][2] = {{64, 32}, {32, 32}, {64, 16}, {32, 16}};

// Whether qb rows × D/16 lines of flash accumulators, a V line and a
// broadcast stay in the CPU's registers.
inline bool flash_acc_fit(const Att& a, const TargetCaps& caps, int qb) {
  return codegen::lines_fit(caps, int(qb * (a.d / 16) + 1), 1);
}

// The register-tile flash form (impl 3, flash_attention_tiles_kernel): the
// CPU, any D (rows of ceil(D/16) lines).
inline bool tiles_fit(const Att& a, const TargetCaps& caps) { return is_cpu(caps) && a.d >= 1; }
inline int64_t d_lines(const Att& a) { return (a.d + 15) / 16; }
// Its register blocks (mr rows × nl lines): the matmul micro-kernel's blocks
// for this register file whose nl divides D's lines, in the matmul's order of
// preference, else the tallest single-line block that fits.
inline std::vector<std::pair<int, int>> tiles_blocks(const Att& a, const TargetCaps& caps) {
  std::vector<std::pair<int, int>> out;
  for (auto b : gemm_register_blocks(caps))
    if (d_lines(a) % b.second == 0) out.push_back(b);
  if (!out.empty()) return out;
  for (int mr = 14; mr > 1; --mr)
    if (gemm_block_fits(mr, 1, caps)) return {{mr, 1}};
  return {{2, 1}};
}
inline std::pair<int, int> tiles_block(const Att& a, const TargetCaps& caps) { return tiles_blocks(a, caps).front(); }
// Its key block: the first multiple of the tile's 16·nl keys from 64 on.
inline int tiles_keys(int nl) { return (64 + 16 * nl - 1) / (16 * nl) * (16 * nl); }

// The split-key decode form (impl 4): the CPU, the G·S query rows of a kv
// head in one work-item.
inline bool decode_fits(const Att& a, const TargetCaps& caps) {
  return is_cpu(caps) && a.h / a.hkv * a.s <= kDecodeMaxRows;
}
inline int64_t decode_chunks(const Att& a, int64_t kc) { return (a.skv + kc - 1) / kc; }

// The naive composition with a kv head's G query heads per work-item (rg).
inline bool grouped_fits(const Att& a) { return a.d % 16 == 0 && a.h / a.hkv <= 8; }

}  // namespace kgen::ops::attention_detail
