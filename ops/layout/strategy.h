// The layout family's untuned choice of variant on every target, for
// "transpose": the OpDef's heuristic (and move_variant_for, declared in
// ops/layout/data_movement.h). The candidate list (the tuning space)
// stays with the op (transpose.cpp).
#pragma once
#include "ops/core/op.h"

namespace kgen::ops {

Variant transpose_heuristic(const Problem& p, const TargetCaps& caps);

}  // namespace kgen::ops
