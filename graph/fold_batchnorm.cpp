// Conv -> BatchNormalization (inference) becomes one Conv: with
// s = scale / sqrt(var + eps), W'[o] = W[o]·s[o] and b'[o] = (b[o] - mean[o])·s[o] + B[o].
#include <cmath>

#include "graph/passes.h"

namespace kgen::graph {

namespace {

bool all_constant(const Graph& g, const Node& n, int from, int to) {
  for (int i = from; i < to; ++i)
    if (i >= int(n.inputs.size()) || n.inputs[size_t(i)] < 0 || !g.values[size_t(n.inputs[size_t(i)])].constant)
      return false;
  return true;
}

const Tensor& const_in(const Graph& g, const Node& n, int i) { return *g.values[size_t(n.inputs[size_t(i)])].constant; }

}  // namespace

int fold_batchnorm(Graph& g) {
  int folded = 0;
  for (Node& bn : g.nodes) {
    if (bn.dead || bn.op != "BatchNormalization" || !bn.domain.empty() || bn.attr_int("training_mode", 0)) continue;
    if (bn.n_inputs() != 5 || !all_constant(g, bn, 1, 5) || bn.outputs.empty() || bn.outputs[0] < 0) continue;
    const int x = bn.inputs[0];
    const int p = g.values[size_t(x)].producer;
    if (p < 0 || g.uses(x) != 1) continue;
    Node& conv = g.nodes[size_t(p)];
    if (conv.dead || conv.op != "Conv" || !all_constant(g, conv, 1, 2) || (conv.n_inputs() == 3 && !all_constant(g, conv, 2, 3)))
      continue;
    const Tensor& w = const_in(g, conv, 1);
    if (w.dtype != ScalarKind::F32 && w.dtype != ScalarKind::F64) continue;
    const int64_t oc = w.shape[0], per = w.numel() / std::max<int64_t>(oc, 1);
    const double eps = bn.attr_float("epsilon", 1e-5);
    Tensor nw(w.dtype, w.shape), nb(w.dtype, {oc});
    for (int64_t o = 0; o < oc; ++o) {
      const double s = const_in(g, bn, 1).get(o) / std::sqrt(const_in(g, bn, 4).get(o) + eps);
      const double b0 = conv.n_inputs() == 3 ? const_in(g, conv, 2).get(o) : 0.0;
      for (int64_t i = 0; i < per; ++i) nw.set(o * per + i, w.get(o * per + i) * s);
      nb.set(o, (b0 - const_in(g, bn, 3).get(o)) * s + const_in(g, bn, 2).get(o));
    }
    Value wv, bv;
    wv.name = conv.name + ".folded_weight";
    bv.name = conv.name + ".folded_bias";
    wv.dtype = bv.dtype = w.dtype;
    wv.shape = nw.shape;
    bv.shape = nb.shape;
    wv.shaped = bv.shaped = true;
    wv.constant = std::move(nw);
    bv.constant = std::move(nb);
    const int wi = g.add_value(std::move(wv)), bi = g.add_value(std::move(bv));
    Node& c = g.nodes[size_t(p)];  // add_value may not move nodes, but re-fetch for clarity
    c.inputs.resize(3);
    c.inputs[1] = wi;
    c.inputs[2] = bi;
    c.outputs[0] = bn.outputs[0];
    g.values[size_t(bn.outputs[0])].producer = p;
    bn.dead = true;
    ++folded;
  }
  return folded;
}

}  // namespace kgen::graph
