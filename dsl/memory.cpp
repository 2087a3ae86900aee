#include "dsl/memory.h"

#include <vector>

#include "dsl/line.h"
#include "dsl/math.h"
#include "dsl/operators.h"

namespace kgen::dsl {

// ---- ElemRef ---------------------------------------------------------------

Value ElemRef::load_at(ir::SourceLoc loc) const {
  return detail::make(loc, ir::Op::Load, {detail::use(ptr_, loc), detail::use(index_, loc)});
}

Value ElemRef::load(std::source_location loc) const { return load_at(to_loc(loc)); }

void ElemRef::store_at(ir::SourceLoc loc, const Operand& v, ir::StoreHint hint) {
  ir::ValueId p = detail::use(ptr_, loc), i = detail::use(index_, loc);
  ir::ValueId x = detail::resolve(v, ptr_.type().element());
  if (hint == ir::kStoreNonTemporal && ptr_.type().space != ir::AddrSpace::Global)
    throw ir::Error(loc, "stream: streaming stores need a buffer parameter, not a shared array");
  record(loc, ir::Op::Store, {p, i, x}, hint);
}

void ElemRef::stream(const Operand& v) { store_at(v.loc(), v, ir::kStoreNonTemporal); }

void ElemRef::prefetch_at(ir::SourceLoc loc, int64_t hint) const {
  if (ptr_.type().space != ir::AddrSpace::Global)
    throw ir::Error(loc, "prefetch: needs a buffer parameter, not a shared array");
  record(loc, ir::Op::Prefetch, {detail::use(ptr_, loc), detail::use(index_, loc)}, hint);
}

void ElemRef::prefetch(std::source_location sl) const { prefetch_at(to_loc(sl), ir::kPrefetchL1); }
void ElemRef::prefetch_l2(std::source_location sl) const { prefetch_at(to_loc(sl), ir::kPrefetchL2); }
void ElemRef::prefetch_write(std::source_location sl) const { prefetch_at(to_loc(sl), ir::kPrefetchWrite); }

ElemRef& ElemRef::operator=(const Operand& v) {
  store_at(v.loc(), v);
  return *this;
}

ElemRef& ElemRef::operator=(const ElemRef& other) {
  Value v = other.load_at(other.loc_);
  store_at(loc_, Operand(v, loc_));
  return *this;
}

ElemRef& ElemRef::update(ir::Op op, const Operand& v) {
  Value old = load_at(v.loc());
  store_at(v.loc(), Operand(detail::binary(op, Operand(old, v.loc()), v), v.loc()));
  return *this;
}

ElemRef& ElemRef::operator+=(const Operand& v) { return update(ir::Op::Add, v); }
ElemRef& ElemRef::operator-=(const Operand& v) { return update(ir::Op::Sub, v); }
ElemRef& ElemRef::operator*=(const Operand& v) { return update(ir::Op::Mul, v); }
ElemRef& ElemRef::operator/=(const Operand& v) { return update(ir::Op::Div, v); }
ElemRef& ElemRef::operator%=(const Operand& v) { return update(ir::Op::Rem, v); }
ElemRef& ElemRef::operator&=(const Operand& v) { return update(ir::Op::And, v); }
ElemRef& ElemRef::operator|=(const Operand& v) { return update(ir::Op::Or, v); }
ElemRef& ElemRef::operator^=(const Operand& v) { return update(ir::Op::Xor, v); }
ElemRef& ElemRef::operator<<=(const Operand& v) { return update(ir::Op::Shl, v); }
ElemRef& ElemRef::operator>>=(const Operand& v) { return update(ir::Op::Shr, v); }

// ---- Array -----------------------------------------------------------------

ElemRef Array::operator[](const Operand& index) const {
  detail::use(ptr_, index.loc());
  // A literal index has its natural type (i32); handles keep theirs.
  Value i = detail::wrap(detail::resolve(index), index.loc());
  return ElemRef(ptr_, i, index.loc());
}

// ---- Var -------------------------------------------------------------------

Var& Var::operator=(const Operand& v) {
  ir::SourceLoc loc = v.loc();
  ir::ValueId x = detail::resolve(v, var_.type());
  record(loc, ir::Op::VarStore, {detail::use(var_, loc), x});
  return *this;
}

Var& Var::update(ir::Op op, const Operand& v) {
  Value old = detail::make(v.loc(), ir::Op::VarLoad, {detail::use(var_, v.loc())});
  return *this = Operand(detail::binary(op, Operand(old, v.loc()), v), v.loc());
}

Var& Var::operator+=(const Operand& v) { return update(ir::Op::Add, v); }
Var& Var::operator-=(const Operand& v) { return update(ir::Op::Sub, v); }
Var& Var::operator*=(const Operand& v) { return update(ir::Op::Mul, v); }
Var& Var::operator/=(const Operand& v) { return update(ir::Op::Div, v); }
Var& Var::operator%=(const Operand& v) { return update(ir::Op::Rem, v); }
Var& Var::operator&=(const Operand& v) { return update(ir::Op::And, v); }
Var& Var::operator|=(const Operand& v) { return update(ir::Op::Or, v); }
Var& Var::operator^=(const Operand& v) { return update(ir::Op::Xor, v); }
Var& Var::operator<<=(const Operand& v) { return update(ir::Op::Shl, v); }
Var& Var::operator>>=(const Operand& v) { return update(ir::Op::Shr, v); }

Value Var::get(std::source_location loc) const {
  ir::SourceLoc l = to_loc(loc);
  return detail::make(l, ir::Op::VarLoad, {detail::use(var_, l)});
}

Var var(const Operand& init) {
  return Var(detail::make(init.loc(), ir::Op::Var, {detail::resolve(init)}));
}

Var var(ir::Type t, const Operand& init) {
  return Var(detail::make(init.loc(), ir::Op::Var, {detail::resolve(init, t)}));
}

Array shared_array(ir::Type elem, int64_t count, std::source_location loc) {
  ir::SourceLoc l = to_loc(loc);
  if (elem.is_pointer() || elem.is_void() || !ir::valid_lanes(elem.lanes))
    throw ir::Error(l, "shared_array: element type must be a scalar or line value type, got " + elem.str());
  return Array(detail::make(l, ir::Op::SharedAlloc, {}, count, elem.pointer_to(ir::AddrSpace::Shared)));
}

// ---- lines at any offset ------------------------------------------------------

namespace {
// `at` widened to u64, recorded at the caller's location.
Value widened_index(const Value& at, ir::SourceLoc l) {
  return at.type() == ir::types::U64 ? at : cast(ir::types::U64, Operand(at, l));
}
}  // namespace

Value load_line(const Array& a, const Value& at, int lanes, std::source_location loc) {
  const ir::SourceLoc l = to_loc(loc);
  const Value at64 = widened_index(at, l);
  std::vector<Operand> lane;
  for (int q = 0; q < lanes; ++q) lane.emplace_back(a[Operand(Operand(at64, l) + Operand(uint64_t(q), l), l)].load_at(l), l);
  return make_line(lane);
}

void tile_mma_bf16(const TileOperand& c, const TileOperand& a, const TileOperand& b, const Value& m, const Value& n,
                   const Value& kp, const Value& ldc, const Value& lda, const Value& ldb, bool accumulate,
                   std::source_location loc) {
  const ir::SourceLoc l = to_loc(loc);
  auto size = [&](const Value& v) { return detail::use(v.type() == ir::types::U32 ? v : cast(ir::types::U32, Operand(v, l)), l); };
  std::vector<ir::ValueId> args;
  for (const TileOperand* t : {&c, &a, &b}) {
    args.push_back(detail::use(t->buf.pointer(), l));
    args.push_back(detail::use(widened_index(t->at, l), l));
  }
  for (const Value* v : {&m, &n, &kp, &ldc, &lda, &ldb}) args.push_back(size(*v));
  record(l, ir::Op::TileMmaBf16, std::move(args), accumulate ? 1 : 0);
}

void store_line(const Array& a, const Value& at, const Value& v, bool stream, std::source_location loc) {
  const ir::SourceLoc l = to_loc(loc);
  const Value at64 = widened_index(at, l);
  for (int q = 0; q < v.type().lanes; ++q) {
    ElemRef e = a[Operand(Operand(at64, l) + Operand(uint64_t(q), l), l)];
    const Operand x(extract(Operand(v, l), q), l);
    if (stream) e.stream(x);
    else e = x;
  }
}

}  // namespace kgen::dsl
