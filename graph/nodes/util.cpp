#include "graph/nodes/util.h"

#include <algorithm>

#include "graph/handler.h"
#include "ops/core/executor.h"

namespace kgen::graph {

Shape broadcast_shapes(const InferCtx& c, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape r(rank, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = r[rank - s.size() + i];
      const int64_t e = s[i];
      if (e == d || e == 1) continue;
      if (d == 1) d = e;
      else {
        std::string all;
        for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + shape_str(t);
        c.invalid("shapes " + all + " do not broadcast");
      }
    }
  return r;
}

int64_t normalize_axis(const InferCtx& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    c.invalid("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> axes_attr_or_input(const InferCtx& c, const char* attr, int input) {
  if (c.node.has(attr)) return c.node.attr_ints(attr);
  if (c.has_in(input)) return c.need_constant(input, attr).ints();
  return std::nullopt;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = int(s.size()) - 2; i >= 0; --i) st[size_t(i)] = st[size_t(i) + 1] * s[size_t(i) + 1];
  return st;
}

std::optional<Shape> operand_view(const ProductView& v, Shape s) {
  if (s.size() > v.out.size()) return std::nullopt;
  s.insert(s.begin(), v.out.size() - s.size(), 1);
  const size_t from[4] = {0, v.m_from, v.n_from, v.out.size()};
  const int64_t size[3] = {v.batch, v.m, v.n};
  Shape view(3, 1);
  for (size_t gi = 0; gi < 3; ++gi) {
    bool ones = true, full = true;
    for (size_t a = from[gi]; a < from[gi + 1]; ++a) ones = ones && s[a] == 1, full = full && s[a] == v.out[a];
    if (!ones && !full) return std::nullopt;
    if (!ones) view[gi] = size[gi];
  }
  return view;
}

bool float_io(ScalarKind k) { return k == ScalarKind::F32 || k == ScalarKind::F16 || k == ScalarKind::BF16; }

bool scalar_literal(const Value& v) { return v.constant && v.constant->numel() == 1 && ir::Type(v.dtype).is_float(); }

namespace {

// The node's value and those of the nodes absorbed after it so far: its
// output's sole readers in turn, up to `consumer`.
std::vector<int> group_values(const Graph& g, const Node& self, const Node& consumer) {
  std::vector<int> vals = {self.outputs[0]};
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node* next = nullptr;
    for (const Node& n : g.nodes)
      if (!n.dead && std::count(n.inputs.begin(), n.inputs.end(), vals.back())) next = &n;
    if (!next || next == &consumer || next->outputs.size() != 1 || next->outputs[0] < 0) break;
    vals.push_back(next->outputs[0]);
  }
  return vals;
}

}  // namespace

bool epilogue_absorbs(const Graph& g, const Node& self, const ProductView& view, const Node& consumer) {
  const OpHandler* h = find_handler(consumer.domain, consumer.op);
  if (!h || !h->chain || consumer.outputs.size() != 1 || consumer.outputs[0] < 0) return false;
  if (g.values[size_t(consumer.outputs[0])].shape != view.out) return false;
  const std::vector<int> group = group_values(g, self, consumer);
  const int self_at = int(&self - g.nodes.data());
  for (int v : consumer.inputs) {
    if (v < 0 || std::count(group.begin(), group.end(), v) || scalar_literal(g.values[size_t(v)])) continue;
    const Value& val = g.values[size_t(v)];
    if (val.producer >= self_at || !operand_view(view, val.shape)) return false;
  }
  return true;
}

ops::fusion::Expr EpilogueBuilder::value(int v) {
  namespace fz = ops::fusion;
  if (known.count(v)) return known[v];
  const Value& val = c.g.values[size_t(v)];
  if (scalar_literal(val)) return fz::lit(val.constant->get(0));
  if (!operand.count(v)) {
    Node probe;  // (the slot of a value outside this node's inputs)
    probe.inputs = {v};
    const int slot = LowerCtx{c.g, probe, c.prog, c.dev, "", c.value_slot, c.owned}.in_slot(0);
    extra(slot, {val.name, val.dtype, *operand_view(view, val.shape.empty() ? Shape{1} : val.shape)});
    operand[v] = int(ep.inputs.size());
  }
  return fz::in(operand[v], val.dtype);
}

ops::fusion::Expr EpilogueBuilder::extra(int slot, const ops::fusion::Input& in) {
  ep.inputs.push_back(in);
  slots.push_back(slot);
  return ops::fusion::in(int(ep.inputs.size()), in.dtype);
}

void EpilogueBuilder::absorb(ops::fusion::Expr acc, ScalarKind t) {
  known[c.node.outputs[0]] = acc;
  ep.out_dtype = t;
  for (const Node* e : c.epilogue) {
    ChainCtx ctx{*e, c.g, [&](int i) { return value(e->inputs.at(size_t(i))); }, c.g.values[size_t(e->outputs[0])].dtype};
    acc = find_handler(e->domain, e->op)->chain(ctx);
    known[e->outputs[0]] = acc;
    ep.out_dtype = ctx.out_dtype;
  }
  ep.expr = acc;
}

void plan_product(LowerCtx& c, const ops::Problem& p, int a, int b, const ops::MatmulEpilogue& ep,
                  const std::vector<int>& ep_slots, int out) {
  std::vector<int> io = {a, b};
  io.insert(io.end(), ep_slots.begin(), ep_slots.end());
  io.push_back(out);
  ops::op_for(p);
  c.steps(ops::plan_matmul(p, ops::choose_variant(c.dev, p), c.caps(), &ep), io);
}

}  // namespace kgen::graph
