// The plain C++ reference of a chain (fusion.h: reference_chain): every node
// evaluated in its kind with C++ arithmetic on that type and libm, the
// integer definitions of expr_ops.h written out.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "ir/half.h"
#include "ops/elementwise/fusion.h"
#include "ops/elementwise/host_scalar.h"

namespace kgen::ops::fusion {

using ir::Op;
using ir::ScalarKind;

namespace {

[[noreturn]] void unsupported(Op op) {
  throw std::invalid_argument("fusion reference: unsupported op " + std::string(ir::op_name(op)));
}

template <class T> T float_unary(Op op, T a) {
  switch (op) {
    case Op::Neg: return -a;
    case Op::Abs: return std::fabs(a);
    case Op::Exp: return std::exp(a);
    case Op::Exp2: return std::exp2(a);
    case Op::Log: return std::log(a);
    case Op::Log2: return std::log2(a);
    case Op::Sqrt: return std::sqrt(a);
    case Op::Rsqrt: return T(1) / std::sqrt(a);
    case Op::Sin: return std::sin(a);
    case Op::Cos: return std::cos(a);
    case Op::Tanh: return std::tanh(a);
    case Op::Erf: return std::erf(a);
    case Op::Floor: return std::floor(a);
    case Op::Ceil: return std::ceil(a);
    case Op::Round: return std::nearbyint(a);
    case Op::Trunc: return std::trunc(a);
    default: unsupported(op);
  }
}

template <class T> T float_binary(Op op, T a, T b) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Rem: return std::fmod(a, b);
    case Op::Min: return std::fmin(a, b);
    case Op::Max: return std::fmax(a, b);
    case Op::Pow: return std::pow(a, b);
    default: unsupported(op);
  }
}

// Wrapping arithmetic: in an unsigned type at least as wide as unsigned int
// (no signed overflow, no promotion of u16 * u16 to int).
template <class T> using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T> T wrap_add(T a, T b) { return T(Wide<T>(a) + Wide<T>(b)); }
template <class T> T wrap_sub(T a, T b) { return T(Wide<T>(a) - Wide<T>(b)); }
template <class T> T wrap_mul(T a, T b) { return T(Wide<T>(a) * Wide<T>(b)); }

template <class T> T int_unary(Op op, T a) {
  switch (op) {
    case Op::Neg: return wrap_sub(T(0), a);
    case Op::Abs: return std::is_signed_v<T> && a < 0 ? wrap_sub(T(0), a) : a;
    case Op::Not: return T(~a);
    default: unsupported(op);
  }
}

// Square and multiply; a negative exponent truncates 1 / a^-b.
template <class T> T int_pow(T a, T b) {
  if (std::is_signed_v<T> && b < 0) return a == T(1) ? T(1) : a == T(-1) ? T(b % 2 ? -1 : 1) : T(0);
  T r = 1;
  for (auto e = std::make_unsigned_t<T>(b); e; e >>= 1) {
    if (e & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
  }
  return r;
}

template <class T> T int_shift(Op op, T a, T b) {
  const auto amount = std::make_unsigned_t<T>(b);
  if ((std::is_signed_v<T> && b < 0) || amount >= sizeof(T) * 8)
    return op == Op::Shr && std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  return op == Op::Shl ? T(Wide<T>(a) << amount) : T(a >> amount);
}

template <class T> T int_binary(Op op, T a, T b) {
  constexpr T lowest = std::numeric_limits<T>::min();
  switch (op) {
    case Op::Add: return wrap_add(a, b);
    case Op::Sub: return wrap_sub(a, b);
    case Op::Mul: return wrap_mul(a, b);
    case Op::Div: return b == 0 ? T(0) : std::is_signed_v<T> && a == lowest && b == T(-1) ? a : T(a / b);
    case Op::Rem: return b == 0 || (std::is_signed_v<T> && b == T(-1)) ? T(0) : T(a % b);
    case Op::Min: return std::min(a, b);
    case Op::Max: return std::max(a, b);
    case Op::And: return T(a & b);
    case Op::Or: return T(a | b);
    case Op::Xor: return T(a ^ b);
    case Op::Shl: case Op::Shr: return int_shift(op, a, b);
    case Op::Pow: return int_pow(a, b);
    default: unsupported(op);
  }
}

bool bool_op(Op op, bool a, bool b) {
  switch (op) {
    case Op::Not: return !a;
    case Op::And: return a && b;
    case Op::Or: return a || b;
    case Op::Xor: return a != b;
    default: unsupported(op);
  }
}

template <class T> bool compare(Op op, T a, T b) {
  switch (op) {
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    default: unsupported(op);
  }
}

bool is_compare(Op op) {
  return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq || op == Op::Ne;
}

// An Op node on its operands' values (x, y, z: as many as it has).
Scalar eval_op(const Node& n, const Scalar& x, const Scalar& y, const Scalar& z) {
  if (n.op == Op::Select) return x.i ? y : z;
  return with_kind(n.args[0].kind(), [&](auto t) -> Scalar {
    using T = typename decltype(t)::type;
    const T a = get<T>(x), b = get<T>(y);
    if (is_compare(n.op)) return put(compare(n.op, a, b));
    if constexpr (std::is_same_v<T, bool>) {
      return put(bool_op(n.op, a, b));
    } else if constexpr (std::is_floating_point_v<T>) {
      if (n.op == Op::Fma) return put(std::fma(a, b, get<T>(z)));
      return put(n.args.size() == 1 ? float_unary(n.op, a) : float_binary(n.op, a, b));
    } else {
      return put(n.args.size() == 1 ? int_unary(n.op, a) : int_binary(n.op, a, b));
    }
  });
}

// round_to: through `to` and back to the float kind of the node.
Scalar round_through(ScalarKind to, ScalarKind kind, Scalar v) {
  if (kind == ScalarKind::F64 && to == ScalarKind::F32) return put(double(float(v.f)));
  if (to == ScalarKind::F16) return put(double(ir::round_f16(float(v.f))));
  if (to == ScalarKind::BF16) return put(double(ir::round_bf16(float(v.f))));
  return v;
}

Scalar constant(const Node& n) {
  if (n.type == ScalarKind::F32) return put(float(n.value));
  if (n.type == ScalarKind::F64) return put(n.value);
  Scalar s;
  s.i = n.ivalue;
  return s;
}

// The expression's nodes, each once, arguments before their users.
struct Program {
  std::vector<const Node*> nodes;
  std::vector<std::vector<size_t>> args;  // per node: its arguments' positions
};

size_t add_node(Program& p, std::map<const Node*, size_t>& seen, const Expr& e) {
  if (auto it = seen.find(e.node.get()); it != seen.end()) return it->second;
  std::vector<size_t> args;
  for (const auto& a : e.node->args) args.push_back(add_node(p, seen, a));
  p.nodes.push_back(e.node.get());
  p.args.push_back(std::move(args));
  return seen[e.node.get()] = p.nodes.size() - 1;
}

// Every node of one element, in order; the last is the result.
void run(const Program& p, const std::vector<Scalar>& inputs, std::vector<Scalar>& v) {
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node& n = *p.nodes[k];
    const std::vector<size_t>& a = p.args[k];
    auto arg = [&](size_t i) -> const Scalar& { return v[a[std::min(i, a.size() - 1)]]; };
    switch (n.kind) {
      case Node::Kind::Input: v[k] = inputs[size_t(n.input)]; break;
      case Node::Kind::Const: v[k] = constant(n); break;
      case Node::Kind::Round: v[k] = round_through(n.to, n.type, arg(0)); break;
      case Node::Kind::Cast: v[k] = convert(n.args[0].kind(), n.to, arg(0)); break;
      case Node::Kind::SaturateCast: v[k] = convert(n.args[0].kind(), n.to, arg(0), true); break;
      case Node::Kind::Op: v[k] = eval_op(n, arg(0), arg(1), arg(2)); break;
    }
  }
}

}  // namespace

void reference_chain(const Chain& c, const std::vector<const void*>& in, void* out) {
  validate_chain(c);
  Layout l = layout_of(c, /*periodic=*/false);  // the plain walk, whatever the kernels' layout
  const int R = int(l.dims.size());
  const size_t ni = c.inputs.size();
  const int64_t inner = l.inner(), rows = l.rows();
  Program prog;
  std::map<const Node*, size_t> seen;
  add_node(prog, seen, c.out);
  std::vector<Scalar> inputs(ni), vals(prog.nodes.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> off(ni, 0);
    int64_t rem = r;
    for (int k = R - 2; k >= 0; --k) {
      int64_t ck = rem % l.dims[size_t(k)];
      rem /= l.dims[size_t(k)];
      for (size_t i = 0; i < ni; ++i) off[i] += ck * l.strides[i][size_t(k)];
    }
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t i = 0; i < ni; ++i) inputs[i] = load(c.inputs[i].dtype, in[i], off[i] + j * l.strides[i].back());
      run(prog, inputs, vals);
      store(c.out_dtype, out, r * inner + j, c.out.kind(), vals.back());
    }
  }
}

}  // namespace kgen::ops::fusion
