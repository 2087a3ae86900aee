// lower_graph: the node walk, elementwise fusion and chain building.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "graph/lower.h"
#include "ops/core/op.h"

namespace kgen::graph {

using ops::fusion::Expr;

namespace {

const OpHandler& handler_of(const Node& n) {
  const OpHandler* h = find_handler(n.domain, n.op);
  if (!h) throw UnsupportedError(n.where() + ": op type '" + n.op + "' is not supported");
  return *h;
}

// The single live node reading value v, or -1 (none, several, or a graph output).
int sole_consumer(const Graph& g, int v) {
  if (g.uses(v) != 1) return -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].dead)
      for (int in : g.nodes[i].inputs)
        if (in == v) return int(i);
  return -1;  // a graph output
}

// Node n is inlined into its consumer's chain: both elementwise, n's single
// output read once, of the consumer's size (no recomputation per broadcast).
bool fuses_into_consumer(const Graph& g, const Node& n) {
  if (!handler_of(n).chain || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const int c = sole_consumer(g, n.outputs[0]);
  if (c < 0) return false;
  const Node& consumer = g.nodes[size_t(c)];
  if (!handler_of(consumer).chain || consumer.outputs.empty() || consumer.outputs[0] < 0) return false;
  return numel(g.values[size_t(n.outputs[0])].shape) == numel(g.values[size_t(consumer.outputs[0])].shape);
}

struct ChainBuilder {
  const Graph& g;
  const std::vector<bool>& inlined;
  ops::fusion::Chain chain;
  std::vector<int> input_values;
  std::string label;

  Expr value(int v) {
    const Value& val = g.values[size_t(v)];
    if (val.constant && val.constant->numel() == 1 && ir::Type(val.dtype).is_float())
      return ops::fusion::lit(val.constant->get(0));
    if (val.producer >= 0 && inlined[size_t(val.producer)]) return node(g.nodes[size_t(val.producer)]);
    for (size_t i = 0; i < input_values.size(); ++i)
      if (input_values[i] == v) return ops::fusion::in(int(i), val.dtype);
    input_values.push_back(v);
    chain.inputs.push_back({val.name, val.dtype, val.shape});
    return ops::fusion::in(int(input_values.size()) - 1, val.dtype);
  }
  Expr node(const Node& n) {
    ChainCtx ctx{n, g, [&](int i) { return value(n.inputs.at(size_t(i))); },
                 g.values[size_t(n.outputs[0])].dtype};
    Expr e = handler_of(n).chain(ctx);
    label = label.empty() ? n.op : n.op + " + " + label;
    return e;
  }
};

// Every present value of the list that kernels read has at least one
// element (an empty constant, such as an empty `axes`, is read on the host).
bool has_elements(const Graph& g, const std::vector<int>& values) {
  for (int v : values)
    if (v >= 0 && !g.values[size_t(v)].constant && numel(g.values[size_t(v)].shape) == 0) return false;
  return true;
}

bool all_empty(const Graph& g, const std::vector<int>& values) {
  for (int v : values)
    if (v >= 0 && numel(g.values[size_t(v)].shape) != 0) return false;
  return true;
}

// Can input value v of a Concat be a view into the Concat's output? A kernel
// must write it (not a view, an input or a constant), and nothing else may
// claim its memory first.
bool writable_in_place(const Graph& g, const std::vector<int>& value_slot, const Node& concat, int v) {
  const Value& val = g.values[size_t(v)];
  if (val.constant || val.producer < 0 || value_slot[size_t(v)] >= 0) return false;
  if (std::count(g.outputs.begin(), g.outputs.end(), v) || std::count(concat.inputs.begin(), concat.inputs.end(), v) != 1)
    return false;
  const Node& p = g.nodes[size_t(val.producer)];
  return !p.dead && !handler_of(p).view && p.op != "Dropout";
}

// Concats whose inputs are consecutive byte ranges of the output (every axis
// before the concat axis has size 1) and whose producers can write there:
// each input becomes a view of the output at its offset, and the Concat
// launches nothing. Outer concats first, so nested ones chain their views.
template <class SlotOf>
std::vector<bool> concat_in_place(const Graph& g, rt::Device& dev, Program& prog, std::vector<int>& value_slot, SlotOf slot_of_value) {
  std::vector<bool> done(g.nodes.size(), false);
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = g.nodes[k];
    if (n.dead || n.op != "Concat" || !n.domain.empty() || n.outputs.empty() || n.outputs[0] < 0) continue;
    const Shape& out = g.values[size_t(n.outputs[0])].shape;
    int64_t axis = n.attr_int("axis", n.opset < 4 ? 1 : 0);
    if (axis < 0) axis += int64_t(out.size());
    bool ok = numel(out) > 0;
    for (int64_t a = 0; a < axis && ok; ++a) ok = out[size_t(a)] == 1;
    size_t offset = 0;
    std::vector<size_t> offsets;
    for (int v : n.inputs) {
      if (!ok) break;
      ok = v >= 0 && writable_in_place(g, value_slot, n, v) && offset % dev.view_alignment() == 0;
      offsets.push_back(offset);
      offset += size_t(numel(g.values[size_t(v)].shape)) * dtype_bytes(g.values[size_t(v)].dtype);
    }
    if (!ok) continue;
    const int dst = slot_of_value(n.outputs[0]);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value& val = g.values[size_t(n.inputs[i])];
      Slot s;
      s.kind = Slot::Kind::Activation;
      s.bytes = size_t(numel(val.shape)) * dtype_bytes(val.dtype);
      s.value = n.inputs[i];
      s.alias = dst;
      s.alias_offset = offsets[i];
      value_slot[size_t(n.inputs[i])] = prog.add_slot(s);
    }
    done[k] = true;
  }
  return done;
}

}  // namespace

Program lower_graph(const Graph& g, rt::Device& dev, std::vector<std::unique_ptr<Tensor>>& owned, LowerStats* st) {
  ops::register_all_ops();
  Program prog;
  std::vector<int> value_slot(g.values.size(), -1);
  std::vector<bool> inlined(g.nodes.size(), false);
  std::vector<std::vector<const Node*>> epilogue(g.nodes.size());
  std::vector<bool> absorbed(g.nodes.size(), false);
  // Epilogues first: a node absorbs its sole consumer (repeatedly: Conv + Add + Relu).
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.dead || absorbed[i] || !handler_of(n).absorbs) continue;
    const Node* last = &n;
    for (;;) {
      if (last->outputs.empty() || last->outputs[0] < 0) break;
      const int c = sole_consumer(g, last->outputs[0]);
      if (c < 0 || absorbed[size_t(c)] || !handler_of(n).absorbs(g, n, g.nodes[size_t(c)])) break;
      epilogue[i].push_back(&g.nodes[size_t(c)]);
      absorbed[size_t(c)] = true;  // lowered with n
      last = &g.nodes[size_t(c)];
    }
  }
  // Then elementwise chains among the rest.
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].dead && !absorbed[i] && epilogue[i].empty()) {
      inlined[i] = fuses_into_consumer(g, g.nodes[i]);
      if (inlined[i]) {
        const int c = sole_consumer(g, g.nodes[i].outputs[0]);
        inlined[i] = !absorbed[size_t(c)] && epilogue[size_t(c)].empty();
      }
    }
  // The slot of a value outside any node's context (chain inputs, graph inputs and outputs).
  auto slot_of_value = [&](int v) {
    Node probe;
    probe.inputs = {v};
    LowerCtx pc{g, probe, prog, dev, "", value_slot, owned};
    return pc.in_slot(0);
  };
  std::vector<bool> in_place = concat_in_place(g, dev, prog, value_slot, slot_of_value);
  LowerStats stats;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.dead) continue;
    ++stats.nodes;
    if (inlined[i] || absorbed[i]) continue;
    if (in_place[i]) continue;  // its inputs were written in place
    ++stats.groups;
    const OpHandler& h = handler_of(n);
    if (all_empty(g, n.outputs)) continue;  // nothing to write
    if (!has_elements(g, n.inputs) && n.op != "Concat")
      throw UnsupportedError(n.where() + ": an empty input tensor with a non-empty output");
    LowerCtx ctx{g, n, prog, dev, n.op + " " + n.name, value_slot, owned, epilogue[i]};
    for (const Node* e : epilogue[i]) ctx.label += " + " + e->op;
    if (h.view) {
      ctx.alias_out(0, 0);
    } else if (h.chain) {
      ChainBuilder b{g, inlined, {}, {}, {}};
      b.chain.out = b.node(n);
      const Value& out = g.values[size_t(n.outputs[0])];
      b.chain.name = "ew";
      b.chain.shape = out.shape.empty() ? Shape{1} : out.shape;
      b.chain.out_dtype = out.dtype;
      for (auto& in : b.chain.inputs)
        if (in.shape.empty()) in.shape = {1};
      ctx.label = b.label + " " + n.name;
      std::vector<int> slots;
      for (int v : b.input_values) slots.push_back(slot_of_value(v));
      ctx.chain(b.chain, slots, ctx.out_slot(0));
    } else {
      h.lower(ctx);
    }
  }
  for (int v : g.inputs) prog.input_slots.push_back(slot_of_value(v));
  for (int v : g.outputs) prog.output_slots.push_back(slot_of_value(v));
  prog.groups = stats.groups;
  if (st) *st = stats;
  return prog;
}

}  // namespace kgen::graph
