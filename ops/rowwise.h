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
// statistics pass. Slower here (2 exps per element against 1, 0.53x triad vs
// 0.84x) because the L1-resident row makes the extra max pass nearly free;
// kept for comparison and for rows too long for the cache.
// Softmax kernels take kSoftmaxRowsPerGroup consecutive rows per workgroup
// (the workloads assume it) and pipeline the next row's max pass into this
// row's exp pass.
constexpr int kSoftmaxRowsPerGroup = 64;
// fast: exp by ops/fast_exp (CPU); false: the target's exp (GPUs).
ir::Kernel softmax_rows(ir::Type dt, int lanes, bool online = false, int rows_per_group = kSoftmaxRowsPerGroup,
                        bool fast = true);
ir::Kernel log_softmax_rows(ir::Type dt, int lanes, int rows_per_group = kSoftmaxRowsPerGroup, bool fast = true);
ir::Kernel rmsnorm_rows(ir::Type dt, int lanes, bool with_weight = true);
ir::Kernel layernorm_rows(ir::Type dt, int lanes);  // weight and bias

enum class RowOp { Softmax, LogSoftmax, RmsNorm, LayerNorm };

// Test/bench sizes for the registry: a size n >= 2^32 packs a shape as
// (rows << 32) | cols; a plain n means n elements as rows of `default_cols`
// (rows = n / default_cols, or one row of n when n is smaller).
inline int64_t pack_shape(int64_t rows, int64_t cols) { return (rows << 32) | cols; }

// Launch and buffers for rows x cols (cols in scalars; lanes = the kernel's
// line width, cols must be a multiple of it). bytes = read + written.
ir::Workload rowwise_workload(RowOp op, int lanes, bool with_weight, int64_t rows, int64_t cols, float eps = 1e-5f);

// Registers the OpDefs "softmax", "log_softmax", "rmsnorm", "layernorm"
// (ops/row_ops.cpp; dims "rows cols") in the op registry.
void register_rowwise_ops();

// Registers the f32 row kernels (lanes 16, tagged "bandwidth", and lanes 1).
void register_rowwise();
// Every op-library kernel the registry should know; idempotent.
void register_all();

}  // namespace kgen::ops
