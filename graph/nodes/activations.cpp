// Activation functions (ops/elementwise/activations.h, with ONNX's attribute
// defaults): elementwise handlers from their fused expressions
// (graph/nodes/elementwise.h). Float inputs, except Relu, PRelu and Shrink,
// which ONNX also defines on integers.
#include <cmath>
#include <stdexcept>

#include "graph/nodes/elementwise.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;
using ir::ScalarKind;

double attr(const Node& n, const char* name, double dflt) { return n.attr_float(name, dflt); }

Expr gelu(const std::vector<Expr>& x, const Node& n) {
  const std::string a = n.attr_str("approximate", "none");
  if (a == "none") return fz::gelu_erf(x[0]);
  if (a == "tanh") return fz::gelu_tanh(x[0]);
  throw std::invalid_argument("approximate '" + a + "' (none or tanh)");
}

// x * sigmoid(alpha x) (Swish, opset 24; alpha 1 is silu).
Expr swish(const std::vector<Expr>& x, const Node& n) {
  const double alpha = attr(n, "alpha", 1.0);
  return alpha == 1.0 ? fz::silu(x[0]) : x[0] * fz::sigmoid(fz::lit(alpha) * x[0]);
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0. On integers
// the float attributes compare in f64; an integral bias shifts in the
// integer kind (exact for every value), another one in f64, truncated back
// as ONNX's reference does.
Expr shrink(const std::vector<Expr>& x, const Node& n) {
  const double lambd = attr(n, "lambd", 0.5), bias = attr(n, "bias", 0.0);
  const Expr& v = x[0];
  const ScalarKind k = v.kind();
  if (!fz::is_int_kind(k)) {
    Expr inner = fz::where(fz::gt(v, fz::lit(lambd)), v - fz::lit(bias), fz::lit(0));
    return fz::where(fz::lt(v, fz::lit(-lambd)), v + fz::lit(bias), inner);
  }
  Expr wide = fz::cast(ScalarKind::F64, v);
  Expr up, down;
  const ir::Type t(k);
  const double limit = std::ldexp(1.0, t.bits() - (t.is_signed() ? 1 : 0)) - 1;
  if (bias == std::trunc(bias) && std::fabs(bias) <= limit) {
    Expr b = fz::lit(std::fabs(bias), k);
    up = bias >= 0 ? v + b : v - b;
    down = bias >= 0 ? v - b : v + b;
  } else {
    up = fz::cast(k, wide + fz::lit(bias));
    down = fz::cast(k, wide - fz::lit(bias));
  }
  Expr inner = fz::where(fz::gt(wide, fz::lit(lambd)), down, fz::lit(0, k));
  return fz::where(fz::lt(wide, fz::lit(-lambd)), up, inner);
}

// PRelu before opset 7 applies a 1-D slope of x's channel count along axis
// 1 (numpy broadcasting came with opset 7): the constant slope becomes a
// [C, 1, ...] value that broadcasts so.
void prelu_channel_slope(InferCtx& c) {
  const Shape x = c.shape(0), s = c.shape(1);
  if (c.node.opset >= 7 || x.size() < 3 || s.size() != 1 || s[0] != x[1] || s[0] == 1) return;
  Value v = c.in(1);
  v.constant = c.need_constant(1, "a slope per channel (PRelu before opset 7)");
  v.name += ".per_channel";
  v.producer = -1;
  v.dims.clear();
  v.shape = Shape(x.size() - 1, 1);
  v.shape[0] = s[0];
  v.constant->shape = v.shape;  // the same elements, shaped to broadcast along axis 1
  c.node.inputs[1] = c.g.add_value(std::move(v));
}

const std::vector<ElementwiseOp>& activations() {
  using N = const Node;
  static const std::vector<ElementwiseOp> t = {
      {"Relu", 1, 1, [](auto& x, N&) { return fz::relu(x[0]); }},
      {"LeakyRelu", 1, 1, [](auto& x, N& n) { return fz::leaky_relu(x[0], attr(n, "alpha", 0.01)); }},
      {"PRelu", 2, 2, [](auto& x, N&) { return fz::where(fz::lt(x[0], fz::lit(0)), x[1] * x[0], x[0]); },
       ElementwiseOp::Out::LikeInput0, /*unidirectional=*/true, prelu_channel_slope},
      {"ThresholdedRelu", 1, 1,
       [](auto& x, N& n) { return fz::where(fz::gt(x[0], fz::lit(attr(n, "alpha", 1.0))), x[0], fz::lit(0)); }},
      {"Elu", 1, 1, [](auto& x, N& n) { return fz::elu(x[0], attr(n, "alpha", 1.0)); }},
      {"Selu", 1, 1,
       [](auto& x, N& n) {
         const double alpha = attr(n, "alpha", 1.67326319217681884765625);
         return fz::selu(x[0], alpha, attr(n, "gamma", 1.05070102214813232421875));
       }},
      {"Celu", 1, 1, [](auto& x, N& n) { return fz::celu(x[0], attr(n, "alpha", 1.0)); }},
      {"Sigmoid", 1, 1, [](auto& x, N&) { return fz::sigmoid(x[0]); }},
      {"HardSigmoid", 1, 1,
       [](auto& x, N& n) { return fz::hardsigmoid(x[0], attr(n, "alpha", 0.2), attr(n, "beta", 0.5)); }},
      {"HardSwish", 1, 1, [](auto& x, N&) { return fz::hardswish(x[0]); }},
      {"Softplus", 1, 1, [](auto& x, N&) { return fz::softplus(x[0]); }},
      {"Softsign", 1, 1, [](auto& x, N&) { return fz::softsign(x[0]); }},
      {"Mish", 1, 1, [](auto& x, N&) { return fz::mish(x[0]); }},
      {"Gelu", 1, 1, gelu},
      {"Swish", 1, 1, swish},
      {"Shrink", 1, 1, shrink},
  };
  return t;
}

}  // namespace

void register_activations_nodes() {
  for (const ElementwiseOp& e : activations()) register_elementwise(e);
}

}  // namespace kgen::graph
