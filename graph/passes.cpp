#include "graph/passes.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "graph/handler.h"

namespace kgen::graph {

void specialise(Graph& g, const std::map<std::string, Shape>& input_shapes) {
  for (int v : g.inputs) {
    Value& val = g.values[size_t(v)];
    auto it = input_shapes.find(val.name);
    Shape s;
    if (it != input_shapes.end()) {
      s = it->second;
      if (!val.dims.empty() && val.dims.size() != s.size())
        throw std::invalid_argument("input '" + val.name + "': given rank " + std::to_string(s.size()) +
                                    ", the model declares " + std::to_string(val.dims.size()));
      for (size_t a = 0; a < val.dims.size(); ++a)
        if (val.dims[a].known() && val.dims[a].size != s[a])
          throw std::invalid_argument("input '" + val.name + "': given shape " + shape_str(s) + ", the model fixes axis " +
                                      std::to_string(a) + " to " + std::to_string(val.dims[a].size));
    } else {
      for (const Dim& d : val.dims) s.push_back(d.known() ? d.size : 1);
    }
    val.shape = s;
    val.shaped = true;
  }
}

namespace {

void fold(Graph& g, Node& n, const OpHandler& h) {
  std::vector<const Tensor*> in;
  for (int v : n.inputs) in.push_back(v < 0 ? nullptr : &*g.values[size_t(v)].constant);
  std::vector<Tensor> out;
  for (int v : n.outputs) out.emplace_back(v < 0 ? Tensor() : Tensor(g.values[size_t(v)].dtype, g.values[size_t(v)].shape));
  EvalCtx ctx{g, n, in, out};
  h.eval(ctx);
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) {
      Value& v = g.values[size_t(n.outputs[i])];
      if (out[i].shape != v.shape || out[i].dtype != v.dtype)
        throw std::logic_error(n.where() + ": host evaluation gave " + shape_str(out[i].shape) + ", inference " +
                               shape_str(v.shape));
      v.constant = std::move(out[i]);
    }
  n.dead = true;
}

bool all_inputs_constant(const Graph& g, const Node& n) {
  for (int v : n.inputs)
    if (v >= 0 && !g.values[size_t(v)].constant) return false;
  return true;
}

}  // namespace

void infer(Graph& g) {
  register_all_handlers();
  for (Value& v : g.values)
    if (v.constant) {
      v.shape = v.constant->shape;
      v.dtype = v.constant->dtype;
      v.shaped = true;
    }
  for (Node& n : g.nodes) {
    if (n.dead) continue;
    const OpHandler* h = find_handler(n.domain, n.op);
    if (!h) throw UnsupportedError(n.where() + ": op type '" + n.op + "' is not supported");
    for (int v : n.inputs)
      if (v >= 0 && !g.values[size_t(v)].shaped)
        throw std::invalid_argument(n.where() + ": input '" + g.values[size_t(v)].name + "' has no known shape");
    InferCtx ctx{g, n};
    h->infer(ctx);
    for (int v : n.outputs)
      if (v >= 0 && !g.values[size_t(v)].shaped) throw std::logic_error(n.where() + ": inference left an output unset");
    if (h->eval && all_inputs_constant(g, n)) {
      int64_t biggest = 0;
      for (int v : n.outputs)
        if (v >= 0) biggest = std::max(biggest, numel(g.values[size_t(v)].shape));
      if (h->fold_always || biggest <= kFoldLimit) fold(g, n, *h);
    }
  }
}

int remove_dead(Graph& g) {
  std::set<int> needed(g.outputs.begin(), g.outputs.end());
  int removed = 0;
  for (int i = int(g.nodes.size()) - 1; i >= 0; --i) {
    Node& n = g.nodes[size_t(i)];
    if (n.dead) continue;
    bool used = false;
    for (int v : n.outputs)
      if (v >= 0 && needed.count(v) && !g.values[size_t(v)].constant) used = true;
    if (!used) {
      n.dead = true;
      ++removed;
      continue;
    }
    for (int v : n.inputs)
      if (v >= 0) needed.insert(v);
  }
  return removed;
}

}  // namespace kgen::graph
