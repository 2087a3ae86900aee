#include "graph/nodes/util.h"

#include <algorithm>

namespace kgen::graph {

Shape broadcast_shapes(const InferCtx& c, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape r(rank, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = r[rank - s.size() + i];
      const int64_t e = s[i];
      if (e == d || e == 1) continue;
      if (d == 1) d = e;
      else {
        std::string all;
        for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + shape_str(t);
        c.invalid("shapes " + all + " do not broadcast");
      }
    }
  return r;
}

int64_t normalize_axis(const InferCtx& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    c.invalid("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> axes_attr_or_input(const InferCtx& c, const char* attr, int input) {
  if (c.node.has(attr)) return c.node.attr_ints(attr);
  if (c.has_in(input)) return c.need_constant(input, attr).ints();
  return std::nullopt;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = int(s.size()) - 2; i >= 0; --i) st[size_t(i)] = st[size_t(i) + 1] * s[size_t(i) + 1];
  return st;
}

}  // namespace kgen::graph
