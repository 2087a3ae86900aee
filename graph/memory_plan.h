// Places the program's slots in one arena: each slot that owns memory
// (inputs, outputs, activations, temporaries; views follow their root) lives
// from the first launch that touches it to the last, and slots whose lives do
// not overlap share bytes; an elementwise kernel's output takes the memory of
// a same-size input that dies there (in place). Greedy by size, largest first (TFLite's
// "greedy by size" offset planner): near the lower bound of the largest
// simultaneous live set on CNNs.
#pragma once
#include <cstddef>
#include <vector>

#include "graph/program.h"

namespace kgen::graph {

struct MemoryPlan {
  std::vector<size_t> offset;  // per slot: byte offset of its root in the arena (views: + their offset)
  std::vector<bool> in_arena;  // constants are not
  size_t arena_bytes = 0;
  size_t unshared_bytes = 0;   // what the slots would take without reuse
  int in_place = 0;            // outputs written over an input (Launch::reuse_in)
};

// guard: bytes kept free after every slot (debugging: a kernel writing past
// its buffer lands there, where PreparedModel's checked replay finds it).
MemoryPlan plan_memory(const Program& p, size_t alignment, size_t guard = 0);

}  // namespace kgen::graph
