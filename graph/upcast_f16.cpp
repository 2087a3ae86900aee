// f16 models computed in f32: every f16 value inside the graph becomes f32
// (constants converted once), with a Cast at each f16 graph input and output.
// kgen's CPU kernels (conv, pooling, softmax) compute in f32, as onnxruntime's
// CPU provider does for f16 models; explicit Casts to f16 inside the graph
// keep their rounding (graph/nodes: Cast rounds through f16, stores f32).
#include "graph/passes.h"

namespace kgen::graph {

namespace {

// A Cast node `from` -> new value, inserted at node position `at`.
int insert_cast(Graph& g, int from, ScalarKind to, const std::string& name, size_t at, int out = -1) {
  if (out < 0) {
    Value v;
    v.name = name;
    v.dtype = to;
    v.shape = g.values[size_t(from)].shape;
    v.shaped = true;
    out = g.add_value(std::move(v));
  }
  Node n;
  n.op = "Cast";
  n.name = name;
  n.opset = g.opsets.count("") ? g.opsets.at("") : 13;
  n.inputs = {from};
  n.outputs = {out};
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = to == ScalarKind::F32 ? 1 : 10;
  n.attrs["to"] = a;
  g.nodes.insert(g.nodes.begin() + long(at), std::move(n));
  return out;
}

void renumber_producers(Graph& g) {
  for (Value& v : g.values) v.producer = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) g.values[size_t(o)].producer = int(i);
}

}  // namespace

int upcast_f16(Graph& g) {
  bool any = false;
  for (int i : g.live_nodes())
    for (int v : g.nodes[size_t(i)].outputs)
      if (v >= 0 && g.values[size_t(v)].dtype == ScalarKind::F16) any = true;
  if (!any) return 0;
  int changed = 0;
  std::vector<bool> edge(g.values.size(), false);
  for (int v : g.inputs) edge[size_t(v)] = true;
  for (int v : g.outputs) edge[size_t(v)] = true;
  for (size_t v = 0; v < edge.size(); ++v) {
    Value& val = g.values[v];
    if (edge[v] || val.dtype != ScalarKind::F16) continue;
    val.dtype = ScalarKind::F32;
    if (val.constant) val.constant = val.constant->to_f32();
    ++changed;
  }
  // f16 graph inputs: read through a Cast to f32.
  for (int in : g.inputs) {
    if (g.values[size_t(in)].dtype != ScalarKind::F16) continue;
    const int f32 = insert_cast(g, in, ScalarKind::F32, g.values[size_t(in)].name + ".f32", 0);
    for (size_t i = 1; i < g.nodes.size(); ++i)
      for (int& x : g.nodes[i].inputs)
        if (x == in) x = f32;
    ++changed;
  }
  renumber_producers(g);
  // f16 graph outputs: computed in f32, then a Cast.
  for (int out : g.outputs) {
    Value& o = g.values[size_t(out)];
    if (o.dtype != ScalarKind::F16 || o.producer < 0 || o.constant) continue;
    Value inner;
    inner.name = o.name + ".f32";
    inner.dtype = ScalarKind::F32;
    inner.shape = o.shape;
    inner.shaped = true;
    const int iv = g.add_value(std::move(inner));
    for (int& x : g.nodes[size_t(g.values[size_t(out)].producer)].outputs)
      if (x == out) x = iv;
    insert_cast(g, iv, ScalarKind::F16, g.values[size_t(out)].name + ".cast", g.nodes.size(), out);
    renumber_producers(g);
    ++changed;
  }
  renumber_producers(g);
  return changed;
}

}  // namespace kgen::graph
