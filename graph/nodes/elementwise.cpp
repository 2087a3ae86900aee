// Elementwise handlers from their fused expressions (graph/nodes/elementwise.h),
// and the arithmetic and math ops: one table row per op type with its
// expression (ops/elementwise/expr_ops.h, expr_math.h: every dtype computes
// in its own kind, integers wrap and divide truncating); Pow, whose exponent
// may have another dtype; Clip; Cast.
#include "graph/nodes/elementwise.h"

#include <cstring>
#include <stdexcept>

#include "graph/nodes/util.h"
#include "graph/onnx/tensor_proto.h"

namespace kgen::graph {

namespace fz = ops::fusion;
using fz::Expr;
using ChainFn = std::function<Expr(ChainCtx&)>;

// ---- the machinery every elementwise group shares ----

Expr build_expr(const ChainCtx& c, const ChainFn& chain) {
  ChainCtx ctx = c;
  Expr r;
  try {
    r = chain(ctx);
  } catch (const std::invalid_argument& e) {  // the builders' refusals: a dtype the op does not take
    throw UnsupportedError(c.node.where() + ": " + e.what());
  }
  // An inlined producer hands its consumer a value of its output's kind.
  if (r.node->weak || r.kind() != fz::compute_kind(c.out_dtype)) r = fz::cast(c.out_dtype, r);
  return r;
}

void check_expr(InferCtx& c, const ChainFn& chain, ScalarKind out) {
  ChainCtx probe{c.node, c.g, [&](int i) { return fz::in(i, c.dtype(i)); }, out};
  build_expr(probe, chain);
}

namespace {

// t's elements as the elements of `shape` (numpy broadcasting), flat.
Tensor broadcast_flat(const Tensor& t, const Shape& shape) {
  const size_t rank = shape.size(), bytes = dtype_bytes(t.dtype);
  std::vector<int64_t> st(rank, 0);
  const std::vector<int64_t> own = strides_of(t.shape);
  for (size_t i = 0; i < t.shape.size(); ++i) st[rank - t.shape.size() + i] = t.shape[i] == 1 ? 0 : own[i];
  Tensor r(t.dtype, {numel(shape)});
  uint8_t* dst = r.mutable_data();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < r.numel(); ++i) {
    int64_t off = 0;
    for (size_t a = 0; a < rank; ++a) off += idx[a] * st[a];
    std::memcpy(dst + size_t(i) * bytes, t.data() + size_t(off) * bytes, bytes);
    for (int a = int(rank) - 1; a >= 0 && ++idx[size_t(a)] == shape[size_t(a)]; --a) idx[size_t(a)] = 0;
  }
  return r;
}

}  // namespace

void eval_chain(EvalCtx& e, const ChainFn& chain) {
  Tensor& out = e.out[0];
  const int64_t n = out.numel();
  if (n == 0) return;
  fz::Chain ch;
  std::vector<Tensor> flat;  // the inputs used, broadcast to the output's elements
  std::vector<int> slot(e.in.size(), -1);
  ChainCtx ctx{e.node, e.g, [&](int i) {
                 const Tensor& t = *e.in.at(size_t(i));
                 if (slot[size_t(i)] < 0) {
                   slot[size_t(i)] = int(flat.size());
                   flat.push_back(t.numel() == n ? t : broadcast_flat(t, out.shape));
                   ch.inputs.push_back({"in" + std::to_string(i), t.dtype, {n}});
                 }
                 return fz::in(slot[size_t(i)], t.dtype);
               },
               out.dtype};
  ch.out = build_expr(ctx, chain);
  ch.shape = {n};
  ch.out_dtype = out.dtype;
  std::vector<const void*> ptrs;
  for (const Tensor& t : flat) ptrs.push_back(t.data());
  fz::reference_chain(ch, ptrs, out.mutable_data());
}

namespace {

// Input i's expression; a scalar float constant (an untyped literal in a
// chain) takes its value's dtype, so that it stays exact there (an f64 0.1).
Expr input_expr(ChainCtx& c, int i) {
  Expr a = c.in(i);
  if (a.node->weak) a = fz::cast(c.g.values[size_t(c.node.inputs[size_t(i)])].dtype, a);
  return a;
}

ChainFn table_chain(const ElementwiseExpr& ex) {
  return [ex](ChainCtx& c) {
    std::vector<Expr> x;
    for (int i = 0; i < c.node.n_inputs(); ++i) x.push_back(c.node.inputs[size_t(i)] >= 0 ? input_expr(c, i) : Expr{});
    return ex(x, c.node);
  };
}

ScalarKind out_dtype(const InferCtx& c, ElementwiseOp::Out o) {
  switch (o) {
    case ElementwiseOp::Out::Bool: return ScalarKind::Bool;
    case ElementwiseOp::Out::LikeInput1: return c.dtype(1);
    case ElementwiseOp::Out::LikeInput0: break;
  }
  return c.dtype(0);
}

}  // namespace

void register_elementwise(const ElementwiseOp& e) {
  OpHandler h;
  h.op = e.op;
  const ChainFn chain = table_chain(e.expr);
  h.infer = [e, chain](InferCtx& c) {
    c.require_inputs(e.min_in, e.max_in);
    if (e.prepare) e.prepare(c);
    std::vector<Shape> shapes;
    for (int i = 0; i < c.n_in(); ++i)
      if (c.has_in(i)) shapes.push_back(c.shape(i));
    Shape s = broadcast_shapes(c, shapes);
    if (e.unidirectional && s != c.shape(0))
      c.invalid("inputs of shapes that do not broadcast to input 0's " + shape_str(c.shape(0)));
    const ScalarKind out = out_dtype(c, e.out);
    check_expr(c, chain, out);
    c.set_out(0, out, std::move(s));
  };
  h.eval = [chain](EvalCtx& c) { eval_chain(c, chain); };
  h.chain = [chain](ChainCtx& c) { return build_expr(c, chain); };
  register_handler(std::move(h));
}

namespace {

Expr fold(const std::vector<Expr>& x, Expr (*f)(Expr, Expr)) {
  Expr r = x[0];
  for (size_t i = 1; i < x.size(); ++i) r = f(r, x[i]);
  return r;
}
Expr add(Expr a, Expr b) { return a + b; }

// Pow's result has the base's dtype; the exponent's may differ. A float
// base takes an integer exponent cast to its kind (f32 holds integers
// exactly below 2^24; past that only |base| == 1 gives a finite non-zero
// power, and its sign may follow the rounded exponent's parity). An integer
// base with a float exponent computes in f64 (exact for bases below 2^53)
// and truncates back, as ONNX's reference does; with an integer exponent of
// another kind it computes in i64 (u64 for a u64 exponent), whose wrapping
// agrees with the base's, then narrows.
Expr pow_expr(const std::vector<Expr>& x, const Node&) {
  const Expr& b = x[0];
  const Expr& e = x[1];
  const ScalarKind kb = b.kind(), ke = e.kind();
  if (fz::is_float_kind(kb)) return fz::cast(kb, fz::pow(b, fz::is_float_kind(ke) ? e : fz::cast(kb, e)));
  if (kb == ke) return fz::pow(b, e);
  if (fz::is_float_kind(ke)) return fz::cast(kb, fz::pow(fz::cast(ScalarKind::F64, b), fz::cast(ScalarKind::F64, e)));
  const ScalarKind wide = ke == ScalarKind::U64 ? ScalarKind::U64 : ScalarKind::I64;
  return fz::cast(kb, fz::pow(fz::cast(wide, b), fz::cast(wide, e)));
}

// One-operand ops.
using Unary = Expr (*)(Expr);
ElementwiseOp unary(const char* op, Unary f) {
  return {op, 1, 1, [f](auto& x, auto&) { return f(x[0]); }};
}

const std::vector<ElementwiseOp>& arithmetic() {
  static const std::vector<ElementwiseOp> t = {
      {"Add", 2, 2, [](auto& x, auto&) { return x[0] + x[1]; }},
      {"Sub", 2, 2, [](auto& x, auto&) { return x[0] - x[1]; }},
      {"Mul", 2, 2, [](auto& x, auto&) { return x[0] * x[1]; }},
      {"Div", 2, 2, [](auto& x, auto&) { return x[0] / x[1]; }},
      {"Mod", 2, 2, [](auto& x, auto& n) { return fz::mod(x[0], x[1], n.attr_int("fmod", 0) != 0); }},
      {"Pow", 2, 2, pow_expr},
      {"Max", 1, 64, [](auto& x, auto&) { return fold(x, fz::max); }},
      {"Min", 1, 64, [](auto& x, auto&) { return fold(x, fz::min); }},
      {"Sum", 1, 64, [](auto& x, auto&) { return fold(x, add); }},
      {"Mean", 1, 64, [](auto& x, auto&) { return fold(x, add) / fz::lit(double(x.size())); }},
      {"Neg", 1, 1, [](auto& x, auto&) { return -x[0]; }},
      unary("Abs", fz::abs),
      unary("Sign", fz::sign),
      unary("Reciprocal", fz::reciprocal),
  };
  return t;
}

const std::vector<ElementwiseOp>& math() {
  static const std::vector<ElementwiseOp> t = {
      unary("Exp", fz::exp),     unary("Log", fz::log),     unary("Sqrt", fz::sqrt),   unary("Erf", fz::erf),
      unary("Floor", fz::floor), unary("Ceil", fz::ceil),   unary("Round", fz::round), unary("Tanh", fz::tanh),
      unary("Sin", fz::sin),     unary("Cos", fz::cos),     unary("Tan", fz::tan),     unary("Asin", fz::asin),
      unary("Acos", fz::acos),   unary("Atan", fz::atan),   unary("Sinh", fz::sinh),   unary("Cosh", fz::cosh),
      unary("Asinh", fz::asinh), unary("Acosh", fz::acosh), unary("Atanh", fz::atanh),
  };
  return t;
}

// Clip: min/max as attributes (opset < 11) or optional inputs; NaN passes.
Expr clip_expr(ChainCtx& c) {
  Expr x = input_expr(c, 0);
  if (c.node.opset < 11)
    return fz::clip(x, fz::lit(c.node.attr_float("min", -3.4028234663852886e38)),
                    fz::lit(c.node.attr_float("max", 3.4028234663852886e38)));
  if (c.node.inputs.size() > 1 && c.node.inputs[1] >= 0) {
    Expr lo = input_expr(c, 1);
    x = fz::where(fz::lt(x, lo), lo, x);
  }
  if (c.node.inputs.size() > 2 && c.node.inputs[2] >= 0) {
    Expr hi = input_expr(c, 2);
    x = fz::where(fz::gt(x, hi), hi, x);
  }
  return x;
}

OpHandler clip_handler() {
  OpHandler h;
  h.op = "Clip";
  h.infer = [](InferCtx& c) {
    c.require_inputs(1, 3);
    check_expr(c, clip_expr, c.dtype(0));
    c.set_out(0, c.dtype(0), c.shape(0));
  };
  h.eval = [](EvalCtx& e) { eval_chain(e, clip_expr); };
  h.chain = [](ChainCtx& c) { return build_expr(c, clip_expr); };
  return h;
}

// Cast: to the `to` type; inside a graph computed in f32 (graph/passes.h
// upcast_f16) a cast to f16 keeps its rounding.
ScalarKind cast_target(const Node& n) { return onnx_dtype(int(n.attr_int("to", 1)), n.where() + " attribute 'to'"); }

Expr cast_expr(ChainCtx& c) {
  const ScalarKind to = cast_target(c.node);
  if ((to == ScalarKind::F16 || to == ScalarKind::BF16) && c.out_dtype == ScalarKind::F32)
    return fz::round_to(to, fz::cast(ScalarKind::F32, c.in(0)));
  return fz::cast(c.out_dtype, c.in(0));
}

OpHandler cast_handler() {
  OpHandler h;
  h.op = "Cast";
  h.infer = [](InferCtx& c) {
    c.require_inputs(1, 1);
    c.set_out(0, cast_target(c.node), c.shape(0));
  };
  h.eval = [](EvalCtx& e) { eval_chain(e, cast_expr); };
  h.chain = [](ChainCtx& c) { return build_expr(c, cast_expr); };
  return h;
}

}  // namespace

void register_elementwise_nodes() {
  register_handler(cast_handler());
  register_handler(clip_handler());
  for (const auto* table : {&arithmetic(), &math()})
    for (const ElementwiseOp& e : *table) register_elementwise(e);
}

}  // namespace kgen::graph
