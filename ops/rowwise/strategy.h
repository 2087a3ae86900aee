// The row ops' untuned choices (softmax, log_softmax, rmsnorm, layernorm):
// the rules live in strategy.cpp, the tuning space in ops.cpp's candidates.
#pragma once
#include "ops/core/op.h"
#include "ops/rowwise/rowwise.h"

namespace kgen::ops {

// The variant of row op `op` over the problem's rows x cols on the target
// (the OpDefs' heuristic).
Variant row_op_heuristic(RowOp op, const Problem& p, const TargetCaps& caps);

}  // namespace kgen::ops
