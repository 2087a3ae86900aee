// The "kv_attention" op (ops/attention/kv_attention.cpp): one llama layer's
// attention step over a KV cache that the op updates in place. Its kernels
// (ops/attention/kv_attention_kernels.cpp) read the position of the first new
// token from a buffer, so one compiled plan serves every position.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "ops/core/op.h"

namespace kgen::ops {

namespace kv_attention_detail {

// The problem's sizes: dims "T H D Hkv C", scale from scale_milli.
struct KvShape {
  int64_t t, h, d, hkv, c;
  float scale;
  int64_t g() const { return h / hkv; }  // query heads per kv head
  int64_t rows() const { return t * h; }  // query rows (t, h)
};
KvShape kv_shape_of(const Problem& p);

// The runtime scalars every kv_attention kernel takes, in this order:
// t, h, g, c (i32), scale (f32), rows (i32).
std::vector<uint64_t> kv_scalars(const KvShape& s);

}  // namespace kv_attention_detail

// k_cache[g, pos + t, :] = k_new[t, g, :] and the same for v, skipping rows
// outside [0, C). lanes: D viewed as lines of that many f32 (D % lanes == 0).
// per_row: one work-item per (t, g) row walking its D/lanes lines (the CPU's
// shape, workgroup 1); else one work-item per line, `wg` per workgroup, on
// wrapped_grid (GPUs).
ir::Kernel kv_cache_write_kernel(int d, int lanes, bool per_row, int wg);

// CPU attention over the cache: one work-item per rg query rows (rg heads
// of one token sharing a kv head; rg divides H/Hkv) on wrapped_grid, D as
// lines of `lanes`, keys in blocks of kb (8 or 16) scored into lines of
// scores (each K line loaded once for the rg rows), an online softmax per
// block, then P·V as broadcast(p_j) × V lines. Only the pos + t + 1 visible
// cache rows (at most C) are read.
ir::Kernel kv_attention_cpu_kernel(int d, int lanes, int kb, int rg);

// GPU attention over the cache: a workgroup of wg work-items per query row.
// Per block of wg keys each work-item scores one key (q staged in shared
// memory), the block's max and probabilities meet in shared memory, then
// each work-item folds the block's V rows into its D/wg output dimensions
// (neighbouring work-items read neighbouring words of a V row).
ir::Kernel kv_attention_gpu_kernel(int d, int wg);

// Registers "kv_attention" (called by register_attention_ops()).
void register_kv_attention_op();

}  // namespace kgen::ops
