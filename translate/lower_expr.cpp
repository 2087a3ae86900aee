// Expressions: constants, operators, conversions and places in memory.
#include <optional>

#include "translate/lowerer.h"

namespace kgen::translate {

using clang::dyn_cast;
using clang::isa;

namespace {
std::optional<ir::Op> binary_op(clang::BinaryOperatorKind k) {
  switch (k) {
    case clang::BO_Mul: return ir::Op::Mul;
    case clang::BO_Div: return ir::Op::Div;
    case clang::BO_Rem: return ir::Op::Rem;
    case clang::BO_Add: return ir::Op::Add;
    case clang::BO_Sub: return ir::Op::Sub;
    case clang::BO_Shl: return ir::Op::Shl;
    case clang::BO_Shr: return ir::Op::Shr;
    case clang::BO_And: return ir::Op::And;
    case clang::BO_Xor: return ir::Op::Xor;
    case clang::BO_Or: return ir::Op::Or;
    case clang::BO_LT: return ir::Op::Lt;
    case clang::BO_GT: return ir::Op::Gt;
    case clang::BO_LE: return ir::Op::Le;
    case clang::BO_GE: return ir::Op::Ge;
    case clang::BO_EQ: return ir::Op::Eq;
    case clang::BO_NE: return ir::Op::Ne;
    default: return std::nullopt;
  }
}

}  // namespace

// ---------------------------------------------------------------- values

ir::ValueId Lowerer::zero(ir::Type t) {
  if (t.is_vector()) return splat(zero(t.scalar()), t);
  return t.is_float() ? b_->const_float(t, 0.0) : b_->const_int(t, 0);
}

ir::ValueId Lowerer::splat(ir::ValueId scalar, ir::Type line) {
  return b_->op(ir::Op::Splat, {convert(scalar, line.scalar())}, 0, line);
}

ir::ValueId Lowerer::convert(ir::ValueId v, ir::Type to) {
  ir::Type from = b_->type_of(v);
  if (from == to) return v;
  if (to.is_vector() && !from.is_vector()) return splat(v, to);
  if (to.is_bool()) return b_->op(ir::Op::Ne, {v, zero(from)});
  return b_->cast(to, v);
}

ir::ValueId Lowerer::arith(ir::Op op, ir::ValueId a, ir::ValueId b) { return b_->op(op, {a, b}); }

bool Lowerer::try_constant(const clang::Expr* e, ir::ValueId& out) {
  clang::QualType t = e->getType();
  if (e->isValueDependent() || !(t->isIntegerType() || t->isRealFloatingType())) return false;
  clang::Expr::EvalResult r;
  if (!e->EvaluateAsRValue(r, ctx_) || r.HasSideEffects) return false;
  ir::Type it = scalar_type(t, e->getBeginLoc(), "a constant");
  if (r.Val.isInt()) {
    const llvm::APSInt& v = r.Val.getInt();
    out = b_->const_int(it, v.isSigned() ? v.getSExtValue() : int64_t(v.getZExtValue()));
    constants_[out] = v.isSigned() ? v.getSExtValue() : int64_t(v.getZExtValue());
    return true;
  }
  if (r.Val.isFloat()) {
    bool lost = false;
    llvm::APFloat f = r.Val.getFloat();
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    out = b_->const_float(it, f.convertToDouble());
    return true;
  }
  return false;
}

int64_t Lowerer::constant_int(const clang::Expr* e, const std::string& what) {
  clang::Expr::EvalResult r;
  if (e->isValueDependent() || !e->EvaluateAsInt(r, ctx_)) fail(e->getBeginLoc(), what + " must be a constant expression");
  return r.Val.getInt().getExtValue();
}

ir::ValueId Lowerer::rvalue_as(const clang::Expr* e, ir::Type t) {
  ir::ValueId v = rvalue(e);
  if (v == ir::kNoValue) fail(e->getBeginLoc(), "a void expression is used as a value");
  return convert(v, t);
}

ir::ValueId Lowerer::rvalue(const clang::Expr* e) {
  b_->loc = loc_of(e->getExprLoc());
  ir::ValueId c;
  if (try_constant(e, c)) return c;
  e = e->IgnoreParens();
  if (const auto* x = dyn_cast<clang::FullExpr>(e)) return rvalue(x->getSubExpr());
  if (const auto* x = dyn_cast<clang::MaterializeTemporaryExpr>(e)) return rvalue(x->getSubExpr());
  if (const auto* x = dyn_cast<clang::CXXDefaultArgExpr>(e)) return rvalue(x->getExpr());
  if (const auto* x = dyn_cast<clang::SubstNonTypeTemplateParmExpr>(e)) return rvalue(x->getReplacement());
  if (const auto* x = dyn_cast<clang::CompoundAssignOperator>(e)) return compound_assign(x);
  if (const auto* x = dyn_cast<clang::BinaryOperator>(e)) return binary(x);
  if (const auto* x = dyn_cast<clang::UnaryOperator>(e)) return unary(x);
  if (const auto* x = dyn_cast<clang::CallExpr>(e)) return call(x);
  if (isa<clang::CXXThrowExpr>(e)) fail(e->getBeginLoc(), "throw: exceptions are not supported in kernels");
  if (isa<clang::CXXNewExpr>(e)) fail(e->getBeginLoc(), "new: heap allocation is not supported in kernels");
  if (isa<clang::CXXDeleteExpr>(e)) fail(e->getBeginLoc(), "delete: heap allocation is not supported in kernels");
  if (isa<clang::LambdaExpr>(e)) fail(e->getBeginLoc(), "lambdas are not supported yet (write a helper function)");
  if (e->getType()->isPointerType() || e->getType()->isArrayType())
    fail(e->getBeginLoc(), "a pointer is used as a value: pointers can only be indexed, offset or passed to helpers");
  if (const auto* x = dyn_cast<clang::InitListExpr>(e)) return init_list(x);
  if (const auto* x = dyn_cast<clang::ArraySubscriptExpr>(e); x && !x->isGLValue()) return load(lane_of(x), e->getExprLoc());
  if (e->isGLValue()) return load(lvalue(e), e->getExprLoc());
  if (const auto* x = dyn_cast<clang::CastExpr>(e)) return cast_expr(x);
  if (const auto* x = dyn_cast<clang::ConditionalOperator>(e)) return conditional(x);
  if (isa<clang::ImplicitValueInitExpr, clang::CXXScalarValueInitExpr>(e))
    return zero(scalar_type(e->getType(), e->getBeginLoc(), "a value"));
  fail(e->getBeginLoc(), std::string("expression '") + e->getStmtClassName() + "' is not supported in kernels");
}

ir::ValueId Lowerer::cast_expr(const clang::CastExpr* e) {
  const clang::Expr* sub = e->getSubExpr();
  auto target = [&] { return scalar_type(e->getType(), e->getBeginLoc(), "the cast's result"); };
  switch (e->getCastKind()) {
    case clang::CK_LValueToRValue:
      if (const auto* c = dyn_cast<clang::ConditionalOperator>(sub->IgnoreParens())) return conditional(c);
      return load(lvalue(sub), sub->getExprLoc());
    case clang::CK_NoOp:
    case clang::CK_ToVoid:
      return rvalue(sub);
    case clang::CK_IntegralCast:
    case clang::CK_FloatingCast:
    case clang::CK_IntegralToFloating:
    case clang::CK_FloatingToIntegral:
    case clang::CK_IntegralToBoolean:
    case clang::CK_FloatingToBoolean: {
      ir::ValueId v = rvalue(sub);
      b_->loc = loc_of(e->getExprLoc());
      return convert(v, target());
    }
    case clang::CK_VectorSplat: {
      ir::ValueId v = rvalue(sub);
      b_->loc = loc_of(e->getExprLoc());
      return splat(v, target());
    }
    case clang::CK_PointerToBoolean:
      fail(e->getBeginLoc(), "a pointer is tested as a bool: buffers are never null in kernels");
    default:
      fail(e->getBeginLoc(), std::string("cast '") + e->getCastKindName() + "' is not supported in kernels");
  }
}

ir::ValueId Lowerer::binary(const clang::BinaryOperator* e) {
  clang::BinaryOperatorKind k = e->getOpcode();
  if (k == clang::BO_Comma) {
    rvalue(e->getLHS());
    return rvalue(e->getRHS());
  }
  if (k == clang::BO_LAnd || k == clang::BO_LOr) return logical(e);
  if (e->getLHS()->getType()->isPointerType() || e->getRHS()->getType()->isPointerType())
    fail(e->getOperatorLoc(), "pointer " + std::string(k == clang::BO_Assign ? "assignment" : "arithmetic or comparison") +
                                  " outside an index: kernels cannot store or compare pointers");
  if (k == clang::BO_Assign) {
    ir::ValueId v = rvalue_as(e->getRHS(), scalar_type(e->getLHS()->getType(), e->getBeginLoc(), "the assigned value"));
    LValue lv = lvalue(e->getLHS());
    store(lv, v, e->getOperatorLoc());
    return v;
  }
  std::optional<ir::Op> op = binary_op(k);
  if (!op) fail(e->getOperatorLoc(), "operator '" + e->getOpcodeStr().str() + "' is not supported in kernels");
  ir::ValueId l = rvalue(e->getLHS());
  ir::ValueId r = rvalue(e->getRHS());
  b_->loc = loc_of(e->getOperatorLoc());
  if (*op == ir::Op::Shl || *op == ir::Op::Shr) r = convert(r, b_->type_of(l));
  if (e->isComparisonOp() && e->getType()->isVectorType()) return line_compare(*op, l, r, e);
  return arith(*op, l, r);
}

// A comparison of lines is, as in C++, an integer line of all ones where it
// holds; select() and its kind take the IR's bool line straight (mask_of_).
ir::ValueId Lowerer::line_compare(ir::Op op, ir::ValueId l, ir::ValueId r, const clang::BinaryOperator* e) {
  ir::Type mt = scalar_type(e->getType(), e->getBeginLoc(), "the comparison's mask");
  ir::Type lt = b_->type_of(l), rt = b_->type_of(r);
  if (!lt.is_vector()) l = splat(l, rt);
  if (!rt.is_vector()) r = splat(r, lt);
  ir::ValueId cmp = arith(op, l, r);
  ir::ValueId mask = b_->op(ir::Op::Select, {cmp, splat(b_->const_int(mt.scalar(), -1), mt), zero(mt)});
  mask_of_[mask] = cmp;
  return mask;
}

ir::ValueId Lowerer::compound_assign(const clang::CompoundAssignOperator* e) {
  if (e->getLHS()->getType()->isPointerType())
    fail(e->getOperatorLoc(), "pointer arithmetic on a variable: pointer variables cannot change (index it instead)");
  clang::BinaryOperatorKind k = clang::BinaryOperator::getOpForCompoundAssignment(e->getOpcode());
  std::optional<ir::Op> op = binary_op(k);
  if (!op) fail(e->getOperatorLoc(), "operator '" + e->getOpcodeStr().str() + "' is not supported in kernels");
  ir::ValueId r = rvalue(e->getRHS());
  LValue lv = lvalue(e->getLHS());
  ir::ValueId cur = load(lv, e->getExprLoc());
  b_->loc = loc_of(e->getOperatorLoc());
  ir::Type ct = scalar_type(e->getComputationLHSType(), e->getBeginLoc(), "the computation");
  ir::ValueId res = arith(*op, convert(cur, ct), convert(r, ct));
  res = convert(res, scalar_type(e->getLHS()->getType(), e->getBeginLoc(), "the assigned variable"));
  store(lv, res, e->getOperatorLoc());
  return res;
}

// a && b evaluates b only when a holds (b may read memory a guards); a
// simple b becomes a plain `and`.
ir::ValueId Lowerer::logical(const clang::BinaryOperator* e) {
  bool is_and = e->getOpcode() == clang::BO_LAnd;
  ir::ValueId l = rvalue_as(e->getLHS(), ir::types::Bool);
  if (is_simple(e->getRHS())) {
    ir::ValueId r = rvalue_as(e->getRHS(), ir::types::Bool);
    b_->loc = loc_of(e->getOperatorLoc());
    return arith(is_and ? ir::Op::And : ir::Op::Or, l, r);
  }
  b_->loc = loc_of(e->getOperatorLoc());
  ir::ValueId result = b_->var(l);
  b_->begin_if(is_and ? l : b_->op(ir::Op::Not, {l}));
  b_->var_store(result, rvalue_as(e->getRHS(), ir::types::Bool));
  b_->end_if();
  return b_->var_load(result);
}

ir::ValueId Lowerer::unary(const clang::UnaryOperator* e) {
  const clang::Expr* sub = e->getSubExpr();
  switch (e->getOpcode()) {
    case clang::UO_Plus: return rvalue(sub);
    case clang::UO_Minus: {
      ir::ValueId v = rvalue(sub);
      ir::Type t = b_->type_of(v);
      b_->loc = loc_of(e->getOperatorLoc());
      return t.is_int() && !t.is_signed() ? arith(ir::Op::Sub, zero(t), v) : b_->op(ir::Op::Neg, {v});
    }
    case clang::UO_LNot: {
      ir::ValueId v = rvalue_as(sub, ir::types::Bool);
      b_->loc = loc_of(e->getOperatorLoc());
      return b_->op(ir::Op::Not, {v});
    }
    case clang::UO_Not: {
      ir::ValueId v = rvalue(sub);
      b_->loc = loc_of(e->getOperatorLoc());
      return b_->op(ir::Op::Not, {v});
    }
    case clang::UO_PreInc:
    case clang::UO_PreDec:
    case clang::UO_PostInc:
    case clang::UO_PostDec: {
      if (sub->getType()->isPointerType())
        fail(e->getOperatorLoc(), "pointer increment: pointer variables cannot change (index it instead)");
      LValue lv = lvalue(sub);
      ir::ValueId cur = load(lv, e->getExprLoc());
      ir::Type t = b_->type_of(cur);
      if (t.is_bool()) fail(e->getOperatorLoc(), "incrementing a bool is not supported");
      b_->loc = loc_of(e->getOperatorLoc());
      ir::ValueId one = t.is_float() ? b_->const_float(t, 1.0) : b_->const_int(t, 1);
      ir::ValueId next = arith(e->isIncrementOp() ? ir::Op::Add : ir::Op::Sub, cur, one);
      store(lv, next, e->getOperatorLoc());
      return e->isPrefix() ? next : cur;
    }
    case clang::UO_Deref: return load(lvalue(e), e->getExprLoc());
    case clang::UO_AddrOf:
      fail(e->getOperatorLoc(), "taking an address: only &a[i] as the first operand of an atomic is supported");
    default:
      fail(e->getOperatorLoc(), "operator '" + clang::UnaryOperator::getOpcodeStr(e->getOpcode()).str() +
                                    "' is not supported in kernels");
  }
}

// c ? a : b with simple arms is a select; otherwise only the arm taken runs.
ir::ValueId Lowerer::conditional(const clang::ConditionalOperator* e) {
  ir::Type t = scalar_type(e->getType(), e->getBeginLoc(), "the conditional's result");
  ir::ValueId c = rvalue_as(e->getCond(), ir::types::Bool);
  if (is_simple(e->getTrueExpr()) && is_simple(e->getFalseExpr())) {
    ir::ValueId a = rvalue_as(e->getTrueExpr(), t);
    ir::ValueId b = rvalue_as(e->getFalseExpr(), t);
    b_->loc = loc_of(e->getQuestionLoc());
    return b_->op(ir::Op::Select, {c, a, b});
  }
  b_->loc = loc_of(e->getQuestionLoc());
  ir::ValueId result = b_->var(zero(t));
  b_->begin_if(c);
  b_->var_store(result, rvalue_as(e->getTrueExpr(), t));
  b_->loc = loc_of(e->getColonLoc());
  b_->begin_else();
  b_->var_store(result, rvalue_as(e->getFalseExpr(), t));
  b_->end_if();
  return b_->var_load(result);
}

// ---------------------------------------------------------------- memory

ir::ValueId Lowerer::index_add(ir::ValueId a, ir::ValueId b) {
  if (a == ir::kNoValue) return b;
  return arith(ir::Op::Add, a, convert(b, b_->type_of(a)));
}

ir::ValueId Lowerer::const_index(int64_t v, ir::Type t) {
  ir::ValueId c = b_->const_int(t, v);
  constants_[c] = v;
  return c;
}

Address Lowerer::subscript(const Address& base, const clang::Expr* index) {
  ir::ValueId i = rvalue(index);
  ir::Type t = b_->type_of(i);
  if (!t.is_int()) fail(index->getBeginLoc(), "an index must be an integer, got " + t.str());
  b_->loc = loc_of(index->getExprLoc());
  int64_t stride = 1;
  for (int64_t d : base.dims) stride *= d;
  Address a = base;
  a.dims.clear();
  if (!base.dims.empty()) a.dims.assign(base.dims.begin() + 1, base.dims.end());
  // Constant indices stay constants, so local array elements resolve statically.
  auto ci = constants_.find(i);
  auto cb = base.index == ir::kNoValue ? constants_.end() : constants_.find(base.index);
  if (base.index == ir::kNoValue && stride == 1) {
    a.index = i;
    return a;
  }
  if (ci != constants_.end() && (base.index == ir::kNoValue || cb != constants_.end())) {
    int64_t flat = ci->second * stride + (base.index == ir::kNoValue ? 0 : cb->second);
    a.index = const_index(flat, base.index == ir::kNoValue ? t : b_->type_of(base.index));
    return a;
  }
  if (stride != 1) i = arith(ir::Op::Mul, i, b_->const_int(t, stride));
  a.index = index_add(base.index, i);
  return a;
}

// An element of a local array: the variable itself for a constant index,
// else a select over all of them (an index out of range reads element 0).
ir::ValueId Lowerer::load_local(const Address& a) {
  auto c = a.index == ir::kNoValue ? constants_.end() : constants_.find(a.index);
  int64_t n = int64_t(a.local.size());
  if (a.index == ir::kNoValue) return b_->var_load(a.local[0]);
  if (c != constants_.end()) {
    if (c->second < 0 || c->second >= n)
      throw ir::Error(b_->loc, "index " + std::to_string(c->second) + " is out of bounds of a local array of " + std::to_string(n));
    return b_->var_load(a.local[c->second]);
  }
  ir::Type t = b_->type_of(a.index);
  ir::ValueId r = b_->var_load(a.local[0]);
  for (int64_t k = 1; k < n; ++k) {
    ir::ValueId hit = b_->op(ir::Op::Eq, {a.index, b_->const_int(t, k)});
    r = b_->op(ir::Op::Select, {hit, b_->var_load(a.local[k]), r});
  }
  return r;
}

// Stores to the variable a constant index names, else to whichever matches.
void Lowerer::store_local(const Address& a, ir::ValueId v) {
  int64_t n = int64_t(a.local.size());
  ir::Type vt = b_->type_of(a.local[0]);
  v = convert(v, vt);
  if (a.index == ir::kNoValue) return b_->var_store(a.local[0], v);
  if (auto c = constants_.find(a.index); c != constants_.end()) {
    if (c->second < 0 || c->second >= n)
      throw ir::Error(b_->loc, "index " + std::to_string(c->second) + " is out of bounds of a local array of " + std::to_string(n));
    return b_->var_store(a.local[c->second], v);
  }
  ir::Type t = b_->type_of(a.index);
  for (int64_t k = 0; k < n; ++k) {
    b_->begin_if(b_->op(ir::Op::Eq, {a.index, b_->const_int(t, k)}));
    b_->var_store(a.local[k], v);
    b_->end_if();
  }
}

Address Lowerer::address(const clang::Expr* e) {
  e = e->IgnoreParens();
  if (const auto* c = dyn_cast<clang::CastExpr>(e)) {
    clang::CastKind k = c->getCastKind();
    if (k == clang::CK_LValueToRValue || k == clang::CK_ArrayToPointerDecay || k == clang::CK_NoOp)
      return address(c->getSubExpr());
    fail(e->getBeginLoc(), "pointer cast '" + std::string(c->getCastKindName()) +
                               "': reinterpreting memory is not supported in kernels");
  }
  if (const auto* r = dyn_cast<clang::DeclRefExpr>(e)) {
    auto it = env_.find(r->getDecl());
    if (it == env_.end() || it->second.kind != Binding::Kind::Address)
      fail(e->getBeginLoc(), "'" + r->getDecl()->getNameAsString() +
                                 "' is not a buffer parameter, a shared array or a pointer into one");
    return it->second.addr;
  }
  if (const auto* s = dyn_cast<clang::ArraySubscriptExpr>(e)) return subscript(address(s->getBase()), s->getIdx());
  if (const auto* b = dyn_cast<clang::BinaryOperator>(e); b && b->getOpcode() == clang::BO_Add) {
    bool left = b->getLHS()->getType()->isPointerType();
    Address a = address(left ? b->getLHS() : b->getRHS());
    ir::ValueId off = rvalue(left ? b->getRHS() : b->getLHS());
    b_->loc = loc_of(b->getOperatorLoc());
    a.index = index_add(a.index, off);
    return a;
  }
  if (const auto* u = dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_AddrOf) {
    if (u->getSubExpr()->getType()->isRecordType())
      fail(e->getBeginLoc(), "address of a struct: pointers to structs are not supported (use a reference)");
    LValue lv = lvalue(u->getSubExpr());
    if (lv.kind != LValue::Kind::Elem)
      fail(e->getBeginLoc(), "address of a local variable: only elements of buffers and shared arrays have addresses");
    return lv.addr;
  }
  if (isa<clang::CXXNewExpr>(e)) fail(e->getBeginLoc(), "new: heap allocation is not supported in kernels");
  if (const auto* b = dyn_cast<clang::BinaryOperator>(e); b && b->getOpcode() == clang::BO_Sub)
    fail(b->getOperatorLoc(), "subtracting from a pointer is not supported (add a signed offset instead)");
  fail(e->getBeginLoc(), std::string("pointer expression '") + e->getStmtClassName() + "' is not supported in kernels");
}

LValue Lowerer::lvalue(const clang::Expr* e) {
  e = e->IgnoreParens();
  if (const auto* r = dyn_cast<clang::DeclRefExpr>(e)) {
    const clang::ValueDecl* d = r->getDecl();
    auto it = env_.find(d);
    if (it != env_.end()) {
      const Binding& bd = it->second;
      if (bd.kind == Binding::Kind::Var) return {LValue::Kind::Var, bd.id, {}};
      if (bd.kind == Binding::Kind::Value) return {LValue::Kind::Value, bd.id, {}};
      if (bd.kind == Binding::Kind::Ref) return bd.ref;
      if (bd.kind == Binding::Kind::Struct)
        fail(e->getBeginLoc(), "struct '" + d->getNameAsString() + "' is used as a value (name one of its members)");
      fail(e->getBeginLoc(), "pointer '" + d->getNameAsString() + "' is used as a value (index it instead)");
    }
    ir::ValueId c;
    if (const auto* v = dyn_cast<clang::VarDecl>(d); v && v->hasGlobalStorage()) {
      if (try_constant(e, c)) return {LValue::Kind::Value, c, {}};
      fail(e->getBeginLoc(), "global variable '" + d->getNameAsString() +
                                 "' is not supported (pass it as a parameter, or make it constexpr)");
    }
    fail(e->getBeginLoc(), "'" + d->getNameAsString() + "' cannot be used in a kernel");
  }
  if (const auto* s = dyn_cast<clang::ArraySubscriptExpr>(e); s && s->getBase()->getType()->isVectorType()) return lane_of(s);
  if (const auto* s = dyn_cast<clang::ArraySubscriptExpr>(e)) {
    Address a = subscript(address(s->getBase()), s->getIdx());
    if (!a.dims.empty()) fail(e->getBeginLoc(), "a row of a multi-dimensional array is used as a value");
    return {LValue::Kind::Elem, ir::kNoValue, a};
  }
  if (const auto* u = dyn_cast<clang::UnaryOperator>(e)) {
    if (u->getOpcode() == clang::UO_Deref) return {LValue::Kind::Elem, ir::kNoValue, address(u->getSubExpr())};
    if (u->getOpcode() == clang::UO_PreInc || u->getOpcode() == clang::UO_PreDec) {
      unary(u);
      return lvalue(u->getSubExpr());
    }
  }
  if (const auto* b = dyn_cast<clang::BinaryOperator>(e); b && b->isAssignmentOp()) {
    rvalue(b);
    return lvalue(b->getLHS());
  }
  if (const auto* m = dyn_cast<clang::MaterializeTemporaryExpr>(e)) return {LValue::Kind::Value, rvalue(m->getSubExpr()), {}};
  if (const auto* c = dyn_cast<clang::ImplicitCastExpr>(e); c && c->getCastKind() == clang::CK_NoOp)
    return lvalue(c->getSubExpr());
  if (const auto* m = dyn_cast<clang::MemberExpr>(e)) return member(m);
  fail(e->getBeginLoc(), std::string("expression '") + e->getStmtClassName() + "' cannot be read or assigned in a kernel");
}

// v[k] of a line: k must be a constant lane number.
LValue Lowerer::lane_of(const clang::ArraySubscriptExpr* e) {
  const clang::Expr* base = e->getBase();
  int64_t lane = constant_int(e->getIdx(), "a lane index");
  int lanes = int(base->getType()->castAs<clang::VectorType>()->getNumElements());
  if (lane < 0 || lane >= lanes)
    fail(e->getIdx()->getBeginLoc(), "lane " + std::to_string(lane) + " is out of range of a line of " + std::to_string(lanes));
  LValue line = base->isGLValue() ? lvalue(base) : LValue{LValue::Kind::Value, rvalue(base), {}, {}, 0};
  LValue lv;
  lv.kind = LValue::Kind::Lane;
  lv.line.push_back(std::move(line));
  lv.lane = int(lane);
  return lv;
}

// {a, b, c, d} of a line type: the lanes given, then zeros.
ir::ValueId Lowerer::init_list(const clang::InitListExpr* e) {
  ir::Type t = scalar_type(e->getType(), e->getBeginLoc(), "a braced initializer");
  if (!t.is_vector()) {
    if (e->getNumInits() == 1) return rvalue_as(e->getInit(0), t);
    if (e->getNumInits() == 0) return zero(t);
    fail(e->getBeginLoc(), "a braced initializer with several values is only supported for lines and arrays");
  }
  if (e->getNumInits() == 1 && e->getInit(0)->getType()->isVectorType()) return rvalue_as(e->getInit(0), t);
  std::vector<ir::ValueId> lanes;
  for (unsigned i = 0; i < t.lanes; ++i)
    lanes.push_back(i < e->getNumInits() ? rvalue_as(e->getInit(i), t.scalar()) : zero(t.scalar()));
  b_->loc = loc_of(e->getBeginLoc());
  return b_->op(ir::Op::Construct, lanes, 0, t);
}

ir::ValueId Lowerer::load(const LValue& lv, clang::SourceLocation l) {
  b_->loc = loc_of(l);
  switch (lv.kind) {
    case LValue::Kind::Var: return b_->var_load(lv.id);
    case LValue::Kind::Value: return lv.id;
    case LValue::Kind::Lane: {
      ir::ValueId line = load(lv.line[0], l);
      return b_->op(ir::Op::Extract, {line}, lv.lane);
    }
    case LValue::Kind::Elem: break;
  }
  if (!lv.addr.local.empty()) return load_local(lv.addr);
  ir::ValueId i = lv.addr.index != ir::kNoValue ? lv.addr.index : b_->const_int(ir::types::U32, 0);
  return b_->load(lv.addr.ptr, i);
}

void Lowerer::store(const LValue& lv, ir::ValueId v, clang::SourceLocation l) {
  b_->loc = loc_of(l);
  switch (lv.kind) {
    case LValue::Kind::Var: b_->var_store(lv.id, convert(v, b_->type_of(lv.id))); return;
    case LValue::Kind::Value: fail(l, "assignment to a value that cannot change here (a const parameter or temporary)");
    case LValue::Kind::Lane: {
      ir::ValueId line = load(lv.line[0], l);
      ir::ValueId lane = convert(v, b_->type_of(line).scalar());
      store(lv.line[0], b_->op(ir::Op::Insert, {line, lane}, lv.lane), l);
      return;
    }
    case LValue::Kind::Elem: break;
  }
  if (!lv.addr.local.empty()) return store_local(lv.addr, v);
  ir::Type pt = b_->type_of(lv.addr.ptr);
  ir::ValueId i = lv.addr.index != ir::kNoValue ? lv.addr.index : b_->const_int(ir::types::U32, 0);
  b_->store(lv.addr.ptr, i, convert(v, pt.element()));
}

}  // namespace kgen::translate
