// The reduce op's GPU form for the last axis, for other ops whose GPU plan is
// such a reduction (global_avgpool: the mean of each plane).
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops {

// One step reducing `rows` contiguous rows of n f32 with a workgroup of wg (a
// power of two) per row (reduce's impl=3): `kind` as the op's attribute, 0
// sum, 1 max, 2 min, 3 mean, 4 argmax (i32). It reads slot 0 (x) and writes
// slot 1 (y). With subgroups (the device must have them) the workgroup
// combines its partials with subgroup reductions.
Step reduce_rows_group_step(int64_t rows, int64_t n, int kind, int wg, bool subgroups);

// The GPU heuristics' workgroup for that step over rows of n elements, or 0
// where a work-item per row is the better form (rows under 256 elements).
// One of the reduce op's rules (ops/reduce/strategy.cpp).
int reduce_rows_group_wg(int64_t n, const TargetCaps& caps);

}  // namespace kgen::ops
