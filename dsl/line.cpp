#include "dsl/line.h"

namespace kgen::dsl {

using detail::make;
using detail::resolve;
using ir::Op;

Value splat(const Operand& x, int lanes) {
  ir::ValueId s = resolve(x);
  return make(x.loc(), Op::Splat, {s}, 0, x.type().with_lanes(lanes));
}

Value make_line(std::initializer_list<Operand> lanes) {
  if (lanes.size() == 0) throw ir::Error({}, "make_line needs at least two lanes");
  const Operand* typed = lanes.begin();
  for (const Operand& o : lanes)
    if (!o.is_literal()) {
      typed = &o;
      break;
    }
  std::vector<ir::ValueId> ids;
  for (const Operand& o : lanes) ids.push_back(resolve(o, typed->type()));
  return make(lanes.begin()->loc(), Op::Construct, std::move(ids));
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
