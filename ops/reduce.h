// The reduce op's GPU form for the last axis, for other ops whose GPU plan is
// such a reduction (global_avgpool: the mean of each plane).
#pragma once
#include <cstdint>

#include "ops/op.h"

namespace kgen::ops {

// One step reducing `rows` contiguous rows of n f32 with a workgroup of wg (a
// power of two) per row (reduce's impl=3): `kind` as the op's attribute, 0
// sum, 1 max, 2 min, 3 mean, 4 argmax (i32). Its buffers are x, y: the
// caller sets Step::buffers.
Step reduce_rows_group_step(int64_t rows, int64_t n, int kind, int wg);

}  // namespace kgen::ops
