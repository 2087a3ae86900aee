#include "graph/onnx/import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "graph/onnx/tensor_proto.h"

namespace kgen::graph {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ModelError("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Attribute convert_attribute(const onnx::AttributeProto& a, const std::string& where, const std::string& dir) {
  Attribute r;
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: r.kind = Attribute::Kind::Int; r.i = a.i(); break;
    case A::FLOAT: r.kind = Attribute::Kind::Float; r.f = a.f(); break;
    case A::STRING: r.kind = Attribute::Kind::String; r.s = a.s(); break;
    case A::INTS: r.kind = Attribute::Kind::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case A::FLOATS: r.kind = Attribute::Kind::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case A::STRINGS: r.kind = Attribute::Kind::Strings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    case A::TENSOR:
      r.kind = Attribute::Kind::Tensor;
      r.tensor = tensor_from_proto(a.t(), dir, where + " attribute '" + a.name() + "'");
      break;
    case A::GRAPH:
    case A::GRAPHS: r.kind = Attribute::Kind::Graph; break;  // control flow: refused by lowering, naming the node
    default:
      // Pre-IR-3 models leave `type` unset: infer it from the populated field.
      if (a.has_i()) { r.kind = Attribute::Kind::Int; r.i = a.i(); }
      else if (a.has_f()) { r.kind = Attribute::Kind::Float; r.f = a.f(); }
      else if (a.has_s()) { r.kind = Attribute::Kind::String; r.s = a.s(); }
      else if (a.ints_size()) { r.kind = Attribute::Kind::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); }
      else if (a.floats_size()) { r.kind = Attribute::Kind::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); }
      else if (a.has_t()) { r.kind = Attribute::Kind::Tensor; r.tensor = tensor_from_proto(a.t(), dir, where); }
      else throw ModelError(where + ": attribute '" + a.name() + "' has an unsupported type " + std::to_string(int(a.type())));
  }
  return r;
}

// Declared type of a graph input or output.
void read_value_info(const onnx::ValueInfoProto& vi, Value& v, const std::string& what) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    if (vi.has_type() && vi.type().value_case() != onnx::TypeProto::kTensorType)
      throw ModelError(what + ": value '" + vi.name() + "' is not a tensor (sequence, map or optional types are not supported)");
    return;
  }
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type()) v.dtype = onnx_dtype(tt.elem_type(), what + ": value '" + vi.name() + "'");
  if (tt.has_shape()) {
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) throw ModelError(what + ": value '" + vi.name() + "' has a negative dimension");
        dim.size = d.dim_value();
      } else {
        dim.symbol = d.has_dim_param() ? d.dim_param() : "?";
      }
      v.dims.push_back(dim);
    }
  }
}

// Nodes in an order where every input is defined first (ONNX requires it,
// some exporters do not honour it); a cycle is an error.
std::vector<int> topological_order(const onnx::GraphProto& g, const std::set<std::string>& defined0, const std::string& what) {
  const int n = g.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::vector<int> order, state(size_t(n), 0);
  std::vector<std::pair<int, int>> stack;
  for (int root = 0; root < n; ++root) {
    if (state[size_t(root)]) continue;
    stack.push_back({root, 0});
    state[size_t(root)] = 1;
    while (!stack.empty()) {
      auto& [i, k] = stack.back();
      const auto& node = g.node(i);
      if (k < node.input_size()) {
        const std::string& in = node.input(k++);
        if (in.empty() || defined0.count(in)) continue;
        auto it = producer.find(in);
        if (it == producer.end()) continue;  // reported when the node is converted
        int p = it->second;
        if (state[size_t(p)] == 1) throw ModelError(what + ": the graph has a cycle through value '" + in + "'");
        if (state[size_t(p)] == 0) {
          state[size_t(p)] = 1;
          stack.push_back({p, 0});
        }
        continue;
      }
      state[size_t(i)] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }
  return order;
}

Graph convert(const onnx::ModelProto& m, const std::string& dir, const std::string& what) {
  if (!m.has_graph()) throw ModelError(what + ": no graph in the model");
  const auto& g = m.graph();
  Graph graph;
  graph.name = g.name();
  for (const auto& op : m.opset_import()) graph.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = int(op.version());
  if (m.opset_import_size() == 0) graph.opsets[""] = 1;  // IR < 3 models: opset 1

  auto value_id = [&](const std::string& name) {
    int v = graph.find_value(name);
    if (v < 0) {
      Value val;
      val.name = name;
      v = graph.add_value(std::move(val));
    }
    return v;
  };
  std::set<std::string> defined;
  for (const auto& init : g.initializer()) {
    if (init.name().empty()) throw ModelError(what + ": an initializer has no name");
    if (defined.count(init.name())) throw ModelError(what + ": initializer '" + init.name() + "' is defined twice");
    int v = value_id(init.name());
    graph.values[size_t(v)].constant = tensor_from_proto(init, dir, what + ": initializer '" + init.name() + "'");
    graph.values[size_t(v)].dtype = graph.values[size_t(v)].constant->dtype;
    defined.insert(init.name());
  }
  if (g.sparse_initializer_size()) throw ModelError(what + ": sparse initializers are not supported");
  for (const auto& in : g.input()) {
    if (defined.count(in.name())) continue;  // IR < 4: initializers listed as inputs carry their default
    int v = value_id(in.name());
    read_value_info(in, graph.values[size_t(v)], what + ": graph input");
    graph.inputs.push_back(v);
    defined.insert(in.name());
  }
  for (int i : topological_order(g, defined, what)) {
    const auto& np = g.node(i);
    Node n;
    n.op = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? n.op + "_" + std::to_string(i) : np.name();
    auto ops = graph.opsets.find(n.domain);
    if (ops == graph.opsets.end())
      throw ModelError(what + ": node '" + n.name + "' uses domain '" + n.domain + "', which the model does not import");
    n.opset = ops->second;
    for (const auto& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      if (!defined.count(in))
        throw ModelError(what + ": " + n.where() + " reads '" + in + "', which no node, initializer or graph input defines");
      n.inputs.push_back(graph.find_value(in));
    }
    for (const auto& a : np.attribute()) n.attrs[a.name()] = convert_attribute(a, what + ": " + n.where(), dir);
    const int node_index = int(graph.nodes.size());
    for (const auto& out : np.output()) {
      if (out.empty()) {
        n.outputs.push_back(-1);
        continue;
      }
      if (defined.count(out)) throw ModelError(what + ": value '" + out + "' is defined twice (" + n.where() + ")");
      int v = value_id(out);
      graph.values[size_t(v)].producer = node_index;
      n.outputs.push_back(v);
      defined.insert(out);
    }
    graph.nodes.push_back(std::move(n));
  }
  for (const auto& out : g.output()) {
    if (!defined.count(out.name())) throw ModelError(what + ": graph output '" + out.name() + "' is never defined");
    int v = graph.find_value(out.name());
    Value declared;
    read_value_info(out, declared, what + ": graph output");
    // A graph input keeps its own declaration (specialise reads it).
    if (std::find(graph.inputs.begin(), graph.inputs.end(), v) == graph.inputs.end())
      graph.values[size_t(v)].dims = declared.dims;
    graph.outputs.push_back(v);
  }
  if (graph.outputs.empty()) throw ModelError(what + ": the graph has no outputs");
  return graph;
}

}  // namespace

Graph parse_onnx(const void* data, size_t bytes, const std::string& dir, const std::string& what) {
  onnx::ModelProto m;
  if (bytes > size_t(INT32_MAX)) throw ModelError(what + ": larger than 2 GiB (use external data)");
  if (!m.ParseFromArray(data, int(bytes))) throw ModelError(what + ": not a valid ONNX protobuf (truncated or corrupt)");
  return convert(m, dir, what);
}

Graph load_onnx(const std::string& path) {
  std::string bytes = read_file(path);
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_onnx(bytes.data(), bytes.size(), dir, path);
}

Tensor load_tensor_pb(const std::string& path, std::string* name) {
  std::string bytes = read_file(path);
  onnx::TensorProto t;
  if (bytes.size() > size_t(INT32_MAX)) throw ModelError(path + ": larger than 2 GiB");
  if (!t.ParseFromArray(bytes.data(), int(bytes.size()))) throw ModelError(path + ": not a valid TensorProto");
  if (name) *name = t.name();
  auto slash = path.find_last_of('/');
  return tensor_from_proto(t, slash == std::string::npos ? "." : path.substr(0, slash), path);
}

}  // namespace kgen::graph
