// Structural and semantic checks of a kernel. The builder already enforces
// typing and scoping while IR is built; the verifier re-checks everything
// after passes have rewritten the IR, plus the properties that only make sense
// for a whole kernel (workgroup size, barriers and subgroup operations in
// divergent control flow, early returns in kernels that synchronise).
#pragma once
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kgen::ir {

// Throws ir::Error at the offending instruction's location on the first
// problem found (program order). Checks:
//  - value ids unique and < num_values; result present exactly when the op
//    produces a value; block counts per op
//  - every operand defined earlier and visible (defined in an enclosing block)
//  - variables used only through var_load/var_store
//  - types, via ir::infer_type (the builder's rules)
//  - break/continue only inside for/loop; shared arrays only at top level
//  - workgroup size: all three > 0 with product <= 1024, or all zero
//  - barriers and subgroup operations not under divergent control flow
//    (ir/uniformity.h), naming the branch or loop that diverges and the
//    per-work-item value it depends on
//  - no return in a kernel that uses barriers
void verify(const Kernel& k);

// Suspicious but legal constructs, one message per finding ("file:line:
// warning: ..."): unused results of pure operations, variables never read,
// unreachable instructions after break/continue/return, loops with a zero
// step constant.
std::vector<std::string> lint(const Kernel& k);

}  // namespace kgen::ir
