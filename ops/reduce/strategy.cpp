// The reduce op's rules, first match wins: on GPUs a workgroup per long row
// or a work-item per output; on the CPU narrow rows in lanes, the row walk in
// lines, short columns as periodic lines, else the columns kernel.
#include "ops/reduce/strategy.h"

#include <algorithm>

#include "ops/reduce/reduce.h"

namespace kgen::ops {

// Rule (GPU, the last axis): a workgroup per row once rows are long enough to
// share (a work-item per row leaves a GPU idle on a few long rows); 256
// work-items from 4096 elements where the device allows them.
int reduce_rows_group_wg(int64_t n, const TargetCaps& caps) {
  if (n < 256) return 0;
  return n >= 4096 && (!caps.max_workgroup_threads || caps.max_workgroup_threads >= 256) ? 256 : 64;
}

namespace reduce_op {

namespace {

// Rule (GPU): a workgroup per long last-axis row, else a work-item per
// output (on a strided axis adjacent work-items then read adjacent elements).
Variant gpu_variant(const Shape& s, const TargetCaps& caps) {
  if (const int wg = s.inner == 1 ? reduce_rows_group_wg(s.n, caps) : 0)
    return Variant{}.set("impl", kGroup).set("wg", wg).set("sg", caps.subgroups ? 1 : 0);
  return Variant{}.set("impl", kSimple).set("wg", 64);
}

// Rule: rows of 2-24 values run 16 rows in lanes (narrow_rows_kernel): the
// row walk spends a horizontal fold and a scalar tail on every row (100000 x
// 10 max, 1 thread: ~25x the row walk).
bool rows_in_lanes(const Shape& s) { return s.inner == 1 && s.n >= 2 && s.n <= 24; }

// Rule: short columns (2-15 values inside the axis, not argmax) read the whole
// run as lines (periodic_cols_kernel), where the columns kernel walked each
// column alone with a stride.
bool periodic_columns(const Shape& s) { return s.inner <= 15 && s.kind != kArgmax; }

}  // namespace

// Rule: sums accumulate in an L1 array, 4 steps a pass; max, min and argmax
// in registers, whose compare and select chains made the array passes slower.
int column_steps(const Shape& s) { return s.kind == kSum || s.kind == kMean ? 4 : 0; }

// Rule: with the L1 array, the widest of 128..16 lines per work-item that
// still gives each thread a group (and, with few groups, the same number);
// 8 lines otherwise (and in registers).
int column_lines(const Shape& s, int steps, const TargetCaps& caps) {
  if (!steps) return 8;
  const int64_t threads = caps.threads ? caps.threads : 1, nfull = std::max<int64_t>(1, s.inner / 16);
  for (int w : {128, 64, 32, 16}) {
    const int64_t groups = (nfull + w - 1) / w * s.outer;
    if (groups >= 4 * threads || (groups >= threads && groups % threads == 0)) return w;
  }
  return 8;
}

Variant heuristic(const Shape& s, const TargetCaps& caps) {
  if (!is_cpu(caps)) return gpu_variant(s, caps);
  if (rows_in_lanes(s)) return Variant{}.set("impl", kNarrow);
  if (s.inner == 1) return Variant{}.set("impl", kRows);
  if (periodic_columns(s)) return Variant{}.set("impl", kPeriodic);
  const int steps = column_steps(s);
  return Variant{}.set("impl", kCols).set("cl", column_lines(s, steps, caps)).set("rb", steps);
}

}  // namespace reduce_op

}  // namespace kgen::ops
