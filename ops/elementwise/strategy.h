// The elementwise family's untuned choices (ew_unary, ew_binary, ew_ternary,
// ew_chain, and every fused chain other families plan through
// fusion::chain_variant_for): the rules live in strategy.cpp, the tuning
// space in broadcast.cpp's candidates.
#pragma once
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"

namespace kgen::ops {

// The values of the elementwise ops' "impl" key.
enum ElementwiseImpl : int {
  kEwFused = 0,    // the whole chain in one kernel
  kEwUnfused = 1,  // one kernel per op with f32 temporaries (the baseline of fusion)
};

// The variant of an elementwise problem on the target (the OpDefs' heuristic).
Variant elementwise_heuristic(const Problem& p, const TargetCaps& caps);

namespace fusion {

// Is the sigmoid's reciprocal (ChainVariant::divide) cheaper as a line
// division than as Newton steps on this target?
bool cheap_line_division(const TargetCaps& caps);

}  // namespace fusion

}  // namespace kgen::ops
