// The attention family's untuned choice of variant on every target, for
// "attention" and "rope": the OpDefs' heuristics. The candidate lists (the
// tuning space) stay with the ops (ops.cpp, rope.cpp).
#pragma once
#include <optional>

#include "ops/core/op.h"

namespace kgen::ops {

Variant attention_heuristic(const Problem& p, const TargetCaps& caps);
// The CPU flash form on f32x16 lines (impl 1) as the strategy sets it up,
// the baseline the register tiles are measured against; none where D is not
// whole lines or the target is not a CPU.
std::optional<Variant> attention_cpu_line_form(const Problem& p, const TargetCaps& caps);
// The CPU flash form on GEMM register tiles (impl 3) as the strategy sets it
// up, whether or not the heuristic picks it here; none off the CPU.
std::optional<Variant> attention_cpu_tile_form(const Problem& p, const TargetCaps& caps);
Variant rope_heuristic(const Problem& p, const TargetCaps& caps);

}  // namespace kgen::ops
