// The scan family's untuned choice of variant on every target, for "scan"
// and "selective_scan": the OpDefs' heuristics. The candidate lists (the
// tuning space) stay with the ops (scan.cpp, ssm.cpp).
#pragma once
#include "ops/core/op.h"

namespace kgen::ops {

Variant scan_heuristic(const Problem& p, const TargetCaps& caps);
Variant selective_scan_heuristic(const Problem& p, const TargetCaps& caps);

}  // namespace kgen::ops
