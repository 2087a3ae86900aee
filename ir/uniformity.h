// Workgroup uniformity: which values are the same for every work-item of a
// workgroup, and which instructions execute under divergent control flow.
// The verifier uses it to reject barriers in divergent code; the CPU emitter
// uses it to hoist uniform work out of the per-work-item loops.
#pragma once
#include <vector>

#include "ir/ir.h"

namespace kgen::ir {

struct Uniformity {
  std::vector<bool> uniform_value;    // per value id
  // Per instruction (keyed by address, valid while the kernel is unchanged):
  // true when some enclosing branch/loop exit depends on a varying value.
  std::vector<const Instr*> divergent_instrs;

  bool is_uniform(ValueId v) const { return v < uniform_value.size() && uniform_value[v]; }
  bool is_divergent(const Instr* in) const;
};

// Uniform: Const, Param, Buffer, SharedAlloc, GroupId, NumGroups, GroupSize,
// SubgroupSize, pure ops of uniform operands under uniform control, loads with
// uniform pointer and index, For induction variables with uniform bounds under
// uniform control, VarLoad of a variable whose every store is uniform and
// under uniform control. Varying: LocalId, GlobalId, SubgroupLane, atomics,
// subgroup ops, and anything depending on those. Computed to a fixed point.
Uniformity analyze_uniformity(const Kernel& k);

}  // namespace kgen::ir
