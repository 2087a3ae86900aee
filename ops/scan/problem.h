// The scan family's problems and their implementation numbers: shared by the
// ops' candidates and plans (ops/scan/scan.cpp, ops/scan/ssm.cpp) and their
// strategy (ops/scan/strategy.cpp).
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops {

namespace scan_detail {

enum Impl { kBlelloch = 0, kChunked = 1, kLookback = 2, kNarrow = 3 };

struct Shape {
  int64_t rows, n;
  bool exclusive;
  ir::Type dt;
};
inline Shape shape_of(const Problem& p) {
  Shape s;
  s.rows = p.dims.size() == 2 ? p.dim(0) : 1;
  s.n = p.dims.back();
  s.exclusive = p.attr("exclusive") != 0;
  s.dt = ir::Type(p.dtype);
  return s;
}
// Rows of whole 16-lane lines: the look-back scan may stream them (nt=1).
inline bool whole_lines(const Shape& s) { return s.n % 16 == 0; }
// Rows of 2..24 values: the kernel with 16 rows in lanes (impl=3) takes them.
inline bool narrow_rows(const Shape& s) { return s.n >= 2 && s.n <= 24; }

}  // namespace scan_detail

namespace ssm_detail {

enum Impl { kGeneric = 0, kLines = 1 };

struct Shape {
  int64_t b, l, dm, n;
  bool softplus, d_skip;
};
inline Shape shape_of(const Problem& p) {
  return {p.dim(0), p.dim(1), p.dim(2), p.dim(3), p.attr("delta_softplus") != 0, p.attr("d_skip", 1) != 0};
}
// The lines kernel (impl=1, CPU) takes a line of 16 channels per work-item.
inline bool lines_fit(const Shape& s) { return s.dm >= 16; }

}  // namespace ssm_detail

}  // namespace kgen::ops
