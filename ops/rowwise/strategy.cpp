// The row ops' rules, first match wins: the GPU form on GPUs; on the CPU
// narrow rows in lanes, rows of a few lines in blocks, else the row walk in
// lines with streamed output and prefetch where they pay. These are the only
// reads of the CPU traits (caps.cpu) in ops/rowwise.
#include "ops/rowwise/strategy.h"

#include "ops/common/stream_heuristic.h"

namespace kgen::ops {

namespace {

bool exp_rows(RowOp op) { return op == RowOp::Softmax || op == RowOp::LogSoftmax; }

// Rule (GPU): a workgroup per row, 64..256 work-items, doubling while each
// still takes 16 or more of the row's elements (4096-wide rows: 256 of 16),
// within the device's workgroup limit.
int gpu_workgroup(int64_t cols, const TargetCaps& caps) {
  int wg = 64;
  while (wg < 256 && cols >= int64_t(wg) * 16) wg *= 2;
  if (caps.max_workgroup_threads)
    while (uint32_t(wg) > caps.max_workgroup_threads) wg /= 2;
  return wg;
}

// Rule: 16 rows at a time with a row per lane (ops/rowwise/narrow.cpp) for
// softmaxes of 2-24 columns and norms of 2-16: the row walk spends a
// horizontal max and sum on every row (softmax 262144x8, 1 thread: ~9x the
// row walk's GB/s).
bool rows_in_lanes(RowOp op, int64_t cols) { return cols >= 2 && cols <= (exp_rows(op) ? 24 : 16); }

// Rule: blocks of 16 rows whose statistics meet in one line
// (softmax_block_rows, norm_block_rows) for rows of a few lines: softmaxes
// up to 128 columns, layernorm under 128, rmsnorm under 64; a row walk ends
// every row in horizontal reductions and a division, which dominate short
// rows and not long ones.
bool rows_in_blocks(RowOp op, int64_t cols) {
  if (exp_rows(op)) return cols > 24 && cols <= 128;
  return cols >= 16 && cols < (op == RowOp::LayerNorm ? 128 : 64);
}

// Rules of the row walk: lines of 16 from 16 columns (a masked last line
// where cols % 16 != 0), several times the scalar walk's bandwidth. Then:
// - Zen 4 (split_zmm) softmax runs plainly (y rescaled in place, neither
//   streamed nor prefetched): its exp pass is compute-bound on one core.
// - the output streams where it is too large to be read back from the
//   caches (ops/common/stream_heuristic.h; whole lines only);
// - softmaxes prefetch the row after next, so the exp pass overlaps DRAM.
Variant row_walk(RowOp op, const Problem& p, const TargetCaps& caps) {
  const int64_t cols = p.dim(1);
  Variant v = Variant{}.set("lanes", cols >= 16 ? 16 : 1);
  if (op == RowOp::Softmax && caps.cpu.split_zmm && cols >= 16) return v;
  const double out_bytes = double(p.dim(0) * cols) * ir::Type(p.dtype).bytes();
  if (cols % 16 == 0 && stream_output(caps, out_bytes)) v.set("stream", 1);
  if (cols >= 16 && exp_rows(op)) v.set("pf", 1);
  return v;
}

}  // namespace

Variant row_op_heuristic(RowOp op, const Problem& p, const TargetCaps& caps) {
  if (!is_cpu(caps)) return Variant{}.set("impl", 1).set("wg", gpu_workgroup(p.dim(1), caps));
  if (rows_in_lanes(op, p.dim(1))) return Variant{}.set("narrow", 1);
  if (rows_in_blocks(op, p.dim(1))) return Variant{}.set("lanes", 16).set("blk", 1);
  return row_walk(op, p, caps);
}

}  // namespace kgen::ops
