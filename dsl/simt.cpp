#include "dsl/simt.h"

namespace kgen::dsl {

using detail::make;
using detail::resolve;
using detail::use;
using ir::Op;

namespace {
Value builtin(Op op, int axis, SrcLoc loc) { return make(to_loc(loc), op, {}, axis); }

Value atomic(Op op, const ElemRef& e, std::initializer_list<const Operand*> vals) {
  ir::SourceLoc loc = (*vals.begin())->loc();
  std::vector<ir::ValueId> args{use(e.pointer(), loc), use(e.index(), loc)};
  ir::Type elem = e.pointer().type().element();
  for (const Operand* v : vals) args.push_back(resolve(*v, elem));
  return make(loc, op, std::move(args));
}
}  // namespace

Value global_id(int axis, SrcLoc loc) { return builtin(Op::GlobalId, axis, loc); }
Value local_id(int axis, SrcLoc loc) { return builtin(Op::LocalId, axis, loc); }
Value group_id(int axis, SrcLoc loc) { return builtin(Op::GroupId, axis, loc); }
Value num_groups(int axis, SrcLoc loc) { return builtin(Op::NumGroups, axis, loc); }
Value group_size(int axis, SrcLoc loc) { return builtin(Op::GroupSize, axis, loc); }
Value subgroup_size(SrcLoc loc) { return builtin(Op::SubgroupSize, 0, loc); }
Value subgroup_lane(SrcLoc loc) { return builtin(Op::SubgroupLane, 0, loc); }

void barrier(SrcLoc loc) { record(to_loc(loc), Op::Barrier); }

Value atomic_add(const ElemRef& e, const Operand& v) { return atomic(Op::AtomicAdd, e, {&v}); }
Value atomic_min(const ElemRef& e, const Operand& v) { return atomic(Op::AtomicMin, e, {&v}); }
Value atomic_max(const ElemRef& e, const Operand& v) { return atomic(Op::AtomicMax, e, {&v}); }
Value atomic_exch(const ElemRef& e, const Operand& v) { return atomic(Op::AtomicExch, e, {&v}); }
Value atomic_cas(const ElemRef& e, const Operand& compare, const Operand& v) {
  return atomic(Op::AtomicCas, e, {&compare, &v});
}
Value atomic_add(const Array& a, const Operand& index, const Operand& v) { return atomic_add(a[index], v); }
Value atomic_min(const Array& a, const Operand& index, const Operand& v) { return atomic_min(a[index], v); }
Value atomic_max(const Array& a, const Operand& index, const Operand& v) { return atomic_max(a[index], v); }
Value atomic_exch(const Array& a, const Operand& index, const Operand& v) { return atomic_exch(a[index], v); }
Value atomic_cas(const Array& a, const Operand& index, const Operand& compare, const Operand& v) {
  return atomic_cas(a[index], compare, v);
}

Value subgroup_add(const Operand& x) { return detail::unary(Op::SubgroupAdd, x); }
Value subgroup_min(const Operand& x) { return detail::unary(Op::SubgroupMin, x); }
Value subgroup_max(const Operand& x) { return detail::unary(Op::SubgroupMax, x); }
Value subgroup_shuffle(const Operand& x, const Operand& lane) {
  ir::ValueId v = resolve(x);
  return make(x.loc(), Op::SubgroupShuffle, {v, resolve(lane, ir::types::U32)});
}
Value subgroup_broadcast(const Operand& x, const Operand& lane) {
  ir::ValueId v = resolve(x);
  return make(x.loc(), Op::SubgroupBroadcast, {v, resolve(lane, ir::types::U32)});
}

}  // namespace kgen::dsl
