// Vector "lines": values of 2, 3, 4, 8 or 16 lanes of one scalar type. Math,
// comparisons and select work lane-wise on lines; a scalar handle never
// meets a line implicitly (splat it), but a literal adopts the line type:
// `v * 2.0f` on an f32x4 multiplies every lane by 2.
#pragma once
#include <source_location>
#include <vector>

#include "dsl/value.h"

namespace kgen::dsl {

// A line of `lanes` copies of x.
Value splat(const Operand& x, int lanes);

// A line from its lanes (2, 3, 4, 8 or 16 scalars of one type).
Value make_line(std::initializer_list<Operand> lanes);
Value make_line(const std::vector<Value>& lanes);  // lanes built in a loop
Value make_line(const std::vector<Operand>& lanes);  // the same, each at its own location
template <class... Ts>
Value make_line(const Operand& first, const Ts&... rest) {
  return make_line({first, Operand(rest, first.loc())...});
}

// The i32 line 0, 1, ..., lanes - 1 (lane numbers, for masks and indices).
Value lane_index(int lanes);

Value extract(const Operand& v, int lane);                        // v.lane(i)
Value insert(const Operand& v, int lane, const Operand& scalar);  // v with lane replaced

// Horizontal reductions of a line to its lane type.
Value reduce_add(const Operand& v);
Value reduce_mul(const Operand& v);
Value reduce_min(const Operand& v);
Value reduce_max(const Operand& v);

// The same reductions as a tree of halves (16 -> 8 -> 4 -> 2 -> 1 lanes):
// log2(lanes) dependent operations where reduce_*'s defined order (lane 0
// first, as the interpreter folds) is a chain of lanes - 1, which bounds
// loops that reduce a line per step. Max and min give reduce_max/min's
// value (exact operations) unless a lane is NaN; the sum may round differently.
Value tree_add(const Value& v);
Value tree_min(const Value& v);
Value tree_max(const Value& v);
// Many lines at once: lane i of the result is tree_*(lines[i]), for n lines
// of L lanes (n a power of two, n <= L; an n-lane result). Each level pairs
// lines with two-source shuffles, so n reductions cost ~2n shuffles and n
// operations where n separate trees cost 2 log2(L) each, and the result is
// a line for the lane-wise math that follows.
Value tree_add_lanes(const std::vector<Value>& lines);
Value tree_min_lanes(const std::vector<Value>& lines);
Value tree_max_lanes(const std::vector<Value>& lines);

}  // namespace kgen::dsl
