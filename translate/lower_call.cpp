// Calls: kgen builtins become IR operations, other functions are inlined.
#include <optional>

#include "translate/lowerer.h"

namespace kgen::translate {

using clang::dyn_cast;
using clang::isa;

namespace {
// kgen builtins with a direct IR op, by name (kgen_kernel.h).
std::optional<ir::Op> builtin_op(llvm::StringRef n) {
  static const std::pair<const char*, ir::Op> table[] = {
      {"global_id", ir::Op::GlobalId}, {"local_id", ir::Op::LocalId},     {"group_id", ir::Op::GroupId},
      {"group_size", ir::Op::GroupSize}, {"num_groups", ir::Op::NumGroups}, {"barrier", ir::Op::Barrier},
      {"atomic_add", ir::Op::AtomicAdd}, {"atomic_min", ir::Op::AtomicMin}, {"atomic_max", ir::Op::AtomicMax},
      {"atomic_exch", ir::Op::AtomicExch}, {"atomic_cas", ir::Op::AtomicCas}, {"sqrt", ir::Op::Sqrt},
      {"rsqrt", ir::Op::Rsqrt},          {"exp", ir::Op::Exp},             {"exp2", ir::Op::Exp2},
      {"log", ir::Op::Log},              {"log2", ir::Op::Log2},           {"sin", ir::Op::Sin},
      {"cos", ir::Op::Cos},              {"tanh", ir::Op::Tanh},           {"erf", ir::Op::Erf},
      {"floor", ir::Op::Floor},          {"ceil", ir::Op::Ceil},           {"trunc", ir::Op::Trunc},
      {"rint", ir::Op::Round},           {"fabs", ir::Op::Abs},            {"abs", ir::Op::Abs},
      {"min", ir::Op::Min},              {"max", ir::Op::Max},             {"pow", ir::Op::Pow},
      {"fma", ir::Op::Fma},              {"splat", ir::Op::Splat},         {"reduce_add", ir::Op::ReduceAdd},
      {"reduce_mul", ir::Op::ReduceMul}, {"reduce_min", ir::Op::ReduceMin}, {"reduce_max", ir::Op::ReduceMax},
      {"bitcast", ir::Op::Bitcast},      {"dot4", ir::Op::Dot4},           {"dot2_i16", ir::Op::Dot2I16},
      {"dot2_bf16", ir::Op::Dot2Bf16},   {"permute_bytes", ir::Op::PermuteBytes},
      {"select", ir::Op::Select},        {"subgroup_size", ir::Op::SubgroupSize},
      {"subgroup_lane", ir::Op::SubgroupLane}, {"subgroup_add", ir::Op::SubgroupAdd},
      {"subgroup_min", ir::Op::SubgroupMin}, {"subgroup_max", ir::Op::SubgroupMax},
      // The memory builtins (memory_builtin() tells them apart by name).
      {"stream", ir::Op::Store},         {"load_line", ir::Op::Load},      {"store_line", ir::Op::Store},
      {"prefetch", ir::Op::Prefetch},    {"prefetch_write", ir::Op::Prefetch},
  };
  for (const auto& [name, op] : table)
    if (n == name) return op;
  return std::nullopt;
}
}  // namespace

ir::ValueId Lowerer::call(const clang::CallExpr* e) {
  if (const auto* m = dyn_cast<clang::CXXMemberCallExpr>(e)) {
    const clang::CXXMethodDecl* md = m->getMethodDecl();
    std::string name = md ? md->getNameAsString() : "?";
    if (md && md->isVirtual())
      fail(e->getBeginLoc(), "virtual call to '" + name + "': dynamic dispatch is not supported in kernels");
    fail(e->getBeginLoc(), "call to member function '" + name + "' is not supported yet (use a free function)");
  }
  if (const auto* oc = dyn_cast<clang::CXXOperatorCallExpr>(e);
      oc && oc->getOperator() == clang::OO_Equal && oc->getNumArgs() == 2 && oc->getArg(0)->getType()->isRecordType()) {
    struct_assign(oc->getArg(0), oc->getArg(1));
    return ir::kNoValue;
  }
  if (isa<clang::CXXOperatorCallExpr>(e)) fail(e->getBeginLoc(), "overloaded operators are not supported yet");
  const clang::FunctionDecl* fn = e->getDirectCallee();
  if (!fn) fail(e->getBeginLoc(), "call through a function pointer: kernels only call functions by name");
  if (is_kgen_builtin(fn)) return builtin_call(e, fn);
  if (fn->getBuiltinID())
    fail(e->getBeginLoc(), "compiler builtin '" + fn->getNameAsString() + "' is not supported (use the kgen math functions)");
  return inline_call(e, fn);
}

ir::ValueId Lowerer::builtin_call(const clang::CallExpr* e, const clang::FunctionDecl* fn) {
  std::string name = fn->getNameAsString();
  std::optional<ir::Op> op = builtin_op(name);
  if (!op) fail(e->getBeginLoc(), "kgen::" + name + " cannot be used inside a kernel");
  ir::ValueId result;
  ir::OpClass cls = ir::op_class(*op);
  if (cls == ir::OpClass::Memory) return memory_builtin(e, name);
  if (*op == ir::Op::Select) return select_call(e);
  if (*op == ir::Op::SubgroupSize || *op == ir::Op::SubgroupLane) {
    b_->loc = loc_of(e->getBeginLoc());
    return b_->builtin(*op);
  }
  if (cls == ir::OpClass::Builtin) {
    int64_t axis = constant_int(e->getArg(0), "the axis of " + name + "()");
    if (axis < 0 || axis > 2) fail(e->getArg(0)->getBeginLoc(), "the axis of " + name + "() must be 0, 1 or 2");
    b_->loc = loc_of(e->getBeginLoc());
    result = b_->builtin(*op, int(axis));
  } else if (cls == ir::OpClass::Sync) {
    b_->loc = loc_of(e->getBeginLoc());
    b_->barrier();
    return ir::kNoValue;
  } else if (cls == ir::OpClass::Atomic) {
    Address a = address(e->getArg(0));
    if (!a.dims.empty()) fail(e->getArg(0)->getBeginLoc(), "an atomic needs one element, not an array row");
    if (!a.local.empty())
      fail(e->getArg(0)->getBeginLoc(), "an atomic on a local array: atomics need a buffer or shared array");
    ir::Type elem = b_->type_of(a.ptr).element();
    std::vector<ir::ValueId> args{a.ptr, a.index != ir::kNoValue ? a.index : b_->const_int(ir::types::U32, 0)};
    for (unsigned i = 1; i < e->getNumArgs(); ++i) args.push_back(rvalue_as(e->getArg(i), elem));
    b_->loc = loc_of(e->getBeginLoc());
    result = b_->op(*op, args);
  } else if (*op == ir::Op::Splat) {
    ir::Type t = scalar_type(e->getType(), e->getBeginLoc(), "splat's result");
    if (!t.is_vector()) fail(e->getBeginLoc(), "splat<V>(x) needs a line type V (f32x16, ...)");
    ir::ValueId x = rvalue_as(e->getArg(0), t.scalar());
    b_->loc = loc_of(e->getBeginLoc());
    result = splat(x, t);
  } else if (*op == ir::Op::Bitcast) {
    // The target type is the template argument, which is the call's type.
    ir::Type t = scalar_type(e->getType(), e->getBeginLoc(), "bitcast's result");
    ir::ValueId x = rvalue(e->getArg(0));
    b_->loc = loc_of(e->getBeginLoc());
    result = b_->op(ir::Op::Bitcast, {x}, 0, t);
  } else {
    std::vector<ir::ValueId> args;
    for (const clang::Expr* a : e->arguments()) args.push_back(rvalue(a));
    b_->loc = loc_of(e->getBeginLoc());
    result = b_->op(*op, args);
  }
  return convert(result, scalar_type(e->getType(), e->getBeginLoc(), name + "()"));
}

// select(c, a, b): a scalar condition, or a mask line that a comparison of
// lines made (its bool line, see binary()) or any integer line (lanes != 0).
ir::ValueId Lowerer::select_call(const clang::CallExpr* e) {
  ir::Type t = scalar_type(e->getType(), e->getBeginLoc(), "select's result");
  ir::ValueId c = rvalue(e->getArg(0));
  if (c == ir::kNoValue) fail(e->getArg(0)->getBeginLoc(), "select's condition is a void expression");
  ir::ValueId a = rvalue_as(e->getArg(1), t);
  ir::ValueId b = rvalue_as(e->getArg(2), t);
  b_->loc = loc_of(e->getBeginLoc());
  ir::Type ct = b_->type_of(c);
  if (!t.is_vector()) {
    if (ct.is_vector()) fail(e->getArg(0)->getBeginLoc(), "select of scalars with a mask line of " + ct.str());
    return b_->op(ir::Op::Select, {convert(c, ir::types::Bool), a, b});
  }
  if (!ct.is_vector() || ct.lanes != t.lanes)
    fail(e->getArg(0)->getBeginLoc(), "select of " + t.str() + " needs a mask line of " + std::to_string(t.lanes) +
                                          " lanes (a comparison of lines), got " + ct.str());
  if (auto m = mask_of_.find(c); m != mask_of_.end()) c = m->second;
  else if (!ct.is_bool()) c = b_->op(ir::Op::Ne, {c, zero(ct)});
  return b_->op(ir::Op::Select, {c, a, b});
}

// The memory builtins: stream(&y[i], v), prefetch(&x[i]), prefetch_write(&y[i]),
// load_line<V>(p, at) and store_line(p, at, v).
ir::ValueId Lowerer::memory_builtin(const clang::CallExpr* e, const std::string& name) {
  const clang::Expr* p = e->getArg(0);
  Address a = address(p);
  if (!a.dims.empty()) fail(p->getBeginLoc(), name + "() needs one element, not an array row");
  if (!a.local.empty()) fail(p->getBeginLoc(), name + "() on a local array: it needs a buffer parameter");
  ir::Type pt = b_->type_of(a.ptr);
  if (pt.space != ir::AddrSpace::Global)
    fail(p->getBeginLoc(), name + "() needs a buffer parameter, not a shared array");
  ir::Type elem = pt.element();
  auto index = [&] { return a.index != ir::kNoValue ? a.index : b_->const_int(ir::types::U32, 0); };
  if (name == "prefetch" || name == "prefetch_write") {
    b_->loc = loc_of(e->getBeginLoc());
    b_->op(ir::Op::Prefetch, {a.ptr, index()}, name == "prefetch" ? ir::kPrefetchL1 : ir::kPrefetchWrite);
    return ir::kNoValue;
  }
  if (name == "stream") {
    ir::ValueId v = rvalue_as(e->getArg(1), elem);
    b_->loc = loc_of(e->getBeginLoc());
    b_->store(a.ptr, index(), v, ir::kStoreNonTemporal);
    return ir::kNoValue;
  }
  // load_line / store_line: lanes at the element index (p's offset + at) widened to u64.
  if (elem.is_vector()) fail(p->getBeginLoc(), name + "() needs a buffer of scalars, not of " + elem.str());
  ir::Type line = name == "load_line" ? scalar_type(e->getType(), e->getBeginLoc(), "load_line's result")
                                      : scalar_type(e->getArg(2)->getType(), e->getArg(2)->getBeginLoc(), "the stored line");
  if (!line.is_vector() || line.scalar() != elem)
    fail(e->getBeginLoc(), name + "() of " + line.str() + " on a buffer of " + elem.str() +
                               ": the line must have the buffer's element type as its lanes");
  ir::ValueId at = rvalue_as(e->getArg(1), ir::types::U64);
  ir::ValueId v = name == "store_line" ? rvalue_as(e->getArg(2), line) : ir::kNoValue;
  b_->loc = loc_of(e->getBeginLoc());
  if (a.index != ir::kNoValue) at = arith(ir::Op::Add, convert(a.index, ir::types::U64), at);
  std::vector<ir::ValueId> lanes;
  for (int q = 0; q < line.lanes; ++q) {
    ir::ValueId i = arith(ir::Op::Add, at, b_->const_int(ir::types::U64, q));
    if (v == ir::kNoValue) lanes.push_back(b_->load(a.ptr, i));
    else b_->store(a.ptr, i, b_->op(ir::Op::Extract, {v}, q));
  }
  return v == ir::kNoValue ? b_->op(ir::Op::Construct, lanes, 0, line) : ir::kNoValue;
}

void Lowerer::bind_arg(const clang::ParmVarDecl* p, const clang::Expr* arg) {
  std::string what = "parameter '" + p->getNameAsString() + "'";
  clang::QualType t = p->getType();
  clang::QualType rt = t->isReferenceType() ? t->getPointeeType() : t;
  if (const clang::RecordDecl* rd = struct_type(rt, p->getLocation(), what)) {
    if (t->isReferenceType() && strip(arg)->isGLValue()) {
      env_[p] = {Binding::Kind::Struct, ir::kNoValue, {}, {}, struct_vars(arg)};  // shares the caller's fields
    } else {
      std::vector<ir::ValueId> values = struct_values(arg, rd);
      Binding bd;
      bd.kind = Binding::Kind::Struct;
      size_t i = 0;
      for (const clang::FieldDecl* f : rd->fields()) bd.fields[f] = b_->var(values[i++]);
      env_[p] = bd;
    }
    return;
  }
  if (t->isPointerType()) {
    if (mutated_.count(p))
      fail(p->getLocation(), "pointer " + what + " is modified: pointer variables cannot change (index it instead)");
    env_[p] = {Binding::Kind::Address, ir::kNoValue, address(arg), {}};
  } else if (t->isReferenceType()) {
    clang::QualType pt = t->getPointeeType();
    if (pt->isPointerType()) fail(p->getLocation(), what + ": references to pointers are not supported");
    if (pt.isConstQualified() || !strip(arg)->isGLValue())
      env_[p] = {Binding::Kind::Value, rvalue_as(arg, scalar_type(pt, p->getLocation(), what)), {}, {}};
    else
      env_[p] = {Binding::Kind::Ref, ir::kNoValue, {}, lvalue(arg)};
  } else {
    ir::ValueId v = rvalue_as(arg, scalar_type(t, p->getLocation(), what));
    env_[p] = mutated_.count(p) ? Binding{Binding::Kind::Var, b_->var(v), {}, {}} : Binding{Binding::Kind::Value, v, {}, {}};
  }
}

namespace {
// Counts the returns in `s`, failing through `on_loop` for one inside a loop.
template <class F>
int count_returns(const clang::Stmt* s, int loop_depth, const F& on_loop) {
  if (!s) return 0;
  if (isa<clang::ReturnStmt>(s)) {
    if (loop_depth > 0) on_loop(s);
    return 1;
  }
  if (isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(s)) ++loop_depth;
  int n = 0;
  for (const clang::Stmt* c : s->children()) n += count_returns(c, loop_depth, on_loop);
  return n;
}

// True when s is a return or always ends in one: a block whose last
// statement does, an `if constexpr` whose taken branch does.
bool ends_in_return(const clang::Stmt* s, const clang::ASTContext& ctx) {
  if (!s) return false;
  if (isa<clang::ReturnStmt>(s)) return true;
  if (const auto* c = dyn_cast<clang::CompoundStmt>(s)) return !c->body_empty() && ends_in_return(c->body_back(), ctx);
  const auto* i = dyn_cast<clang::IfStmt>(s);
  clang::Expr::EvalResult r;
  if (!i || !i->isConstexpr() || i->getInit() || i->getConditionVariable() || !i->getCond()->EvaluateAsInt(r, ctx))
    return false;
  return ends_in_return(r.Val.getInt().getBoolValue() ? i->getThen() : i->getElse(), ctx);
}
}  // namespace

// True when the helper returns anywhere but at its end (then its body runs
// in a one-trip loop that a return breaks out of).
bool Lowerer::needs_wrap(const clang::FunctionDecl* fn) {
  const auto* body = dyn_cast<clang::CompoundStmt>(fn->getBody());
  int returns = count_returns(fn->getBody(), 0, [&](const clang::Stmt* r) {
    fail(r->getBeginLoc(), "return inside a loop of helper '" + fn->getNameAsString() + "' is not supported yet");
  });
  if (returns == 0) return false;
  return !(returns == 1 && body && !body->body_empty() && ends_in_return(body->body_back(), ctx_));
}

ir::ValueId Lowerer::inline_call(const clang::CallExpr* e, const clang::FunctionDecl* fn) {
  std::string name = fn->getNameAsString();
  const clang::FunctionDecl* def = fn->getDefinition();
  if (!def || !def->getBody())
    fail(e->getBeginLoc(), "call to '" + name + "', which has no body in this file: kernels can only call kgen "
                           "builtins and functions defined in the file");
  bool recursive = def == kernel_fn_;
  for (const Frame* f : frames_) recursive |= f->fn == def;
  if (recursive) fail(e->getBeginLoc(), "recursive call to '" + name + "': kernels cannot recurse");
  if (def->isVariadic()) fail(e->getBeginLoc(), "call to variadic function '" + name + "' is not supported");
  if (analyzed_.insert(def).second) collect_mutations(def->getBody());

  Frame f;
  f.fn = def;
  clang::QualType rt = def->getReturnType();
  if (rt->isPointerType() || rt->isReferenceType())
    fail(def->getLocation(), "helper '" + name + "' returns a pointer or reference, which is not supported");
  f.ret = rt->isVoidType() ? ir::types::Void : scalar_type(rt, def->getLocation(), "the result of '" + name + "'");
  for (unsigned i = 0; i < e->getNumArgs() && i < def->getNumParams(); ++i) bind_arg(def->getParamDecl(i), e->getArg(i));
  f.wrapped = needs_wrap(def);
  b_->loc = loc_of(e->getBeginLoc());
  if (f.wrapped) {
    if (!f.ret.is_void()) f.result_var = b_->var(zero(f.ret));
    b_->begin_loop();
  }
  frames_.push_back(&f);
  stmt(def->getBody());
  frames_.pop_back();
  b_->loc = loc_of(e->getBeginLoc());
  if (!f.wrapped) return f.tail_value;
  b_->break_();
  b_->end_loop();
  return f.ret.is_void() ? ir::kNoValue : b_->var_load(f.result_var);
}

}  // namespace kgen::translate
