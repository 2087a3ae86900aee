#include "graph/lower.h"

#include <algorithm>
#include <stdexcept>

#include "ops/core/executor.h"

namespace kgen::graph {

using ops::fusion::Expr;

int Program::root(int slot) const {
  while (slots[size_t(slot)].alias >= 0) slot = slots[size_t(slot)].alias;
  return slot;
}

size_t Program::root_offset(int slot) const {
  size_t off = 0;
  while (slots[size_t(slot)].alias >= 0) {
    off += slots[size_t(slot)].alias_offset;
    slot = slots[size_t(slot)].alias;
  }
  return off;
}

namespace {

Slot::Kind kind_of(const Graph& g, int v) {
  const Value& val = g.values[size_t(v)];
  if (val.state) return Slot::Kind::State;
  if (std::count(g.outputs.begin(), g.outputs.end(), v)) return Slot::Kind::Output;
  if (std::count(g.inputs.begin(), g.inputs.end(), v)) return Slot::Kind::Input;
  if (val.constant) return Slot::Kind::Constant;
  return Slot::Kind::Activation;
}

size_t value_bytes(const Value& v) { return size_t(numel(v.shape)) * dtype_bytes(v.dtype); }

int slot_of(const Graph& g, Program& prog, std::vector<int>& value_slot, int v) {
  if (value_slot[size_t(v)] >= 0) return value_slot[size_t(v)];
  const Value& val = g.values[size_t(v)];
  Slot s;
  s.kind = kind_of(g, v);
  s.bytes = value_bytes(val);
  s.value = v;
  if (val.constant) s.constant = &*val.constant;
  value_slot[size_t(v)] = prog.add_slot(s);
  return value_slot[size_t(v)];
}

}  // namespace

int LowerCtx::in_slot(int i) const {
  if (!has_in(i)) unsupported("input " + std::to_string(i) + " is required");
  return slot_of(g, prog, value_slot, node.inputs[size_t(i)]);
}

int LowerCtx::out_slot(int i) const {
  if (!has_out(i)) unsupported("output " + std::to_string(i) + " omitted: the kernel writes it");
  if (i == 0 && !epilogue.empty()) return slot_of(g, prog, value_slot, epilogue.back()->outputs.at(0));
  return slot_of(g, prog, value_slot, node.outputs[size_t(i)]);
}

int LowerCtx::temp(size_t bytes) {
  Slot s;
  s.kind = Slot::Kind::Temp;
  s.bytes = bytes;
  return prog.add_slot(s);
}

int LowerCtx::constant_slot(Tensor t) {
  owned.push_back(std::make_unique<Tensor>(std::move(t)));
  Slot s;
  s.kind = Slot::Kind::Constant;
  s.bytes = owned.back()->bytes();
  s.constant = owned.back().get();
  return prog.add_slot(s);
}

void LowerCtx::alias_out(int i, int j, size_t offset) {
  const int src = in_slot(j);
  const int v = node.outputs.at(size_t(i));
  Slot s;
  s.kind = kind_of(g, v);
  if (s.kind == Slot::Kind::Output && prog.slots[size_t(src)].kind != Slot::Kind::Activation) {
    // An output that views an input or a constant: copy instead, the output owns its bytes.
    std::vector<int64_t> shape = {int64_t(value_bytes(out(i)))};
    ops::fusion::Chain c;
    c.name = "copy";
    c.inputs = {{"x", ScalarKind::U8, shape}};
    c.shape = shape;
    c.out_dtype = ScalarKind::U8;
    c.out = ops::fusion::in(0, ScalarKind::U8);
    chain(c, {src}, out_slot(i));
    return;
  }
  s.bytes = value_bytes(out(i));
  s.value = v;
  s.alias = src;
  s.alias_offset = offset;
  value_slot[size_t(v)] = prog.add_slot(s);
}

void LowerCtx::op(const ops::Problem& p, const std::vector<int>& slots) {
  const ops::OpDef& def = ops::op_for(p);
  ops::Variant v = ops::choose_variant(dev, p);
  steps(def.plan(p, v, caps()), slots);
}

void LowerCtx::steps(ops::Plan plan, const std::vector<int>& io) {
  std::vector<int> map = io;
  for (size_t t : plan.temp_bytes) map.push_back(temp(t));
  for (ops::Step& s : plan.steps) {
    Launch l;
    l.step = std::move(s);  // a step holds its kernel's IR: moved, not copied
    for (int& b : l.step.buffers) b = map.at(size_t(b));
    l.label = label;
    prog.launches.push_back(std::move(l));
  }
}

void LowerCtx::chain(const ops::fusion::Chain& c, const std::vector<int>& in_slots, int out_slot_) {
  ops::Plan plan;
  std::vector<int> io(in_slots);
  std::vector<int> local;
  for (size_t i = 0; i < in_slots.size(); ++i) local.push_back(int(i));
  ops::fusion::plan_chain(plan, c, local, int(in_slots.size()), ops::fusion::chain_variant_for(c, caps()));
  io.push_back(out_slot_);
  const size_t kernels = plan.steps.size();
  steps(std::move(plan), io);
  // One kernel reading each full-shape input at the element it writes: such
  // an input of the output's element size may give the output its memory.
  if (kernels != 1) return;
  const size_t out_bytes = size_t(ir::Type(c.out_dtype).bytes());
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].shape == c.shape && size_t(ir::Type(c.inputs[i].dtype).bytes()) == out_bytes) {
      prog.launches.back().reuse_in = in_slots[i];
      prog.launches.back().reuse_out = out_slot_;
      return;
    }
}

void LowerCtx::strided_copy(const ops::StridedCopy& cp, int src, int dst) {
  ops::Plan plan;
  ops::plan_strided_copy(plan, cp, 0, 1, ops::move_variant_for(caps()));
  steps(std::move(plan), {src, dst});
}

void LowerCtx::unsupported(const std::string& what) const {
  throw UnsupportedError(node.where() + ": " + what + " (device " + dev.name() + ")");
}

}  // namespace kgen::graph
