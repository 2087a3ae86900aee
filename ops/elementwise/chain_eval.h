// A chain's expression lowered to DSL values inside its kernel
// (ops/elementwise/fusion.cpp): each node in its kind, on scalars (lanes 1)
// or 16-lane lines, with the integer definitions of expr_ops.h (no division
// by zero reaches the target).
#pragma once
#include <functional>
#include <map>

#include "dsl/dsl.h"
#include "ops/elementwise/expr.h"

namespace kgen::ops::fusion {

class Evaluator {
 public:
  // input(i): input i at the current element(s), in its compute kind.
  // fast (the CPU form): f32 x / (1 + exp(y)) by sigmoid_div and polynomial
  // tanh and erf; divide: sigmoid_div's reciprocal by a line division.
  Evaluator(int lanes, std::function<dsl::Value(int)> input, bool fast, bool divide)
      : lanes_(lanes), input_(std::move(input)), fast_(fast), divide_(divide) {}
  dsl::Value eval(const Expr& e);
  // The chain's result r (of kind `from`) as the output type `out` (lanes as r).
  dsl::Value to_output(ir::ScalarKind from, ir::ScalarKind out, const dsl::Value& r) const;

 private:
  ir::Type type(ir::ScalarKind k) const;
  dsl::Value fill(ir::ScalarKind k, int64_t v) const;  // a constant of kind k (a line of it)
  dsl::Value constant_of(const Node& n) const;
  dsl::Value compute(const Node& n);
  dsl::Value op(const Node& n, const std::vector<dsl::Value>& a);
  dsl::Value int_op(ir::Op op, ir::ScalarKind k, const dsl::Value& a, const dsl::Value& b);
  dsl::Value int_pow(ir::ScalarKind k, const dsl::Value& a, const dsl::Value& b);
  dsl::Value shift(ir::Op op, ir::ScalarKind k, const dsl::Value& a, const dsl::Value& b);
  dsl::Value convert(ir::ScalarKind from, ir::ScalarKind to, const dsl::Value& v) const;
  dsl::Value float_to_int(ir::ScalarKind to, dsl::Value v, bool round_even) const;
  dsl::Value saturate(ir::ScalarKind from, ir::ScalarKind to, dsl::Value v) const;
  dsl::Value special_compare(const Node& n, const std::vector<dsl::Value>& a) const;
  dsl::Value float_rem(const dsl::Value& a, const dsl::Value& b) const;
  dsl::Value is_nan(const dsl::Value& v) const;
  dsl::Value is_inf(const dsl::Value& v) const;
  dsl::Value bits_of(const dsl::Value& v) const;  // f32 -> u32 (lanes kept)

  int lanes_;
  std::function<dsl::Value(int)> input_;
  bool fast_, divide_;
  std::map<const Node*, dsl::Value> memo_;
};

// Does the expression hold an f32 x / (1 + exp(y)) (a sigmoid_div in the CPU form)?
bool has_sigmoid_div(const Expr& e);

}  // namespace kgen::ops::fusion
