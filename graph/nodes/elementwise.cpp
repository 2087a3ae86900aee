// Elementwise ops: one table row per op type with its fused expression (the
// kernel: ops/elementwise/fusion.h) and its host meaning (constant folding).
// Binary and variadic ops broadcast as numpy does.
#include <cmath>
#include <cstring>
#include <functional>

#include "graph/nodes/util.h"
#include "graph/onnx/tensor_proto.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;
using ir::Op;

using HostFn = std::function<double(const std::vector<double>&, const Node&)>;
using ExprFn = std::function<Expr(const std::vector<Expr>&, const Node&)>;

struct Elementwise {
  const char* op;
  int min_in, max_in;  // variadic: max_in large
  ExprFn expr;
  HostFn host;
  bool bool_out = false;
};

Expr un(Op op, Expr a) { return fz::apply(op, {a}); }

const std::vector<Elementwise>& table() {
  auto a = [](const Node& n, const char* k, double d) { return n.attr_float(k, d); };
  static const std::vector<Elementwise> t = {
      {"Add", 2, 2, [](auto& x, auto&) { return x[0] + x[1]; }, [](auto& v, auto&) { return v[0] + v[1]; }},
      {"Sub", 2, 2, [](auto& x, auto&) { return x[0] - x[1]; }, [](auto& v, auto&) { return v[0] - v[1]; }},
      {"Mul", 2, 2, [](auto& x, auto&) { return x[0] * x[1]; }, [](auto& v, auto&) { return v[0] * v[1]; }},
      {"Div", 2, 2, [](auto& x, auto&) { return x[0] / x[1]; }, [](auto& v, auto&) { return v[0] / v[1]; }},
      {"Pow", 2, 2, [](auto& x, auto&) { return fz::apply(Op::Pow, {x[0], x[1]}); },
       [](auto& v, auto&) { return std::pow(v[0], v[1]); }},
      {"Max", 1, 64, [](auto& x, auto&) { Expr r = x[0]; for (size_t i = 1; i < x.size(); ++i) r = fz::max(r, x[i]); return r; },
       [](auto& v, auto&) { double r = v[0]; for (double e : v) r = std::max(r, e); return r; }},
      {"Min", 1, 64, [](auto& x, auto&) { Expr r = x[0]; for (size_t i = 1; i < x.size(); ++i) r = fz::min(r, x[i]); return r; },
       [](auto& v, auto&) { double r = v[0]; for (double e : v) r = std::min(r, e); return r; }},
      {"Sum", 1, 64, [](auto& x, auto&) { Expr r = x[0]; for (size_t i = 1; i < x.size(); ++i) r = r + x[i]; return r; },
       [](auto& v, auto&) { double r = 0; for (double e : v) r += e; return r; }},
      {"Mean", 1, 64, [](auto& x, auto&) { Expr r = x[0]; for (size_t i = 1; i < x.size(); ++i) r = r + x[i]; return r * fz::lit(1.0 / double(x.size())); },
       [](auto& v, auto&) { double r = 0; for (double e : v) r += e; return r / double(v.size()); }},
      {"Relu", 1, 1, [](auto& x, auto&) { return fz::relu(x[0]); }, [](auto& v, auto&) { return v[0] > 0 ? v[0] : 0.0; }},
      {"LeakyRelu", 1, 1, [a](auto& x, auto& n) { return fz::max(x[0], fz::lit(0)) + fz::lit(a(n, "alpha", 0.01)) * fz::min(x[0], fz::lit(0)); },
       [a](auto& v, auto& n) { return v[0] >= 0 ? v[0] : a(n, "alpha", 0.01) * v[0]; }},
      {"Sigmoid", 1, 1, [](auto& x, auto&) { return fz::sigmoid(x[0]); }, [](auto& v, auto&) { return 1 / (1 + std::exp(-v[0])); }},
      {"Tanh", 1, 1, [](auto& x, auto&) { return fz::tanh(x[0]); }, [](auto& v, auto&) { return std::tanh(v[0]); }},
      {"Exp", 1, 1, [](auto& x, auto&) { return fz::exp(x[0]); }, [](auto& v, auto&) { return std::exp(v[0]); }},
      {"Log", 1, 1, [](auto& x, auto&) { return un(Op::Log, x[0]); }, [](auto& v, auto&) { return std::log(v[0]); }},
      {"Sqrt", 1, 1, [](auto& x, auto&) { return un(Op::Sqrt, x[0]); }, [](auto& v, auto&) { return std::sqrt(v[0]); }},
      {"Neg", 1, 1, [](auto& x, auto&) { return -x[0]; }, [](auto& v, auto&) { return -v[0]; }},
      {"Abs", 1, 1, [](auto& x, auto&) { return un(Op::Abs, x[0]); }, [](auto& v, auto&) { return std::fabs(v[0]); }},
      {"Erf", 1, 1, [](auto& x, auto&) { return un(Op::Erf, x[0]); }, [](auto& v, auto&) { return std::erf(v[0]); }},
      {"Floor", 1, 1, [](auto& x, auto&) { return un(Op::Floor, x[0]); }, [](auto& v, auto&) { return std::floor(v[0]); }},
      {"Ceil", 1, 1, [](auto& x, auto&) { return un(Op::Ceil, x[0]); }, [](auto& v, auto&) { return std::ceil(v[0]); }},
      {"Sin", 1, 1, [](auto& x, auto&) { return un(Op::Sin, x[0]); }, [](auto& v, auto&) { return std::sin(v[0]); }},
      {"Cos", 1, 1, [](auto& x, auto&) { return un(Op::Cos, x[0]); }, [](auto& v, auto&) { return std::cos(v[0]); }},
      {"Reciprocal", 1, 1, [](auto& x, auto&) { return fz::lit(1) / x[0]; }, [](auto& v, auto&) { return 1 / v[0]; }},
      {"Softplus", 1, 1, [](auto& x, auto&) { return un(Op::Log, fz::lit(1) + fz::exp(x[0])); },
       [](auto& v, auto&) { return std::log1p(std::exp(v[0])); }},
      {"Softsign", 1, 1, [](auto& x, auto&) { return x[0] / (fz::lit(1) + un(Op::Abs, x[0])); },
       [](auto& v, auto&) { return v[0] / (1 + std::fabs(v[0])); }},
      {"HardSigmoid", 1, 1,
       [a](auto& x, auto& n) { return fz::max(fz::lit(0), fz::min(fz::lit(1), fz::lit(a(n, "alpha", 0.2)) * x[0] + fz::lit(a(n, "beta", 0.5)))); },
       [a](auto& v, auto& n) { return std::max(0.0, std::min(1.0, a(n, "alpha", 0.2) * v[0] + a(n, "beta", 0.5))); }},
      {"HardSwish", 1, 1, [](auto& x, auto&) { return x[0] * fz::max(fz::lit(0), fz::min(fz::lit(1), x[0] * fz::lit(1.0 / 6) + fz::lit(0.5))); },
       [](auto& v, auto&) { return v[0] * std::max(0.0, std::min(1.0, v[0] / 6 + 0.5)); }},
      {"Elu", 1, 1,
       [a](auto& x, auto& n) { return fz::max(x[0], fz::lit(0)) + fz::lit(a(n, "alpha", 1.0)) * (fz::exp(fz::min(x[0], fz::lit(0))) - fz::lit(1)); },
       [a](auto& v, auto& n) { return v[0] > 0 ? v[0] : a(n, "alpha", 1.0) * (std::exp(v[0]) - 1); }},
      {"Gelu", 1, 1,
       [](auto& x, auto& n) {
         if (n.attr_str("approximate", "none") == "tanh") return fz::gelu(x[0]);
         return fz::lit(0.5) * x[0] * (fz::lit(1) + un(Op::Erf, x[0] * fz::lit(M_SQRT1_2)));
       },
       [](auto& v, auto& n) {
         if (n.attr_str("approximate", "none") == "tanh")
           return 0.5 * v[0] * (1 + std::tanh(0.7978845608028654 * (v[0] + 0.044715 * v[0] * v[0] * v[0])));
         return 0.5 * v[0] * (1 + std::erf(v[0] * M_SQRT1_2));
       }},
  };
  return t;
}

// Clip: min/max as attributes (opset < 11) or optional inputs.
Expr clip_expr(const ChainCtx& c) {
  Expr x = c.in(0);
  if (c.node.opset < 11) {
    x = fz::max(x, fz::lit(c.node.attr_float("min", -3.4028234663852886e38)));
    return fz::min(x, fz::lit(c.node.attr_float("max", 3.4028234663852886e38)));
  }
  if (c.node.inputs.size() > 1 && c.node.inputs[1] >= 0) x = fz::max(x, c.in(1));
  if (c.node.inputs.size() > 2 && c.node.inputs[2] >= 0) x = fz::min(x, c.in(2));
  return x;
}

// Host evaluation with broadcasting, in double.
void eval_broadcast(EvalCtx& e, const HostFn& f) {
  Tensor& out = e.out[0];
  const Shape& os = out.shape;
  const size_t rank = os.size();
  std::vector<std::vector<int64_t>> bstrides;
  for (const Tensor* t : e.in) {
    std::vector<int64_t> st(rank, 0), own = strides_of(t->shape);
    for (size_t i = 0; i < t->shape.size(); ++i)
      st[rank - t->shape.size() + i] = t->shape[i] == 1 ? 0 : own[i];
    bstrides.push_back(st);
  }
  std::vector<double> args(e.in.size());
  const bool int_out = ir::Type(out.dtype).is_int();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rem = i;
    std::vector<int64_t> idx(rank);
    for (int a = int(rank) - 1; a >= 0; --a) {
      idx[size_t(a)] = rem % os[size_t(a)];
      rem /= os[size_t(a)];
    }
    for (size_t k = 0; k < e.in.size(); ++k) {
      int64_t off = 0;
      for (size_t a = 0; a < rank; ++a) off += idx[a] * bstrides[k][a];
      args[k] = e.in[k]->get(off);
    }
    double r = f(args, e.node);
    if (int_out) r = std::trunc(r);  // integer Div truncates
    out.set(i, r);
  }
}

void infer_elementwise(InferCtx& c, int lo, int hi, bool bool_out) {
  c.require_inputs(lo, hi);
  std::vector<Shape> shapes;
  for (int i = 0; i < c.n_in(); ++i)
    if (c.has_in(i)) shapes.push_back(c.shape(i));
  c.set_out(0, bool_out ? ScalarKind::Bool : c.dtype(0), broadcast_shapes(c, shapes));
}

// Cast: to the `to` type; inside a graph computed in f32 (graph/passes.h
// upcast_f16) a cast to f16 keeps its rounding.
ScalarKind cast_target(const Node& n) { return onnx_dtype(int(n.attr_int("to", 1)), n.where() + " attribute 'to'"); }

OpHandler cast_handler() {
  OpHandler h;
  h.op = "Cast";
  h.infer = [](InferCtx& c) {
    c.require_inputs(1, 1);
    c.set_out(0, cast_target(c.node), c.shape(0));
  };
  h.eval = [](EvalCtx& e) {
    Tensor& o = e.out[0];
    for (int64_t i = 0; i < o.numel(); ++i) {
      if (o.dtype == ScalarKind::I64 || o.dtype == ScalarKind::U64) {
        const int64_t v = ir::Type(e.in[0]->dtype).is_float() ? int64_t(e.in[0]->get(i)) : e.in[0]->get_int(i);
        std::memcpy(o.mutable_data() + 8 * i, &v, 8);
      } else {
        o.set(i, e.in[0]->get(i));
      }
    }
  };
  h.chain = [](ChainCtx& c) {
    const ScalarKind to = cast_target(c.node);
    if ((to == ScalarKind::F16 || to == ScalarKind::BF16) && c.out_dtype == ScalarKind::F32)
      return fz::round_to(to, fz::cast(ScalarKind::F32, c.in(0)));
    return fz::cast(c.out_dtype, c.in(0));
  };
  return h;
}

}  // namespace

void register_elementwise_nodes() {
  register_handler(cast_handler());
  for (const Elementwise& e : table()) {
    OpHandler h;
    h.op = e.op;
    const int lo = e.min_in, hi = e.max_in;
    const bool b = e.bool_out;
    h.infer = [lo, hi, b](InferCtx& c) { infer_elementwise(c, lo, hi, b); };
    HostFn host = e.host;
    h.eval = [host](EvalCtx& c) { eval_broadcast(c, host); };
    ExprFn ex = e.expr;
    h.chain = [ex](ChainCtx& c) {
      std::vector<Expr> args;
      for (int i = 0; i < c.node.n_inputs(); ++i) args.push_back(c.in(i));
      return ex(args, c.node);
    };
    register_handler(std::move(h));
  }
  OpHandler clip;
  clip.op = "Clip";
  clip.infer = [](InferCtx& c) {
    c.require_inputs(1, 3);
    c.set_out(0, c.dtype(0), c.shape(0));
  };
  clip.chain = clip_expr;
  register_handler(std::move(clip));
}

}  // namespace kgen::graph
