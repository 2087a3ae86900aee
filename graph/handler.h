// What the graph knows about an op type: how it infers its outputs' types
// and shapes, how it computes on the host (constant folding of shape
// subgraphs and initializer arithmetic), how it lowers onto ops/ kernels,
// and, for elementwise ops, its expression so that chains fuse into one
// kernel. One handler per (domain, op type); graph/nodes/*.cpp define them.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/elementwise/fusion.h"

namespace kgen::graph {

struct LowerCtx;  // graph/lower.h

// An op the graph cannot run as asked: names the node, op, opset and what is
// missing (an attribute value, a dtype, a rank...).
struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InferCtx {
  Graph& g;
  Node& node;

  int n_in() const { return node.n_inputs(); }
  bool has_in(int i) const { return i < int(node.inputs.size()) && node.inputs[size_t(i)] >= 0; }
  const Value& in(int i) const;         // throws naming the node when absent
  const Shape& shape(int i) const { return in(i).shape; }
  ScalarKind dtype(int i) const { return in(i).dtype; }
  const Tensor* constant(int i) const;  // the input's data when known, else null
  // The data of an input that must be constant (Reshape's shape, Slice's starts...).
  const Tensor& need_constant(int i, const char* what) const;
  void set_out(int i, ScalarKind dtype, Shape shape);
  [[noreturn]] void unsupported(const std::string& what) const;  // UnsupportedError
  [[noreturn]] void invalid(const std::string& what) const;      // std::invalid_argument
  void require_inputs(int lo, int hi) const;
};

// Host evaluation: inputs are constants, outputs arrive sized by infer.
struct EvalCtx {
  Graph& g;
  Node& node;
  std::vector<const Tensor*> in;  // null for omitted inputs
  std::vector<Tensor>& out;
};

// Building a fused elementwise expression: the expression of input i (a chain
// input or an inlined producer's expression).
struct ChainCtx {
  const Node& node;
  const Graph& g;
  std::function<ops::fusion::Expr(int input)> in;
  ScalarKind out_dtype;
};

struct OpHandler {
  std::string op, domain;  // domain "" = ai.onnx
  std::function<void(InferCtx&)> infer;
  std::function<void(EvalCtx&)> eval;                     // optional: host constant folding
  std::function<void(LowerCtx&)> lower;                   // device kernels
  std::function<ops::fusion::Expr(ChainCtx&)> chain;      // optional: elementwise, fusible
  // Can this node's kernel also apply `consumer` (the sole reader of its
  // output 0) as an epilogue (Conv + Relu)? The lowering then hands the
  // consumer to `lower` in LowerCtx::epilogue.
  std::function<bool(const Graph&, const Node& self, const Node& consumer)> absorbs;
  // Output 0 is input 0's bytes reinterpreted (Reshape, Squeeze, Identity...):
  // lowered as a view, no kernel.
  bool view = false;
  // Cheap on the host whatever the size (shape arithmetic): folded even when large.
  bool fold_always = false;
};

void register_handler(OpHandler h);
const OpHandler* find_handler(const std::string& domain, const std::string& op);
void register_all_handlers();  // idempotent
std::vector<const OpHandler*> all_handlers();

}  // namespace kgen::graph
