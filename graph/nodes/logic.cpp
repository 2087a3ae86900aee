// Comparisons (bool results), logical ops on bool, bitwise ops and shifts on
// integers, Where, IsNaN and IsInf: elementwise handlers from their fused
// expressions (graph/nodes/elementwise.h).
#include <stdexcept>

#include "graph/nodes/elementwise.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;
using Out = ElementwiseOp::Out;

using Binary = Expr (*)(Expr, Expr);
ElementwiseOp binary(const char* op, Binary f, Out out = Out::LikeInput0) {
  return {op, 2, 2, [f](auto& x, auto&) { return f(x[0], x[1]); }, out};
}

// BitShift: `direction` LEFT or RIGHT (logical on the unsigned types ONNX allows).
Expr bitshift(const std::vector<Expr>& x, const Node& n) {
  const std::string d = n.attr_str("direction", "");
  if (d == "LEFT") return fz::shl(x[0], x[1]);
  if (d == "RIGHT") return fz::shr(x[0], x[1]);
  throw std::invalid_argument("direction '" + d + "' (LEFT or RIGHT)");
}

const std::vector<ElementwiseOp>& logic() {
  static const std::vector<ElementwiseOp> t = {
      binary("Equal", fz::eq, Out::Bool),
      binary("Less", fz::lt, Out::Bool),
      binary("LessOrEqual", fz::le, Out::Bool),
      binary("Greater", fz::gt, Out::Bool),
      binary("GreaterOrEqual", fz::ge, Out::Bool),
      binary("And", fz::logical_and),
      binary("Or", fz::logical_or),
      binary("Xor", fz::logical_xor),
      {"Not", 1, 1, [](auto& x, auto&) { return fz::logical_not(x[0]); }},
      binary("BitwiseAnd", fz::bitwise_and),
      binary("BitwiseOr", fz::bitwise_or),
      binary("BitwiseXor", fz::bitwise_xor),
      {"BitwiseNot", 1, 1, [](auto& x, auto&) { return fz::bitwise_not(x[0]); }},
      {"BitShift", 2, 2, bitshift},
      {"Where", 3, 3, [](auto& x, auto&) { return fz::where(x[0], x[1], x[2]); }, Out::LikeInput1},
      {"IsNaN", 1, 1, [](auto& x, auto&) { return fz::isnan(x[0]); }, Out::Bool},
      {"IsInf", 1, 1,
       [](auto& x, auto& n) {
         return fz::isinf(x[0], n.attr_int("detect_positive", 1) != 0, n.attr_int("detect_negative", 1) != 0);
       },
       Out::Bool},
  };
  return t;
}

}  // namespace

void register_logic_nodes() {
  for (const ElementwiseOp& e : logic()) register_elementwise(e);
}

}  // namespace kgen::graph
