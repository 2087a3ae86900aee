// The reference interpreter: runs a kernel on host memory with exact SIMT
// semantics. It is the specification every backend is tested against, so it
// favours checking over speed: out-of-bounds accesses, barrier divergence,
// integer division by zero and runaway loops are errors, not undefined
// behaviour, and shared memory starts out poisoned.
//
// Scalar math: ir/semantics.h. Execution model:
//   * Work-items of a workgroup are linearised x fastest (lin = x + y*wx + z*wx*wy)
//     and run one at a time until they reach a rendezvous (barrier or subgroup
//     op); items interleave ONLY at rendezvous points, which makes atomics
//     trivially atomic and the run deterministic.
//   * barrier: every item of the group that has not finished must wait at the
//     same barrier instruction (by induction, the same dynamic occurrence);
//     an item that finishes, or waits at a different barrier or subgroup op,
//     while others wait is a divergence error.
//   * subgroups: consecutive linear ids, opt.subgroup_size wide (the last may
//     be partial). A subgroup op is a rendezvous of the subgroup's active
//     (not finished) items, like a barrier at subgroup scope. Shuffle or
//     broadcast from a lane that is outside the subgroup, past the group's
//     end or finished is an error; broadcast needs the same lane on all items.
//     Subgroup reductions fold the active items in lane order.
//   * workgroups run one after another, in linear order (x fastest), each with
//     its own shared memory, filled with a poison pattern (quiet NaNs with
//     payload 0xCD.. for floats, 0xCD bytes otherwise) instead of zeros.
//   * for iv = start; iv < end; iv += step (signed or unsigned compare by the
//     type); step <= 0 is an error; the loop also ends when iv + step would
//     overflow the type (the trip-count reading of the C loop; the two agree
//     whenever the C loop has no overflow). Unroll hints are ignored.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::ir {

// Host memory of one buffer parameter: elements of the buffer's element type
// packed (a line of N lanes is N consecutive scalars, f16/bf16 as their
// uint16 bits, bool as one byte 0/1). Its size in elements is
// bytes / elem.bytes(); index i addresses element (line) i.
struct InterpBuffer {
  void* data;
  size_t bytes;
};

struct InterpOptions {
  uint32_t subgroup_size = 32;
  uint64_t max_steps = 0;  // executed instructions, all items together; 0 = unlimited
};

// Runs `k` over the whole grid. Throws ir::Error (loc = the offending
// instruction's location; the message names the kernel, the buffer or shared
// array, the index and the work-item) on: out-of-bounds access, barrier or
// subgroup divergence, integer division by zero, a bad For step, an invalid
// subgroup lane, wrong argument count or size (scalar slots must have zero
// bits above the parameter's size), a workgroup size that differs from a
// fixed-size kernel's, and exceeding opt.max_steps.
void interpret(const Kernel& k, const LaunchDims& dims, std::span<const InterpBuffer> buffers,
               std::span<const uint64_t> scalars, const InterpOptions& opt = {});

}  // namespace kgen::ir
