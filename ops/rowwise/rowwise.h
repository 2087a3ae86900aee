// Row-wise kernels over a rows x cols row-major matrix: softmax, log-softmax,
// rmsnorm and layernorm. Designed for the CPU model: single-work-item
// workgroups (one row each, or a block of rows for softmax) that walk a row in `lanes`-wide lines (lanes = 16:
// one AVX-512 register per load; lanes = 1: scalar fallback for any cols).
// The row (<= 16 KiB at the benchmark shapes) stays in L1 between the
// statistics pass(es) and the output pass, so DRAM sees one read and one
// write per element, like the STREAM triad.
#pragma once
#include <cstdint>

#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::ops {

// dt: f32, f16 or bf16 storage (math in f32).
// Variants. lanes: 16 needs cols % 16 == 0 (buffers are lines of 16); 1 takes
// any cols. online (softmax only): running max + rescaled sum in a single
// statistics pass. Slower here (2 exps per element against 1) because the
// L1-resident row makes the extra max pass nearly free; kept for comparison
// and for rows too long for the cache.
// Softmax kernels take kSoftmaxRowsPerGroup consecutive rows per workgroup
// (the workloads assume it) and pipeline the next row's max pass into this
// row's exp pass.
constexpr int kSoftmaxRowsPerGroup = 64;
// fast: exp by ops/fast_exp (CPU); false: the target's exp (GPUs).
// prefetch (CPU): the exp pass of row r prefetches row r + 2 (x[i].prefetch()).
// stream (lanes 16 only): the output is written once, with streaming stores
// (y[i].stream(v): no read for ownership of each output line, so DRAM moves
// the output's bytes once instead of twice). The pass that used to park a
// row's intermediate in y then keeps it elsewhere: log-softmax recomputes
// x - max from the L1-resident x row, two-pass softmax stores exp(x - max)
// into a per-workgroup scratch row (buffer "scratch" after y, f32 lines,
// softmax_scratch_lines of them) that stays in L1. For outputs far larger
// than the caches; a small output is better left in cache for its reader.
// tail (lanes 16, any cols >= 16; not online, not stream): the buffers are
// scalars, each row walked as whole lines from any element offset plus, when
// cols % 16 != 0, one line over its last 16 elements with the lanes already
// walked masked off (the "ncols" scalar then counts elements, not lines).
// Vocabulary-sized rows (1000 classes, 50257 tokens) run in lines instead
// of the scalar kernel's 1/16 of the width.
ir::Kernel softmax_rows(ir::Type dt, int lanes, bool online = false, int rows_per_group = kSoftmaxRowsPerGroup,
                        bool fast = true, bool stream = false, bool prefetch = false, bool tail = false);
ir::Kernel log_softmax_rows(ir::Type dt, int lanes, int rows_per_group = kSoftmaxRowsPerGroup, bool fast = true,
                            bool stream = false, bool prefetch = false, bool tail = false);
// Rows of n = 2..32 columns, 16 at a time with a row per lane
// (ops/rowwise/narrow.cpp): buffers x, y (dt, scalars), scalar nrows; `rpg` rows
// (a multiple of 16) per single-work-item workgroup, grid ceil(rows / rpg).
ir::Kernel softmax_narrow_rows(ir::Type dt, int n, bool log_softmax, int rpg = 256);
// rmsnorm (weight) / layernorm (weight, bias) of n = 2..16 columns the same
// way (ops/rowwise/narrow.cpp): buffers x, w, (b,) y; scalars eps, nrows.
ir::Kernel norm_narrow_rows(ir::Type dt, int n, bool rms, int rpg = 256);
// Rows of a few lines, 16 at a time (lanes 16): each pass walks the 16 rows
// one by one and their max and sum meet in one line each (tree_*_lanes), so
// no row ends in horizontal reductions and a division. Buffers and scalars
// as softmax_rows (no stream, no scratch); `rpg` rows (a multiple of 16) per
// workgroup.
ir::Kernel softmax_block_rows(ir::Type dt, bool log_softmax, bool tail, int rpg = kSoftmaxRowsPerGroup);
// rmsnorm (weight) / layernorm (weight, bias) the same way: buffers x, w, (b,)
// y; scalars eps, ncols (lines, or elements with tail), nrows; `rpg` rows
// per workgroup, grid ceil(rows / rpg).
ir::Kernel norm_block_rows(ir::Type dt, bool rms, bool tail, int rpg = kSoftmaxRowsPerGroup);
ir::Kernel rmsnorm_rows(ir::Type dt, int lanes, bool with_weight = true, bool stream = false, bool tail = false);
ir::Kernel layernorm_rows(ir::Type dt, int lanes, bool stream = false, bool tail = false);  // weight and bias
// Does softmax_rows(.., online, .., stream) take the scratch buffer, and how
// many f32 lines (of `lanes`) does it need for rows x cols.
inline bool softmax_needs_scratch(bool online, bool stream) { return stream && !online; }
inline int64_t softmax_scratch_lines(int64_t rows, int64_t cols, int lanes, int rows_per_group = kSoftmaxRowsPerGroup) {
  return (rows + rows_per_group - 1) / rows_per_group * (cols / lanes);
}

enum class RowOp { Softmax, LogSoftmax, RmsNorm, LayerNorm };

// Test/bench sizes for the registry: a size n >= 2^32 packs a shape as
// (rows << 32) | cols; a plain n means n elements as rows of `default_cols`
// (rows = n / default_cols, or one row of n when n is smaller).
inline int64_t pack_shape(int64_t rows, int64_t cols) { return (rows << 32) | cols; }

// Launch and buffers for rows x cols (cols in scalars; lanes = the kernel's
// line width, cols must be a multiple of it unless tail, where cols >= 16).
// bytes = read + written. scratch: the softmax stream kernel's scratch buffer
// (softmax_needs_scratch).
ir::Workload rowwise_workload(RowOp op, int lanes, bool with_weight, int64_t rows, int64_t cols, float eps = 1e-5f,
                              bool scratch = false, bool tail = false);

// The GPU form of each row op: a workgroup of `wg` work-items (a power of
// two) per row, striding it so a subgroup's loads are contiguous; statistics
// in one read of the row (softmax: online max and rescaled sum), combined
// through the subgroup when `subgroups` (a target capability) and shared
// memory, else a shared-memory tree; then the output pass. Any cols. Rows
// past 65535 continue in grid y (Vulkan's guaranteed grid x). Scalars:
// [eps (norms)], ncols, nrows, gx (the grid's x size).
ir::Kernel row_op_gpu(RowOp op, ir::Type dt, int wg, bool subgroups);
ir::Workload rowwise_gpu_workload(RowOp op, int wg, int64_t rows, int64_t cols, float eps = 1e-5f);

// Layernorm's check floor (ir::Workload::floor): y = t·w + b cancels where
// t·w ≈ -b, and a device that sums a row in another order than the
// interpreter gets mean and rstd an ulp apart, so y's error there is an ulp
// or two of |t·w| (up to max |y|): 0.2 × the 1e-5 tolerance is 2e-6 of max |y|.
constexpr double kLayerNormCheckFloor = 0.2;

// Registers the OpDefs "softmax", "log_softmax", "rmsnorm", "layernorm"
// (ops/rowwise/ops.cpp; dims "rows cols") in the op registry.
void register_rowwise_ops();

// Registers the f32 row kernels (lanes 16, tagged "bandwidth", and lanes 1).
void register_rowwise();
// Every op-library kernel the registry should know; idempotent.
void register_all();

}  // namespace kgen::ops
