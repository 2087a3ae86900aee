// Lowering: the inferred, simplified graph into a Program of ops/ kernel
// launches on a target. Each node's handler adds launches through LowerCtx;
// elementwise nodes whose only consumer is elementwise are inlined into it
// (one kernel per chain); views (Reshape, Squeeze...) become slot aliases.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/handler.h"
#include "graph/program.h"
#include "ops/layout/data_movement.h"
#include "runtimes/runtime.h"

namespace kgen::graph {

struct LowerCtx {
  const Graph& g;
  const Node& node;
  Program& prog;
  rt::Device& dev;
  std::string label;
  std::vector<int>& value_slot;  // graph value -> slot
  std::vector<std::unique_ptr<Tensor>>& owned;  // constants the lowering made
  // Consumers absorbed as an epilogue (OpHandler::absorbs), in order; the
  // group's result is the last one's output 0 (out_slot(0) returns it).
  std::vector<const Node*> epilogue = {};

  const rt::TargetCaps& caps() const { return dev.caps(); }
  const Value& in(int i) const { return g.values[size_t(node.inputs.at(size_t(i)))]; }
  const Value& out(int i) const { return g.values[size_t(node.outputs.at(size_t(i)))]; }
  bool has_in(int i) const { return i < int(node.inputs.size()) && node.inputs[size_t(i)] >= 0; }
  bool has_out(int i) const { return i < int(node.outputs.size()) && node.outputs[size_t(i)] >= 0; }
  const Tensor* constant(int i) const { return has_in(i) ? (in(i).constant ? &*in(i).constant : nullptr) : nullptr; }
  int in_slot(int i) const;
  int out_slot(int i) const;
  int temp(size_t bytes);
  // A constant the lowering made (a packed or converted weight), kept with the program.
  int constant_slot(Tensor t);
  // Output i is a view of input j's bytes at a byte offset.
  void alias_out(int i, int j, size_t offset = 0);
  // An op of the library on these slots (its inputs then outputs): the tuned
  // or heuristic variant, planned and appended.
  void op(const ops::Problem& p, const std::vector<int>& slots);
  void steps(ops::Plan plan, const std::vector<int>& io);
  void chain(const ops::fusion::Chain& c, const std::vector<int>& in_slots, int out_slot);
  // A data move (ops/layout's strided copy) from slot src to slot dst.
  void strided_copy(const ops::StridedCopy& cp, int src, int dst);
  [[noreturn]] void unsupported(const std::string& what) const;
};

struct LowerStats {
  int nodes = 0;   // live nodes lowered
  int groups = 0;  // after fusion
};

// Constants owned by the lowering (converted weights) live in `owned`.
Program lower_graph(const Graph& g, rt::Device& dev, std::vector<std::unique_ptr<Tensor>>& owned, LowerStats* st = nullptr);

}  // namespace kgen::graph
