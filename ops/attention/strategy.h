// The attention family's untuned choice of variant on every target, for
// "attention" and "rope": the OpDefs' heuristics. The candidate lists (the
// tuning space) stay with the ops (ops.cpp, rope.cpp).
#pragma once
#include "ops/core/op.h"

namespace kgen::ops {

Variant attention_heuristic(const Problem& p, const TargetCaps& caps);
Variant rope_heuristic(const Problem& p, const TargetCaps& caps);

}  // namespace kgen::ops
