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
template <class... Ts>
Value make_line(const Operand& first, const Ts&... rest) {
  return make_line({first, Operand(rest, first.loc())...});
}

Value extract(const Operand& v, int lane);                        // v.lane(i)
Value insert(const Operand& v, int lane, const Operand& scalar);  // v with lane replaced

// Horizontal reductions of a line to its lane type.
Value reduce_add(const Operand& v);
Value reduce_mul(const Operand& v);
Value reduce_min(const Operand& v);
Value reduce_max(const Operand& v);

}  // namespace kgen::dsl
