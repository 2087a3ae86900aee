// A lowered model: buffer slots (one per tensor the kernels touch, plus
// temporaries) and the launches in order. The memory plan (graph/memory_plan.h)
// places the slots in one arena; the prepared model (graph/prepared_model.h) compiles the
// kernels once and replays the launches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "ops/core/op.h"

namespace kgen::graph {

struct Slot {
  enum class Kind { Input, Output, Constant, Activation, Temp, State };
  Kind kind = Kind::Activation;
  size_t bytes = 0;
  int value = -1;           // graph value, -1 for temporaries
  int alias = -1;           // a view of this slot ...
  size_t alias_offset = 0;  // ... at this byte offset
  const Tensor* constant = nullptr;  // Kind::Constant: the data (owned by the graph)
};

struct Launch {
  ops::Step step;          // buffers index Program::slots
  std::string label;       // "Conv conv1 + Relu" (profile, trace)
  // An input slot whose memory may hold the output slot: the kernel reads
  // element i of it (same shape and element size) before writing element i
  // of the output, and nothing else of either. -1: none.
  int reuse_in = -1, reuse_out = -1;
};

struct Program {
  std::vector<Slot> slots;
  std::vector<Launch> launches;
  std::vector<int> input_slots, output_slots;  // graph inputs / outputs in order
  int groups = 0;                               // fused groups lowered (nodes after fusion)

  int add_slot(Slot s) {
    slots.push_back(s);
    return int(slots.size()) - 1;
  }
  // The slot whose memory a slot uses (follows views).
  int root(int slot) const;
  size_t root_offset(int slot) const;
};

}  // namespace kgen::graph
