#include "dsl/line.h"

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

Value make_line(const std::vector<Value>& lanes) {
  std::vector<Operand> ops(lanes.begin(), lanes.end());
  return make_line_of(ops.data(), ops.size());
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

}  // namespace kgen::dsl
