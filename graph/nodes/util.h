// Helpers the node handlers share: numpy broadcasting, axis normalisation,
// attribute-or-input reads that changed form across opsets.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "graph/handler.h"
#include "graph/lower.h"
#include "ops/matmul/epilogue.h"

namespace kgen::graph {

// numpy's broadcast of shapes (right-aligned, size-1 axes repeat); throws
// naming the node when they do not broadcast.
Shape broadcast_shapes(const InferCtx& c, const std::vector<Shape>& shapes);
// axis in [-rank, rank) -> [0, rank); throws naming the node otherwise.
int64_t normalize_axis(const InferCtx& c, int64_t axis, int64_t rank);
// Axes given as an attribute (older opsets) or as constant input `input` (newer).
std::optional<std::vector<int64_t>> axes_attr_or_input(const InferCtx& c, const char* attr, int input);
// Row-major strides of a shape, in elements.
std::vector<int64_t> strides_of(const Shape& s);

// ---- fused epilogues (ops/matmul/epilogue.h) of products and convolutions ----

// A node's output as the matmul epilogue's [batch, M, N]: axes [0, m_from)
// are its batch, [m_from, n_from) its rows, [n_from, rank) its columns
// (a MatMul's C; a Conv's y is [N | OC | spatial]).
struct ProductView {
  Shape out;
  size_t m_from = 0, n_from = 0;
  int64_t batch = 1, m = 1, n = 1;
};

// An operand's shape (broadcasting against the view's output) as [batch, M,
// N]: each group of axes all repeated or all present, else null (a [3, M, N]
// residual against [2, 3, M, N] with B shared; a Conv's [1, 1, 1, W] row).
std::optional<Shape> operand_view(const ProductView& v, Shape s);

// The float types products and convolutions store (f32, f16, bf16).
bool float_io(ScalarKind k);

// A constant float scalar, which an epilogue takes as a literal.
bool scalar_literal(const Value& v);

// OpHandler::absorbs' common part for a node `self` with output `view`: an
// elementwise consumer (with a chain) of the view's shape, whose other
// inputs exist before self runs (made by earlier nodes) and broadcast
// against the view. The output's type is the caller's to check.
bool epilogue_absorbs(const Graph& g, const Node& self, const ProductView& view, const Node& consumer);

// The epilogue of a node with absorbed consumers: its value's expression
// (over in(0), the f32 result) through each absorbed node's; the other
// values they read become its inputs, in `slots`.
struct EpilogueBuilder {
  LowerCtx& c;
  const ProductView& view;
  ops::MatmulEpilogue ep = {};
  std::vector<int> slots = {};          // the inputs' slots
  std::map<int, ops::fusion::Expr> known = {};  // group values -> their expressions
  std::map<int, int> operand = {};      // value -> its in() index

  // Graph value v as an expression: known, a literal, or a new input.
  ops::fusion::Expr value(int v);
  // A new input in slot `slot`, its shape given in the [batch, M, N] view.
  ops::fusion::Expr extra(int slot, const ops::fusion::Input& in);
  // acc: the node's own value (its type t); then the absorbed nodes.
  void absorb(ops::fusion::Expr acc, ScalarKind t);
};

// The product `p` of slots a and b into `out`, with `ep` applied as it stores
// C (ep's inputs in `ep_slots`): one launch where the chosen form fuses it.
void plan_product(LowerCtx& c, const ops::Problem& p, int a, int b, const ops::MatmulEpilogue& ep,
                  const std::vector<int>& ep_slots, int out);

}  // namespace kgen::graph
