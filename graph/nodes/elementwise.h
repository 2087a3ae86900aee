// Elementwise op handlers from their fused expressions: one ElementwiseOp
// per op type (graph/nodes/elementwise.cpp: arithmetic and math; logic.cpp:
// comparisons, logical and bitwise ops; activations.cpp). Inputs broadcast
// as numpy does; the host evaluation (constant folding) is the chain's C++
// reference (ops/elementwise/fusion.h: reference_chain), so folded values
// are exactly what the kernel computes, in every dtype.
#pragma once
#include <functional>
#include <vector>

#include "graph/handler.h"

namespace kgen::graph {

// The op's expression over its inputs' expressions, each in its dtype's
// compute kind (an omitted optional input: an empty Expr); the result
// should compute in the output's (build_expr casts it there otherwise).
using ElementwiseExpr = std::function<ops::fusion::Expr(const std::vector<ops::fusion::Expr>& x, const Node& n)>;

struct ElementwiseOp {
  enum class Out { LikeInput0, LikeInput1, Bool };
  const char* op;
  int min_in, max_in;
  ElementwiseExpr expr;
  Out out = Out::LikeInput0;
  bool unidirectional = false;  // the other inputs broadcast to input 0's shape (PRelu's slope)
  std::function<void(InferCtx&)> prepare = {};  // optional: rewrites the node's inputs before inference
};

// A handler whose output has the broadcast shape of the present inputs.
void register_elementwise(const ElementwiseOp& e);

// The handler's expression with inputs of their dtypes; a misused builder
// (a dtype the op does not take) becomes an UnsupportedError naming the node.
ops::fusion::Expr build_expr(const ChainCtx& c, const std::function<ops::fusion::Expr(ChainCtx&)>& chain);
// Checks at inference that the expression builds for the inputs' dtypes.
void check_expr(InferCtx& c, const std::function<ops::fusion::Expr(ChainCtx&)>& chain, ScalarKind out);
// Host evaluation of a chain handler: its expression on the constant inputs
// (broadcast to the output), by the chain reference.
void eval_chain(EvalCtx& e, const std::function<ops::fusion::Expr(ChainCtx&)>& chain);

}  // namespace kgen::graph
