#include "dsl/line.h"

#include "dsl/math.h"
#include "dsl/operators.h"

namespace kgen::dsl {

using detail::make;
using detail::resolve;
using ir::Op;

Value splat(const Operand& x, int lanes) {
  ir::ValueId s = resolve(x);
  return make(x.loc(), Op::Splat, {s}, 0, x.type().with_lanes(lanes));
}

namespace {
Value make_line_of(const Operand* lanes, size_t n) {
  if (n == 0) throw ir::Error({}, "make_line needs at least two lanes");
  const Operand* typed = lanes;
  for (size_t i = 0; i < n; ++i)
    if (!lanes[i].is_literal()) {
      typed = &lanes[i];
      break;
    }
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(resolve(lanes[i], typed->type()));
  return make(lanes[0].loc(), Op::Construct, std::move(ids));
}
}  // namespace

Value make_line(std::initializer_list<Operand> lanes) { return make_line_of(lanes.begin(), lanes.size()); }

Value make_line(const std::vector<Operand>& lanes) { return make_line_of(lanes.data(), lanes.size()); }

Value make_line(const std::vector<Value>& lanes) {
  std::vector<Operand> ops(lanes.begin(), lanes.end());
  return make_line_of(ops.data(), ops.size());
}

Value lane_index(int lanes) {
  std::vector<Value> l;
  for (int i = 0; i < lanes; ++i) l.push_back(constant(ir::types::I32, i));
  return make_line(l);
}

Value extract(const Operand& v, int lane) { return make(v.loc(), Op::Extract, {resolve(v)}, lane); }

Value insert(const Operand& v, int lane, const Operand& scalar) {
  ir::ValueId line = resolve(v);
  return make(v.loc(), Op::Insert, {line, resolve(scalar, v.type().scalar())}, lane);
}

Value reduce_add(const Operand& v) { return detail::unary(Op::ReduceAdd, v); }
Value reduce_mul(const Operand& v) { return detail::unary(Op::ReduceMul, v); }
Value reduce_min(const Operand& v) { return detail::unary(Op::ReduceMin, v); }
Value reduce_max(const Operand& v) { return detail::unary(Op::ReduceMax, v); }

namespace {

// See tree_*_lanes: each line holds `per` sources of w lanes; a level pairs
// lines (the first line's sources, then the second's) and halves w, then
// the last line halves its sources' lanes until one is left per source.
template <class Combine>
Value lines_tree(std::vector<Value> ls, Combine combine) {
  const int L = ls.empty() ? 0 : ls[0].type().lanes;
  const int n = int(ls.size());
  if (n < 1 || n > L || (n & (n - 1)) || (L & (L - 1)))
    throw ir::Error({}, "tree reduction of lines: needs 1..L lines of L lanes, powers of two");
  int w = L;
  auto halves = [&](const std::vector<const Value*>& srcs) {
    std::vector<Value> lo, hi;
    for (const Value* s : srcs)
      for (int k = 0; k < s->type().lanes / w; ++k)
        for (int j = 0; j < w / 2; ++j) lo.push_back(extract(*s, k * w + j)), hi.push_back(extract(*s, k * w + w / 2 + j));
    return lo.size() > 1 ? combine(make_line(lo), make_line(hi)) : combine(lo[0], hi[0]);
  };
  while (ls.size() > 1) {
    std::vector<Value> next;
    for (size_t i = 0; i < ls.size(); i += 2) next.push_back(halves({&ls[i], &ls[i + 1]}));
    ls = std::move(next);
    w /= 2;
  }
  while (w > 1) {
    ls[0] = halves({&ls[0]});
    w /= 2;
  }
  return ls[0];
}

template <class Combine>
Value lane_tree(const Value& v, Combine combine) {
  if (v.type().lanes == 3) return combine(combine(extract(v, 0), extract(v, 1)), extract(v, 2));
  return lines_tree({v}, combine);
}
}  // namespace

Value tree_add_lanes(const std::vector<Value>& l) { return lines_tree(l, [](const Value& a, const Value& b) { return a + b; }); }
Value tree_min_lanes(const std::vector<Value>& l) { return lines_tree(l, [](const Value& a, const Value& b) { return min(a, b); }); }
Value tree_max_lanes(const std::vector<Value>& l) { return lines_tree(l, [](const Value& a, const Value& b) { return max(a, b); }); }

Value tree_add(const Value& v) { return lane_tree(v, [](const Value& a, const Value& b) { return a + b; }); }
Value tree_min(const Value& v) { return lane_tree(v, [](const Value& a, const Value& b) { return min(a, b); }); }
Value tree_max(const Value& v) { return lane_tree(v, [](const Value& a, const Value& b) { return max(a, b); }); }

}  // namespace kgen::dsl
