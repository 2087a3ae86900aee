// Statements: declarations, structured control flow, returns.
#include <functional>

#include "translate/lowerer.h"

namespace kgen::translate {

using clang::dyn_cast;
using clang::isa;

void Lowerer::stmt(const clang::Stmt* s) {
  if (!s) return;
  b_->loc = loc_of(s->getBeginLoc());
  if (const auto* c = dyn_cast<clang::CompoundStmt>(s)) {
    for (const clang::Stmt* x : c->body()) stmt(x);
  } else if (const auto* d = dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* x : d->decls()) {
      if (const auto* v = dyn_cast<clang::VarDecl>(x)) var_decl(v);
      else if (!isa<clang::TypedefNameDecl, clang::StaticAssertDecl, clang::UsingDecl, clang::UsingDirectiveDecl>(x))
        fail(x->getLocation(), "this declaration is not supported inside a kernel");
    }
  } else if (const auto* e = dyn_cast<clang::Expr>(s)) {
    rvalue(e);
  } else if (const auto* i = dyn_cast<clang::IfStmt>(s)) {
    if_stmt(i);
  } else if (const auto* f = dyn_cast<clang::ForStmt>(s)) {
    for_stmt(f);
  } else if (const auto* w = dyn_cast<clang::WhileStmt>(s)) {
    while_stmt(w);
  } else if (const auto* dw = dyn_cast<clang::DoStmt>(s)) {
    do_stmt(dw);
  } else if (isa<clang::BreakStmt>(s)) {
    b_->break_();
  } else if (isa<clang::ContinueStmt>(s)) {
    b_->continue_();
  } else if (const auto* r = dyn_cast<clang::ReturnStmt>(s)) {
    return_stmt(r);
  } else if (const auto* a = dyn_cast<clang::AttributedStmt>(s)) {
    stmt(a->getSubStmt());
  } else if (isa<clang::NullStmt>(s)) {
  } else if (isa<clang::CXXTryStmt>(s)) {
    fail(s->getBeginLoc(), "try: exceptions are not supported in kernels");
  } else if (const auto* sw = dyn_cast<clang::SwitchStmt>(s)) {
    switch_stmt(sw);
  } else if (isa<clang::SwitchCase>(s)) {
    fail(s->getBeginLoc(), "a case label inside a nested statement is not supported (cases label the switch's own block)");
  } else if (isa<clang::GotoStmt, clang::IndirectGotoStmt, clang::LabelStmt>(s)) {
    fail(s->getBeginLoc(), "goto and labels are not supported (use structured control flow)");
  } else if (isa<clang::CXXForRangeStmt>(s)) {
    fail(s->getBeginLoc(), "range-based for is not supported (write an index loop)");
  } else {
    fail(s->getBeginLoc(), std::string("statement '") + s->getStmtClassName() + "' is not supported in kernels");
  }
}

void Lowerer::var_decl(const clang::VarDecl* vd) {
  std::string name = vd->getNameAsString();
  clang::QualType t = vd->getType();
  b_->loc = loc_of(vd->getLocation());
  if (has_annotation(vd, "kgen::shared")) return shared_decl(vd);
  if (vd->isStaticLocal() && !vd->isConstexpr())
    fail(vd->getLocation(), "static local '" + name + "': use KGEN_SHARED for workgroup memory");
  if (t->isArrayType()) return local_array_decl(vd);
  const clang::Expr* init = vd->getInit();
  if (t->isReferenceType()) {
    if (!init) fail(vd->getLocation(), "reference '" + name + "' without initializer");
    clang::QualType pt = t->getPointeeType();
    if (const clang::RecordDecl* rd = struct_type(pt, vd->getLocation(), "reference '" + name + "'")) {
      if (strip(init)->isGLValue()) env_[vd] = {Binding::Kind::Struct, ir::kNoValue, {}, {}, struct_vars(init)};
      else struct_decl(vd, rd);  // bound to a temporary
      return;
    }
    if (pt.isConstQualified() || !strip(init)->isGLValue())
      env_[vd] = {Binding::Kind::Value, rvalue_as(init, scalar_type(pt, vd->getLocation(), "'" + name + "'")), {}, {}};
    else
      env_[vd] = {Binding::Kind::Ref, ir::kNoValue, {}, lvalue(init)};
    return;
  }
  if (t->isPointerType()) {
    if (t->getPointeeType()->isPointerType())
      fail(vd->getLocation(), "'" + name + "' points to pointers: pointers stored in memory are not supported");
    if (!init) fail(vd->getLocation(), "pointer '" + name + "' must be initialized");
    if (mutated_.count(vd))
      fail(vd->getLocation(), "pointer '" + name + "' is modified: pointer variables cannot change (index it instead)");
    env_[vd] = {Binding::Kind::Address, ir::kNoValue, address(init), {}};
    return;
  }
  if (const clang::RecordDecl* rd = struct_type(t, vd->getLocation(), "variable '" + name + "'")) return struct_decl(vd, rd);
  ir::Type st = scalar_type(t, vd->getLocation(), "variable '" + name + "'");
  ir::ValueId v = init ? rvalue_as(init, st) : zero(st);  // C leaves it undefined; zero is one choice
  b_->loc = loc_of(vd->getLocation());
  env_[vd] = mutated_.count(vd) ? Binding{Binding::Kind::Var, b_->var(v), {}, {}} : Binding{Binding::Kind::Value, v, {}, {}};
}

// The extents of a constant-size array type, outermost first; `t` becomes
// the element type (empty and unchanged for a non-array).
std::vector<int64_t> Lowerer::array_extents(clang::QualType& t) const {
  std::vector<int64_t> extents;
  while (const auto* at = ctx_.getAsConstantArrayType(t)) {
    extents.push_back(int64_t(at->getSize().getZExtValue()));
    t = at->getElementType();
  }
  return extents;
}

// KGEN_SHARED T name[A][B]...: one flat shared array, indexed row-major.
void Lowerer::shared_decl(const clang::VarDecl* vd) {
  std::string name = vd->getNameAsString();
  clang::QualType t = vd->getType();
  const std::vector<int64_t> extents = array_extents(t);
  if (extents.empty()) fail(vd->getLocation(), "shared '" + name + "' must be an array of constant size");
  if (vd->hasInit()) fail(vd->getLocation(), "shared array '" + name + "' cannot have an initializer (fill it, then barrier())");
  ir::Type elem = scalar_type(t, vd->getLocation(), "the elements of shared array '" + name + "'");
  int64_t count = 1;
  for (int64_t e : extents) count *= e;
  Address a{b_->shared(elem, count), ir::kNoValue, std::vector<int64_t>(extents.begin() + 1, extents.end())};
  env_[vd] = {Binding::Kind::Address, ir::kNoValue, a, {}};
}

// A local array of constant size: one IR variable per element (the IR has
// no private memory), initialized from its braces or to zero.
void Lowerer::local_array_decl(const clang::VarDecl* vd) {
  constexpr int64_t kMaxElements = 64;  // each access of a run-time index costs one select per element
  std::string name = vd->getNameAsString();
  clang::QualType t = vd->getType();
  const std::vector<int64_t> extents = array_extents(t);
  if (extents.empty()) fail(vd->getLocation(), "local array '" + name + "' must have a constant size");
  ir::Type elem = scalar_type(t, vd->getLocation(), "the elements of local array '" + name + "'");
  int64_t count = 1;
  for (int64_t e : extents) count *= e;
  if (count > kMaxElements)
    fail(vd->getLocation(), "local array '" + name + "' has " + std::to_string(count) + " elements; at most " +
                                std::to_string(kMaxElements) + " are supported (use KGEN_SHARED or a buffer)");
  // Flatten nested braces: {{1, 2}, {3, 4}} holds 1, 2, 3, 4.
  std::vector<const clang::Expr*> inits;
  std::function<void(const clang::Expr*)> flatten = [&](const clang::Expr* e) {
    const auto* il = dyn_cast<clang::InitListExpr>(e->IgnoreParens());
    if (il && il->getType()->isArrayType()) {
      for (const clang::Expr* x : il->inits()) flatten(x);
      if (il->hasArrayFiller()) return;
    } else if (!isa<clang::ImplicitValueInitExpr>(e)) {
      inits.push_back(e);
    }
  };
  if (vd->getInit()) flatten(vd->getInit());
  Address a;
  a.dims.assign(extents.begin() + 1, extents.end());
  for (int64_t i = 0; i < count; ++i) {
    ir::ValueId v = size_t(i) < inits.size() ? rvalue_as(inits[i], elem) : zero(elem);
    b_->loc = loc_of(vd->getLocation());
    a.local.push_back(b_->var(v));
  }
  env_[vd] = {Binding::Kind::Address, ir::kNoValue, a, {}};
}

void Lowerer::if_stmt(const clang::IfStmt* s) {
  if (s->getInit()) stmt(s->getInit());
  if (s->isConstexpr()) {
    bool taken = constant_int(s->getCond(), "an if constexpr condition") != 0;
    stmt(taken ? s->getThen() : s->getElse());
    return;
  }
  if (s->getConditionVariableDeclStmt()) stmt(s->getConditionVariableDeclStmt());
  ir::ValueId c = rvalue_as(s->getCond(), ir::types::Bool);
  b_->loc = loc_of(s->getBeginLoc());
  b_->begin_if(c);
  stmt(s->getThen());
  if (s->getElse()) {
    b_->loc = loc_of(s->getElseLoc());
    b_->begin_else();
    stmt(s->getElse());
  }
  b_->end_if();
}

namespace {
// True when `s` holds a continue that belongs to the loop around it.
bool has_own_continue(const clang::Stmt* s) {
  if (!s) return false;
  if (isa<clang::ContinueStmt>(s)) return true;
  if (isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(s)) return false;
  for (const clang::Stmt* c : s->children())
    if (has_own_continue(c)) return true;
  return false;
}

// True when `s` assigns, increments or takes the address of `v`.
bool modifies(const clang::Stmt* s, const clang::VarDecl* v) {
  if (!s) return false;
  auto names_v = [&](const clang::Expr* e) {
    const auto* r = dyn_cast<clang::DeclRefExpr>(strip(e));
    return r && r->getDecl() == v;
  };
  if (const auto* bo = dyn_cast<clang::BinaryOperator>(s); bo && bo->isAssignmentOp() && names_v(bo->getLHS())) return true;
  if (const auto* uo = dyn_cast<clang::UnaryOperator>(s);
      uo && (uo->isIncrementDecrementOp() || uo->getOpcode() == clang::UO_AddrOf) && names_v(uo->getSubExpr()))
    return true;
  if (const auto* ce = dyn_cast<clang::CallExpr>(s))
    for (const clang::Expr* a : ce->arguments())
      if (names_v(a) && a->isGLValue()) return true;  // possibly bound to a reference
  for (const clang::Stmt* c : s->children())
    if (modifies(c, v)) return true;
  return false;
}
}  // namespace

// for (T i = a; i < b; ++i / i++ / i += s) with b and s loop-invariant and i
// not modified in the body is an IR for loop; anything else a general loop.
bool Lowerer::canonical_for(const clang::ForStmt* s) {
  const auto* ds = dyn_cast_or_null<clang::DeclStmt>(s->getInit());
  if (!ds || !ds->isSingleDecl()) return false;
  const auto* iv = dyn_cast<clang::VarDecl>(ds->getSingleDecl());
  if (!iv || !iv->getInit() || !iv->getType()->isIntegerType() || iv->getType()->isBooleanType()) return false;
  const auto* cond = dyn_cast_or_null<clang::BinaryOperator>(s->getCond() ? s->getCond()->IgnoreParens() : nullptr);
  if (!cond || cond->getOpcode() != clang::BO_LT) return false;
  const auto* lhs = dyn_cast<clang::DeclRefExpr>(cond->getLHS()->IgnoreParenImpCasts());
  if (!lhs || lhs->getDecl() != iv) return false;
  if (!ctx_.hasSameType(cond->getLHS()->getType(), iv->getType().getUnqualifiedType())) return false;
  if (!is_invariant(cond->getRHS())) return false;
  const clang::Expr* inc = s->getInc() ? s->getInc()->IgnoreParens() : nullptr;
  const clang::Expr* step = nullptr;
  auto names_iv = [&](const clang::Expr* e) {
    const auto* r = dyn_cast<clang::DeclRefExpr>(e->IgnoreParens());
    return r && r->getDecl() == iv;
  };
  if (const auto* u = dyn_cast_or_null<clang::UnaryOperator>(inc)) {
    if (!u->isIncrementOp() || !names_iv(u->getSubExpr())) return false;
  } else if (const auto* c = dyn_cast_or_null<clang::CompoundAssignOperator>(inc)) {
    if (c->getOpcode() != clang::BO_AddAssign || !names_iv(c->getLHS()) || !is_invariant(c->getRHS())) return false;
    step = c->getRHS();
  } else {
    return false;
  }
  if (modifies(s->getBody(), iv)) return false;

  ir::Type t = scalar_type(iv->getType(), iv->getLocation(), "loop variable");
  ir::ValueId start = rvalue_as(iv->getInit(), t);
  ir::ValueId end = rvalue_as(cond->getRHS(), t);
  ir::ValueId st = step ? rvalue_as(step, t) : b_->const_int(t, 1);
  b_->loc = loc_of(s->getBeginLoc());
  ir::ValueId i = b_->begin_for(start, end, st);
  env_[iv] = {Binding::Kind::Value, i, {}, {}};
  stmt(s->getBody());
  b_->end_for();
  return true;
}

void Lowerer::break_unless(ir::ValueId cond) {
  ir::ValueId nc = b_->op(ir::Op::Not, {cond});
  b_->begin_if(nc);
  b_->break_();
  b_->end_if();
}

// General for: loop { if (!cond) break; body; inc }. A body with a continue
// must still run inc first, so then inc moves to the top, behind a flag that
// skips it on the first trip.
void Lowerer::for_stmt(const clang::ForStmt* s) {
  if (s->getConditionVariable()) fail(s->getBeginLoc(), "a declaration in a for condition is not supported");
  if (canonical_for(s)) return;
  stmt(s->getInit());
  bool inc_first = s->getInc() && has_own_continue(s->getBody());
  ir::ValueId first = ir::kNoValue;
  b_->loc = loc_of(s->getBeginLoc());
  if (inc_first) first = b_->var(b_->const_int(ir::types::Bool, 1));
  b_->begin_loop();
  if (inc_first) {
    b_->begin_if(b_->op(ir::Op::Not, {b_->var_load(first)}));
    rvalue(s->getInc());
    b_->end_if();
    b_->var_store(first, b_->const_int(ir::types::Bool, 0));
  }
  if (s->getCond()) {
    ir::ValueId c = rvalue_as(s->getCond(), ir::types::Bool);
    b_->loc = loc_of(s->getBeginLoc());
    break_unless(c);
  }
  stmt(s->getBody());
  if (s->getInc() && !inc_first) rvalue(s->getInc());
  b_->loc = loc_of(s->getBeginLoc());
  b_->end_loop();
}

void Lowerer::while_stmt(const clang::WhileStmt* s) {
  if (s->getConditionVariable()) fail(s->getBeginLoc(), "a declaration in a while condition is not supported");
  b_->begin_loop();
  ir::ValueId c = rvalue_as(s->getCond(), ir::types::Bool);
  b_->loc = loc_of(s->getBeginLoc());
  break_unless(c);
  stmt(s->getBody());
  b_->end_loop();
}

void Lowerer::do_stmt(const clang::DoStmt* s) {
  if (has_own_continue(s->getBody())) fail(s->getBeginLoc(), "continue inside do-while is not supported yet");
  b_->begin_loop();
  stmt(s->getBody());
  ir::ValueId c = rvalue_as(s->getCond(), ir::types::Bool);
  b_->loc = loc_of(s->getWhileLoc());
  break_unless(c);
  b_->end_loop();
}

namespace {
// A break in `s` that leaves the switch around it (not one of a nested loop
// or switch), or nullptr.
const clang::Stmt* switch_break(const clang::Stmt* s) {
  if (!s) return nullptr;
  if (isa<clang::BreakStmt>(s)) return s;
  if (isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt, clang::SwitchStmt>(s)) return nullptr;
  for (const clang::Stmt* c : s->children())
    if (const clang::Stmt* b = switch_break(c)) return b;
  return nullptr;
}

// True when control never runs off the end of `s`: it ends in break,
// return or continue (possibly inside braces).
bool ends_case(const clang::Stmt* s) {
  if (const auto* c = dyn_cast_or_null<clang::CompoundStmt>(s)) return !c->body_empty() && ends_case(c->body_back());
  return isa_and_nonnull<clang::BreakStmt, clang::ReturnStmt, clang::ContinueStmt>(s);
}
}  // namespace

// A switch is an if / else-if chain over its cases, default last; each case
// must end in break (or return / continue): fallthrough is refused, and so
// is a break before a case's end (the chain has nothing to leave).
void Lowerer::switch_stmt(const clang::SwitchStmt* s) {
  if (s->getInit()) stmt(s->getInit());
  if (s->getConditionVariableDeclStmt()) stmt(s->getConditionVariableDeclStmt());
  ir::ValueId x = rvalue(s->getCond());
  ir::Type t = b_->type_of(x);
  const auto* body = dyn_cast<clang::CompoundStmt>(s->getBody());
  if (!body) fail(s->getBody()->getBeginLoc(), "a switch body must be a braced block of cases");
  struct Case {
    std::vector<int64_t> values;
    bool is_default = false;
    std::vector<const clang::Stmt*> stmts;
    clang::SourceLocation loc;
  };
  std::vector<Case> cases;
  for (const clang::Stmt* st : body->body()) {
    if (!isa<clang::SwitchCase>(st)) {
      if (cases.empty()) fail(st->getBeginLoc(), "a statement before the first case label never runs");
      cases.back().stmts.push_back(st);
      continue;
    }
    if (!cases.empty() && !ends_case(cases.back().stmts.empty() ? nullptr : cases.back().stmts.back()))
      fail(st->getBeginLoc(), "the case before this one falls through into it: end it with break "
                              "(fallthrough is not supported)");
    Case c;
    c.loc = st->getBeginLoc();
    while (const auto* sc = dyn_cast<clang::SwitchCase>(st)) {  // case 1: case 2: nest
      if (const auto* cs = dyn_cast<clang::CaseStmt>(sc)) {
        if (cs->caseStmtIsGNURange()) fail(cs->getBeginLoc(), "case ranges (a ... b) are not supported");
        c.values.push_back(constant_int(cs->getLHS(), "a case value"));
      } else {
        c.is_default = true;
      }
      st = sc->getSubStmt();
    }
    c.stmts.push_back(st);
    cases.push_back(std::move(c));
  }
  std::function<void(const clang::Stmt*, bool)> lower_case = [&](const clang::Stmt* st, bool last) {
    if (last && isa<clang::BreakStmt>(st)) return;
    if (const auto* cs = dyn_cast<clang::CompoundStmt>(st); cs && last) {
      for (const clang::Stmt* c : cs->body()) lower_case(c, c == cs->body_back());
      return;
    }
    if (const clang::Stmt* brk = switch_break(st))
      fail(brk->getBeginLoc(), "break before the end of a case is not supported (use if / else inside the case)");
    stmt(st);
  };
  auto lower_body = [&](const Case& c) {
    for (size_t i = 0; i < c.stmts.size(); ++i) lower_case(c.stmts[i], i + 1 == c.stmts.size());
  };
  const Case* fallback = nullptr;
  int open = 0;
  for (const Case& c : cases) {
    if (c.is_default) {
      fallback = &c;  // runs when no case value matches, wherever it stands
      continue;
    }
    b_->loc = loc_of(c.loc);
    if (open > 0) b_->begin_else();
    ir::ValueId hit = ir::kNoValue;
    for (int64_t v : c.values) {
      ir::ValueId eq = b_->op(ir::Op::Eq, {x, b_->const_int(t, v)});
      hit = hit == ir::kNoValue ? eq : b_->op(ir::Op::Or, {hit, eq});
    }
    b_->begin_if(hit);
    ++open;
    lower_body(c);
  }
  if (fallback && open > 0) {
    b_->loc = loc_of(fallback->loc);
    b_->begin_else();
  }
  if (fallback) lower_body(*fallback);
  for (; open > 0; --open) b_->end_if();
}

void Lowerer::return_stmt(const clang::ReturnStmt* s) {
  if (frames_.empty()) {
    b_->return_();
    return;
  }
  Frame& f = *frames_.back();
  ir::ValueId v = s->getRetValue() ? rvalue_as(s->getRetValue(), f.ret) : ir::kNoValue;
  b_->loc = loc_of(s->getBeginLoc());
  if (!f.wrapped) {
    f.tail_value = v;
    return;
  }
  if (v != ir::kNoValue) b_->var_store(f.result_var, v);
  b_->break_();
}

}  // namespace kgen::translate
