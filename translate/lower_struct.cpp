// Structs of scalars as local values: a struct local is one IR variable per
// field, so member access is a variable access and the passes see scalars.
#include "translate/lowerer.h"

namespace kgen::translate {

using clang::dyn_cast;
using clang::isa;

namespace {
const clang::Expr* strip_struct(const clang::Expr* e) {
  while (true) {
    e = strip(e);
    if (const auto* c = dyn_cast<clang::CastExpr>(e);
        c && (c->getCastKind() == clang::CK_NoOp || c->getCastKind() == clang::CK_ConstructorConversion ||
              c->getCastKind() == clang::CK_LValueToRValue)) {
      e = c->getSubExpr();
    } else if (const auto* b = dyn_cast<clang::CXXBindTemporaryExpr>(e)) {
      e = b->getSubExpr();
    } else {
      return e;
    }
  }
}
}  // namespace

// The record of t when t is a struct a kernel can hold (an aggregate of
// scalar or line fields: no bases, virtual functions, bit-fields, unions);
// nullptr when t is no record at all.
const clang::RecordDecl* Lowerer::struct_type(clang::QualType t, clang::SourceLocation l, const std::string& what) {
  const clang::CXXRecordDecl* rd = t.getCanonicalType()->getAsCXXRecordDecl();
  if (!rd) return nullptr;
  std::string name = rd->getNameAsString();
  if (rd->isLambda()) fail(l, "lambdas are not supported yet (write a helper function)");
  if (!rd->hasDefinition()) fail(l, what + " has type '" + name + "', which is only declared");
  if (rd->isUnion()) fail(l, what + " is a union: reinterpreting memory is not supported in kernels");
  if (!rd->isAggregate() || rd->getNumBases() > 0 || rd->isPolymorphic())
    fail(l, what + " has type '" + name + "': structs in kernels are plain aggregates of scalars "
                                          "(no constructors, base classes or virtual functions)");
  for (const clang::FieldDecl* f : rd->fields()) {
    std::string field = what + ": field '" + f->getNameAsString() + "' of struct '" + name + "'";
    if (f->isBitField()) fail(l, field + " is a bit-field, which kernels cannot use");
    scalar_type(f->getType(), l, field);
  }
  return rd;
}

void Lowerer::struct_decl(const clang::VarDecl* vd, const clang::RecordDecl* rd) {
  std::vector<ir::ValueId> values = struct_values(vd->getInit(), rd);
  Binding bd;
  bd.kind = Binding::Kind::Struct;
  b_->loc = loc_of(vd->getLocation());
  size_t i = 0;
  for (const clang::FieldDecl* f : rd->fields()) bd.fields[f] = b_->var(values[i++]);
  env_[vd] = bd;
}

// The field values of a struct expression, in declaration order: braces
// (missing fields take their default member initializer, else zero), a
// copy of a struct local, or default construction.
std::vector<ir::ValueId> Lowerer::struct_values(const clang::Expr* e, const clang::RecordDecl* rd) {
  auto defaults = [&](size_t from) {
    std::vector<ir::ValueId> out;
    size_t i = 0;
    for (const clang::FieldDecl* f : rd->fields()) {
      if (i++ < from) continue;
      ir::Type t = scalar_type(f->getType(), f->getLocation(), "field '" + f->getNameAsString() + "'");
      out.push_back(f->hasInClassInitializer() ? rvalue_as(f->getInClassInitializer(), t) : zero(t));
    }
    return out;
  };
  if (!e) return defaults(0);
  e = strip_struct(e);
  if (const auto* fc = dyn_cast<clang::ExplicitCastExpr>(e)) return struct_values(fc->getSubExpr(), rd);
  if (const auto* il = dyn_cast<clang::InitListExpr>(e)) {
    if (il->getNumInits() == 1 && il->getInit(0)->getType()->isRecordType()) return struct_values(il->getInit(0), rd);
    std::vector<ir::ValueId> out;
    size_t i = 0;
    for (const clang::FieldDecl* f : rd->fields()) {
      if (i >= il->getNumInits()) break;
      const clang::Expr* x = il->getInit(unsigned(i++));
      ir::Type t = scalar_type(f->getType(), x->getBeginLoc(), "field '" + f->getNameAsString() + "'");
      if (const auto* d = dyn_cast<clang::CXXDefaultInitExpr>(x)) x = d->getExpr();
      out.push_back(isa<clang::ImplicitValueInitExpr>(x) ? zero(t) : rvalue_as(x, t));
    }
    std::vector<ir::ValueId> rest = defaults(out.size());
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  if (const auto* c = dyn_cast<clang::CXXConstructExpr>(e)) {
    if (c->getNumArgs() == 0) return defaults(0);
    if (c->getNumArgs() == 1) return struct_values(c->getArg(0), rd);
  }
  if (isa<clang::CallExpr>(e)) fail(e->getBeginLoc(), "a helper returning a struct is not supported yet (pass it by reference)");
  std::vector<ir::ValueId> out;
  const StructVars& vars = struct_vars(e);
  b_->loc = loc_of(e->getBeginLoc());
  for (const clang::FieldDecl* f : rd->fields()) out.push_back(b_->var_load(vars.at(f)));
  return out;
}

// The variables of a struct local (or a reference to one) that `e` names.
StructVars& Lowerer::struct_vars(const clang::Expr* e) {
  e = strip_struct(e);
  if (const auto* r = dyn_cast<clang::DeclRefExpr>(e)) {
    auto it = env_.find(r->getDecl());
    if (it != env_.end() && it->second.kind == Binding::Kind::Struct) return it->second.fields;
  }
  if (isa<clang::MemberExpr>(e)) fail(e->getBeginLoc(), "structs inside structs are not supported");
  fail(e->getBeginLoc(), "this struct expression is not supported (structs are locals, references to them, or braces)");
}

LValue Lowerer::member(const clang::MemberExpr* e) {
  if (e->isArrow()) fail(e->getOperatorLoc(), "'->': pointers to structs are not supported (use a struct local)");
  const auto* field = dyn_cast<clang::FieldDecl>(e->getMemberDecl());
  if (!field) fail(e->getMemberLoc(), "'" + e->getMemberDecl()->getNameAsString() + "' is not a data member");
  StructVars& vars = struct_vars(e->getBase());
  auto it = vars.find(field);
  if (it == vars.end()) fail(e->getMemberLoc(), "member '" + field->getNameAsString() + "' of an unknown struct");
  return {LValue::Kind::Var, it->second, {}, {}, 0};
}

// s = t (the implicit copy assignment): fieldwise, reading t first.
void Lowerer::struct_assign(const clang::Expr* lhs, const clang::Expr* rhs) {
  const clang::RecordDecl* rd = lhs->getType()->getAsRecordDecl();
  std::vector<ir::ValueId> values = struct_values(rhs, rd);
  StructVars& vars = struct_vars(lhs);
  b_->loc = loc_of(lhs->getBeginLoc());
  size_t i = 0;
  for (const clang::FieldDecl* f : rd->fields()) b_->var_store(vars.at(f), values[i++]);
}

}  // namespace kgen::translate
