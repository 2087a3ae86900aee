// Types, locations, the analyses the lowering needs, and kernel signatures.
#include "clang/AST/Attr.h"
#include "clang/Basic/SourceManager.h"
#include "ir/verifier.h"
#include "translate/lowerer.h"

namespace kgen::translate {

using clang::dyn_cast;
using clang::isa;

// ---------------------------------------------------------------- helpers

bool has_annotation(const clang::Decl* d, llvm::StringRef name) {
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>())
    if (a->getAnnotation() == name) return true;
  return false;
}

bool is_kgen_builtin(const clang::FunctionDecl* fn) {
  const auto* ns = dyn_cast<clang::NamespaceDecl>(fn->getDeclContext()->getRedeclContext());
  return ns && ns->getName() == "kgen" && ns->getParent()->getRedeclContext()->isTranslationUnit();
}

const clang::Expr* strip(const clang::Expr* e) {
  while (true) {
    e = e->IgnoreParens();
    if (const auto* c = dyn_cast<clang::ImplicitCastExpr>(e); c && c->getCastKind() == clang::CK_NoOp) {
      e = c->getSubExpr();
    } else if (const auto* m = dyn_cast<clang::MaterializeTemporaryExpr>(e)) {
      e = m->getSubExpr();
    } else if (const auto* w = dyn_cast<clang::ExprWithCleanups>(e)) {
      e = w->getSubExpr();
    } else {
      return e;
    }
  }
}

ir::SourceLoc Lowerer::loc_of(clang::SourceLocation l) const {
  const clang::SourceManager& sm = ctx_.getSourceManager();
  clang::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(l));
  if (p.isInvalid()) return {};
  return {ir::intern_file(p.getFilename()), p.getLine(), p.getColumn()};
}

void Lowerer::fail(clang::SourceLocation l, const std::string& what) const { throw ir::Error(loc_of(l), what); }

ir::Type Lowerer::scalar_type(clang::QualType t, clang::SourceLocation l, const std::string& what) const {
  using BT = clang::BuiltinType;
  if (const auto* vt = t.getCanonicalType()->getAs<clang::VectorType>()) {
    unsigned lanes = vt->getNumElements();
    if (lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16)
      fail(l, what + " is a line of " + std::to_string(lanes) + " lanes; lines have 2, 3, 4, 8 or 16");
    ir::Type lane = scalar_type(vt->getElementType(), l, "the lanes of " + what);
    if (lane.is_bool()) fail(l, what + " is a line of bools, which kernels cannot use");
    return lane.with_lanes(int(lanes));
  }
  const auto* bt = t.getCanonicalType()->getAs<BT>();
  if (bt) {
    bool is_signed = bt->isSignedInteger();
    switch (bt->getKind()) {
      case BT::Bool: return ir::types::Bool;
      case BT::Float: return ir::types::F32;
      case BT::Double: return ir::types::F64;
      case BT::Float16: return ir::types::F16;
      case BT::BFloat16: return ir::types::BF16;
      default: break;
    }
    if (bt->isInteger()) {
      switch (ctx_.getTypeSize(t)) {
        case 8: return is_signed ? ir::types::I8 : ir::types::U8;
        case 16: return is_signed ? ir::types::I16 : ir::types::U16;
        case 32: return is_signed ? ir::types::I32 : ir::types::U32;
        case 64: return is_signed ? ir::types::I64 : ir::types::U64;
        default: break;
      }
    }
  }
  fail(l, what + " has type '" + t.getAsString() +
              "', which kernels cannot use (only bool, integers, float, double, _Float16, __bf16 and pointers to them)");
}

// Records every variable that is assigned, incremented, has its address
// taken or is passed to a non-const reference: those need IR variables.
// Also refuses exceptions and heap allocation anywhere in the body.
void Lowerer::collect_mutations(const clang::Stmt* s) {
  if (!s) return;
  auto mark = [&](const clang::Expr* e) {
    // Writing a lane (v[2] = x) modifies the line v.
    while (const auto* s = dyn_cast<clang::ArraySubscriptExpr>(strip(e))) {
      if (!s->getBase()->getType()->isVectorType()) break;
      e = s->getBase();
    }
    if (const auto* r = dyn_cast<clang::DeclRefExpr>(strip(e)))
      if (const auto* v = dyn_cast<clang::VarDecl>(r->getDecl())) mutated_.insert(v);
  };
  if (const auto* bo = dyn_cast<clang::BinaryOperator>(s); bo && bo->isAssignmentOp()) mark(bo->getLHS());
  if (const auto* uo = dyn_cast<clang::UnaryOperator>(s); uo && (uo->isIncrementDecrementOp() || uo->getOpcode() == clang::UO_AddrOf))
    mark(uo->getSubExpr());
  if (const auto* ce = dyn_cast<clang::CallExpr>(s)) {
    if (const clang::FunctionDecl* fn = ce->getDirectCallee()) {
      for (unsigned i = 0; i < ce->getNumArgs() && i < fn->getNumParams(); ++i) {
        clang::QualType pt = fn->getParamDecl(i)->getType();
        if (pt->isReferenceType() && !pt->getPointeeType().isConstQualified()) mark(ce->getArg(i));
      }
    }
  }
  // Refused here, before constant folding could evaluate them away.
  if (isa<clang::CXXThrowExpr, clang::CXXTryStmt>(s)) fail(s->getBeginLoc(), "exceptions are not supported in kernels");
  if (isa<clang::CXXNewExpr>(s)) fail(s->getBeginLoc(), "new: heap allocation is not supported in kernels");
  if (isa<clang::CXXDeleteExpr>(s)) fail(s->getBeginLoc(), "delete: heap allocation is not supported in kernels");
  for (const clang::Stmt* c : s->children()) collect_mutations(c);
}

// True for expressions whose value cannot change while a loop runs: literals,
// parameters and locals that are never modified, and arithmetic on them.
bool Lowerer::is_invariant(const clang::Expr* e) const {
  e = e->IgnoreParens();
  clang::Expr::EvalResult r;
  if (!e->isValueDependent() && e->EvaluateAsRValue(r, ctx_)) return true;
  if (const auto* d = dyn_cast<clang::DeclRefExpr>(e)) {
    const auto* v = dyn_cast<clang::VarDecl>(d->getDecl());
    return v && !mutated_.count(v) && !v->getType()->isReferenceType();
  }
  if (const auto* c = dyn_cast<clang::ImplicitCastExpr>(e)) return is_invariant(c->getSubExpr());
  if (const auto* c = dyn_cast<clang::ExplicitCastExpr>(e)) return is_invariant(c->getSubExpr());
  if (const auto* b = dyn_cast<clang::BinaryOperator>(e))
    return !b->isAssignmentOp() && is_invariant(b->getLHS()) && is_invariant(b->getRHS());
  if (const auto* c = dyn_cast<clang::CallExpr>(e)) {
    const clang::FunctionDecl* fn = c->getDirectCallee();
    if (!fn || !is_kgen_builtin(fn)) return false;
    llvm::StringRef n = fn->getName();
    return n == "global_id" || n == "local_id" || n == "group_id" || n == "group_size" || n == "num_groups" ||
           n == "subgroup_size";
  }
  return false;
}

// True for expressions that are safe and cheap to evaluate unconditionally
// (no memory access, calls, side effects or integer division): the operands
// of && and ?: that may become a select instead of a branch.
bool Lowerer::is_simple(const clang::Expr* e) const {
  e = e->IgnoreParens();
  if (isa<clang::IntegerLiteral, clang::FloatingLiteral, clang::CXXBoolLiteralExpr, clang::DeclRefExpr>(e)) return true;
  if (const auto* c = dyn_cast<clang::CastExpr>(e)) return is_simple(c->getSubExpr());
  if (const auto* u = dyn_cast<clang::UnaryOperator>(e))
    return !u->isIncrementDecrementOp() && u->getOpcode() != clang::UO_Deref && is_simple(u->getSubExpr());
  if (const auto* b = dyn_cast<clang::BinaryOperator>(e)) {
    if (b->isAssignmentOp() || b->getOpcode() == clang::BO_Comma) return false;
    if ((b->getOpcode() == clang::BO_Div || b->getOpcode() == clang::BO_Rem) && !b->getType()->isFloatingType())
      return false;
    return is_simple(b->getLHS()) && is_simple(b->getRHS());
  }
  return false;
}

// ---------------------------------------------------------------- kernel

// The function's name, plus its template arguments for an instantiation of a
// kernel template: matmul<16, float> is "matmul_16_f32".
std::string Lowerer::variant_name(const clang::FunctionDecl* fn) const {
  std::string name = fn->getNameAsString();
  const clang::TemplateArgumentList* args = fn->getTemplateSpecializationArgs();
  if (!args) return name;
  for (const clang::TemplateArgument& a : args->asArray()) {
    if (a.getKind() == clang::TemplateArgument::Integral) {
      llvm::SmallString<16> v;
      a.getAsIntegral().toString(v);
      name += "_" + std::string(v.str());
    } else if (a.getKind() == clang::TemplateArgument::Type) {
      name += "_" + scalar_type(a.getAsType(), fn->getLocation(), "a template argument").str();
    } else {
      fail(fn->getLocation(), "kernel template arguments must be integers or arithmetic types");
    }
  }
  for (char& c : name)
    if (c == '-') c = 'm';  // a negative argument
  return name;
}

ir::Kernel Lowerer::lower_kernel(const clang::FunctionDecl* fn) {
  k_ = ir::Kernel{};
  k_.name = variant_name(fn);
  kernel_fn_ = fn;
  if (!fn->getReturnType()->isVoidType())
    fail(fn->getLocation(), "kernel '" + k_.name + "' must return void (kernels write their results to buffers)");
  if (fn->isVariadic()) fail(fn->getLocation(), "kernel '" + k_.name + "' is variadic");
  ir::Builder builder(k_);
  b_ = &builder;
  set_workgroup(fn);
  collect_mutations(fn->getBody());
  analyzed_.insert(fn);
  bind_params(fn);
  stmt(fn->getBody());
  refine_access();
  b_ = nullptr;
  ir::verify(k_);
  return std::move(k_);
}

void Lowerer::set_workgroup(const clang::FunctionDecl* fn) {
  for (const auto* a : fn->specific_attrs<clang::AnnotateAttr>()) {
    if (a->getAnnotation() != "kgen::workgroup") continue;
    if (a->args_size() < 1 || a->args_size() > 3) fail(a->getLocation(), "KGEN_WORKGROUP takes 1 to 3 sizes");
    k_.workgroup_size = {1, 1, 1};
    int d = 0;
    for (const clang::Expr* e : a->args()) {
      int64_t v = constant_int(e, "a workgroup size");
      if (v <= 0 || v > 1024) fail(e->getBeginLoc(), "workgroup size " + std::to_string(v) + " is out of range (1..1024)");
      k_.workgroup_size[d++] = uint32_t(v);
    }
  }
}

// Pointer parameters become buffers (const pointee: read only), arithmetic
// ones scalars; both keep their declaration order within their kind.
void Lowerer::bind_params(const clang::FunctionDecl* fn) {
  for (const clang::ParmVarDecl* p : fn->parameters()) {
    std::string name = p->getNameAsString();
    clang::QualType t = p->getType();
    if (t->isPointerType()) {
      clang::QualType elem = t->getPointeeType();
      if (elem->isPointerType())
        fail(p->getLocation(), "parameter '" + name + "' points to pointers: pointers stored in memory are not supported");
      if (mutated_.count(p))
        fail(p->getLocation(), "pointer parameter '" + name + "' is modified: pointer variables cannot change (index it instead)");
      ir::Type et = scalar_type(elem, p->getLocation(), "the elements of parameter '" + name + "'");
      ir::Access access = elem.isConstQualified() ? ir::Access::Read : ir::Access::ReadWrite;
      k_.buffers.push_back({name, et, access});
      b_->loc = loc_of(p->getLocation());
      env_[p] = {Binding::Kind::Address, ir::kNoValue, Address{b_->buffer(int(k_.buffers.size()) - 1), ir::kNoValue, {}}, {}};
    } else if (t->isReferenceType() || t->isArrayType()) {
      fail(p->getLocation(), "parameter '" + name + "' of type '" + t.getAsString() +
                                 "': kernel parameters are pointers or scalars");
    } else {
      ir::Type st = scalar_type(t, p->getLocation(), "parameter '" + name + "'");
      if (st.is_vector())
        fail(p->getLocation(), "parameter '" + name + "' is a line: scalar parameters are scalars (pass lines in a buffer)");
      k_.scalars.push_back({name, st});
      b_->loc = loc_of(p->getLocation());
      ir::ValueId v = b_->param(int(k_.scalars.size()) - 1);
      env_[p] = mutated_.count(p) ? Binding{Binding::Kind::Var, b_->var(v), {}, {}} : Binding{Binding::Kind::Value, v, {}, {}};
    }
  }
}

// A writable buffer the kernel never reads is an output (Access::Write).
void Lowerer::refine_access() {
  std::vector<bool> read(k_.buffers.size(), false);
  std::map<ir::ValueId, int> buffer_value;
  ir::walk(k_.body, [&](const ir::Instr& in) {
    if (in.op == ir::Op::Buffer) buffer_value[in.id] = int(in.attr);
  });
  ir::walk(k_.body, [&](const ir::Instr& in) {
    bool reads = in.op == ir::Op::Load || ir::op_class(in.op) == ir::OpClass::Atomic;
    if (reads && !in.args.empty() && buffer_value.count(in.args[0])) read[buffer_value[in.args[0]]] = true;
  });
  for (size_t i = 0; i < k_.buffers.size(); ++i)
    if (k_.buffers[i].access == ir::Access::ReadWrite && !read[i]) k_.buffers[i].access = ir::Access::Write;
}

}  // namespace kgen::translate
