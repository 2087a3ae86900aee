// Building expression nodes: the kind rules of ops/elementwise/expr.h.
#include "ops/elementwise/expr.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ir/half.h"
#include "ir/typing.h"

namespace kgen::ops::fusion {

using ir::Op;
using ir::ScalarKind;

namespace {

Expr make(Node n) { return Expr{std::make_shared<const Node>(std::move(n))}; }

std::string name(ScalarKind k) { return std::string(ir::scalar_name(k)); }
std::string name(Op op) { return std::string(ir::op_name(op)); }

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("fusion: " + what); }

bool is_compare(Op op) {
  return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq || op == Op::Ne;
}

int arity(Op op) {
  switch (op) {
    case Op::Neg: case Op::Abs: case Op::Not: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2:
    case Op::Sqrt: case Op::Rsqrt: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Erf: case Op::Floor:
    case Op::Ceil: case Op::Round: case Op::Trunc:
      return 1;
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Rem: case Op::Min: case Op::Max:
    case Op::Pow: case Op::And: case Op::Or: case Op::Xor: case Op::Shl: case Op::Shr:
      return 2;
    case Op::Fma: case Op::Select: return 3;
    default: return is_compare(op) ? 2 : 0;
  }
}

// Whether the op computes on operands of kind k (integer Pow: repeated
// multiplication, which the IR's float-only pow does not cover).
bool accepts(Op op, ScalarKind k) {
  const ir::Type t(k);
  switch (op) {
    case Op::Pow: return t.is_numeric();
    case Op::Neg: return t.is_float() || (t.is_int() && t.is_signed());
    default: return ir::domain_accepts(ir::op_info(op).domain, t);
  }
}

std::string domain_text(Op op) {
  switch (op) {
    case Op::Pow: return "a number";
    case Op::Neg: return "a signed integer or a float";
    default: break;
  }
  switch (ir::op_info(op).domain) {
    case ir::Domain::Float: return "a float";
    case ir::Domain::Int: return "an integer";
    case ir::Domain::Bits: return "an integer or bool";
    case ir::Domain::Numeric: return "an integer or float";
    case ir::Domain::Any: break;
  }
  return "a value";
}

// The literal v as a constant of kind k, when k holds it exactly (floats: rounded).
Expr typed_const(double v, ScalarKind k) {
  Node n;
  n.kind = Node::Kind::Const;
  n.type = compute_kind(k);
  n.value = k == ScalarKind::F16 ? ir::round_f16(float(v)) : k == ScalarKind::BF16 ? ir::round_bf16(float(v)) : v;
  if (is_float_kind(k)) return make(std::move(n));
  const ir::Type t(k);
  const double hi = k == ScalarKind::Bool ? 1 : std::ldexp(1.0, t.bits() - (t.is_signed() ? 1 : 0));
  const double lo = k == ScalarKind::Bool || !t.is_signed() ? 0 : -hi;
  if (!(v == std::trunc(v) && v >= lo && (v < hi || (k == ScalarKind::Bool && v == 1))))
    fail("the literal " + std::to_string(v) + " does not fit " + name(k));
  n.ivalue = k == ScalarKind::U64 ? int64_t(uint64_t(v)) : int64_t(v);
  return make(std::move(n));
}

// An untyped expression (weak) as kind k: its literals become constants of k.
Expr adopt(const Expr& e, ScalarKind k) {
  const Node& n = *e.node;
  if (!n.weak) return e;
  if (n.kind == Node::Kind::Const) return typed_const(n.value, k);
  std::vector<Expr> args;
  for (const Expr& a : n.args) args.push_back(adopt(a, k));
  return apply(n.op, std::move(args));
}

// The kind the value operands share: equal kinds, or f64 where f32 meets f64.
// Returns Void when every one is an untyped literal.
ScalarKind unify(Op op, const std::vector<Expr>& vals) {
  ScalarKind k = ScalarKind::Void;
  for (const Expr& v : vals) {
    if (v.node->weak) continue;
    const ScalarKind x = v.kind();
    if (k == ScalarKind::Void || k == x) k = x;
    else if (is_float_kind(k) && is_float_kind(x)) k = ScalarKind::F64;
    else fail(name(op) + " of " + name(k) + " and " + name(x) + ": operands need one kind (cast one)");
  }
  return k;
}

void check_args(Op op, const std::vector<Expr>& args) {
  if (arity(op) == 0 || size_t(arity(op)) != args.size())
    fail("op '" + name(op) + "' is not an elementwise op of " + std::to_string(args.size()) + " operands");
  for (const Expr& a : args)
    if (!a.node) fail("empty expression");
  if (op == Op::Select && (args[0].node->weak || args[0].kind() != ScalarKind::Bool))
    fail("select's condition must be bool, got " + name(args[0].kind()));
}

}  // namespace

ScalarKind compute_kind(ScalarKind k) { return k == ScalarKind::F16 || k == ScalarKind::BF16 ? ScalarKind::F32 : k; }
bool is_float_kind(ScalarKind k) { return k != ScalarKind::Void && ir::Type(k).is_float(); }
bool is_int_kind(ScalarKind k) { return k != ScalarKind::Void && ir::Type(k).is_int(); }

Expr in(int input) { return in(input, ScalarKind::F32); }
Expr in(int input, ScalarKind dtype) {
  if (dtype == ScalarKind::Void) fail("an input needs a dtype");
  Node n;
  n.kind = Node::Kind::Input;
  n.input = input;
  n.type = compute_kind(dtype);
  return make(std::move(n));
}

Expr lit(double v) {
  Node n;
  n.kind = Node::Kind::Const;
  n.value = v;
  n.weak = true;
  return make(std::move(n));
}
Expr lit(double v, ScalarKind k) {
  if (k == ScalarKind::Void) fail("a literal needs a kind");
  return typed_const(v, k);
}
Expr int_lit(int64_t v, ScalarKind k) {
  if (!is_int_kind(k)) fail("int_lit needs an integer kind, got " + name(k));
  const ir::Type t(k);
  const int bits = t.bits();
  if (bits < 64 && (t.is_signed() ? v < -(int64_t(1) << (bits - 1)) || v >= (int64_t(1) << (bits - 1))
                                  : v < 0 || v >= (int64_t(1) << bits)))
    fail("the literal " + std::to_string(v) + " does not fit " + name(k));
  Node n;
  n.kind = Node::Kind::Const;
  n.type = k;
  n.ivalue = v;
  n.value = k == ScalarKind::U64 ? double(uint64_t(v)) : double(v);
  return make(std::move(n));
}

Expr apply(Op op, std::vector<Expr> args) {
  check_args(op, args);
  const size_t first = op == Op::Select ? 1 : 0;  // the value operands
  const std::vector<Expr> vals(args.begin() + long(first), args.end());
  const ScalarKind k = unify(op, vals);
  Node n;
  n.kind = Node::Kind::Op;
  n.op = op;
  if (k == ScalarKind::Void) {  // untyped literals only: f32 until they meet a kind
    n.type = is_compare(op) ? ScalarKind::Bool : ScalarKind::F32;
    n.weak = !is_compare(op);
    n.args = std::move(args);
    return make(std::move(n));
  }
  for (size_t i = first; i < args.size(); ++i)
    args[i] = args[i].node->weak ? adopt(args[i], k) : args[i].kind() == k ? args[i] : cast(k, args[i]);
  if (!accepts(op, k)) fail(name(op) + " needs " + domain_text(op) + ", got " + name(k) + " (cast it first)");
  n.type = is_compare(op) ? ScalarKind::Bool : k;
  n.args = std::move(args);
  return make(std::move(n));
}

Expr round_to(ScalarKind to, Expr a) {
  if (!a.node) fail("empty expression");
  if (to != ScalarKind::F32 && to != ScalarKind::F16 && to != ScalarKind::BF16)
    fail("round_to needs f32, f16 or bf16");
  if (a.node->weak) a = adopt(a, ScalarKind::F32);
  if (!is_float_kind(a.kind())) fail("round_to of " + name(a.kind()) + ": needs a float");
  Node n;
  n.kind = Node::Kind::Round;
  n.to = to;
  n.type = a.kind();
  n.args = {std::move(a)};
  return make(std::move(n));
}

namespace {

Expr conversion(Node::Kind kind, ScalarKind to, Expr a) {
  if (!a.node) fail("empty expression");
  if (to == ScalarKind::Void) fail("a cast needs a target kind");
  if (a.node->weak) a = adopt(a, to == ScalarKind::F64 ? ScalarKind::F64 : ScalarKind::F32);
  if (to == a.kind()) return a;  // nothing to convert (f16/bf16 targets always round)
  Node n;
  n.kind = kind;
  n.to = to;
  n.type = compute_kind(to);
  n.args = {std::move(a)};
  return make(std::move(n));
}

}  // namespace

Expr cast(ScalarKind to, Expr a) { return conversion(Node::Kind::Cast, to, std::move(a)); }

Expr saturate_cast(ScalarKind to, Expr a) {
  if (!a.node) fail("empty expression");
  if (a.node->weak) a = adopt(a, to == ScalarKind::F64 ? ScalarKind::F64 : ScalarKind::F32);
  const bool saturates = is_int_kind(to) && a.kind() != ScalarKind::Bool;
  return conversion(saturates ? Node::Kind::SaturateCast : Node::Kind::Cast, to, std::move(a));
}

}  // namespace kgen::ops::fusion
