// The tensor graph: values (typed tensors with static shapes, a constant's
// data when known) and nodes (an op type in a domain at an opset, attributes,
// value inputs and outputs). The ONNX importer builds one; the GGUF runner
// builds one directly. Passes (graph/passes.h) rewrite it in place; lowering
// (graph/lower.h) turns it into launches of ops/ kernels.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace kgen::graph {

// A dimension: a size, or a symbol (the model's "batch") until specialised.
struct Dim {
  int64_t size = -1;  // -1: symbolic or unknown
  std::string symbol;
  bool known() const { return size >= 0; }
};

struct Value {
  std::string name;
  ScalarKind dtype = ScalarKind::F32;
  std::vector<Dim> dims;            // as declared (inputs may hold symbols)
  Shape shape;                      // static shape once inferred
  bool shaped = false;              // shape and dtype inferred
  std::optional<Tensor> constant;   // initializer or folded value
  // Persistent state (a KV cache): a device buffer the prepared model
  // (PreparedModel) keeps across runs, zeroed at prepare, read and written in place
  // by the nodes that take it; neither an input nor a constant.
  bool state = false;
  int producer = -1;                // node index, -1 for inputs and initializers
};

struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::optional<graph::Tensor> tensor;
};

struct Node {
  std::string name, op, domain;  // domain "" = ai.onnx
  int opset = 0;                 // of the node's domain
  std::vector<int> inputs;       // value ids; -1: an omitted optional input
  std::vector<int> outputs;      // value ids; -1: an omitted optional output
  std::map<std::string, Attribute> attrs;
  bool dead = false;             // removed by a pass

  bool has(const std::string& a) const { return attrs.count(a) != 0; }
  int64_t attr_int(const std::string& a, int64_t dflt) const;
  double attr_float(const std::string& a, double dflt) const;
  std::string attr_str(const std::string& a, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& a, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(const std::string& a, std::vector<double> dflt = {}) const;
  // "node 'conv1' (Conv, opset 12)": every error about a node starts with it.
  std::string where() const;
  int n_inputs() const;  // present inputs, trailing omitted ones dropped
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs, outputs;
  std::map<std::string, int> opsets;  // domain -> version

  int add_value(Value v);
  int find_value(const std::string& name) const;  // -1 when absent
  // Node indices in order, dead ones skipped.
  std::vector<int> live_nodes() const;
  // Number of live nodes reading value v (graph outputs count as one).
  int uses(int v) const;
};

}  // namespace kgen::graph
