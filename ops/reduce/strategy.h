// The reduce op's untuned choices: the rules live in strategy.cpp, the tuning
// space in reduce.cpp's candidates. (reduce_rows_group_wg, the GPU rule other
// ops share, is declared in ops/reduce/reduce.h and defined with these.)
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops::reduce_op {

// The "kind" attribute and the "impl" key.
enum Kind { kSum = 0, kMax = 1, kMin = 2, kMean = 3, kArgmax = 4 };
enum Impl { kRows = 0, kCols = 1, kSimple = 2, kGroup = 3, kNarrow = 4, kPeriodic = 5 };

// A problem collapsed around its axis: outer x n (the axis) x inner.
struct Shape {
  int64_t outer = 1, n = 1, inner = 1;
  int kind = kSum;
  bool i64 = false;  // argmax writes i64 indices
};

// The variant of the problem on the target (the OpDef's heuristic).
Variant heuristic(const Shape& s, const TargetCaps& caps);

// The columns kernel (impl 1): steps of the axis per pass over an L1 array of
// accumulators ("rb"; 0: accumulators in registers), and lines per
// work-item ("cl") for those steps. The plan fills unset keys with these.
int column_steps(const Shape& s);
int column_lines(const Shape& s, int steps, const TargetCaps& caps);

}  // namespace kgen::ops::reduce_op
