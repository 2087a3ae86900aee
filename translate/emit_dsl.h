// Prints a kernel as kgen DSL C++: a function `kgen::ir::Kernel NAME()` that
// records the same IR (structurally equal), to paste into a project that
// builds its kernels with the DSL (dsl/dsl.h).
#pragma once
#include <string>

#include "ir/ir.h"

namespace kgen::translate {

// Throws std::invalid_argument for constructs the printer does not cover
// yet (subgroup, dot, tile and prefetch operations).
std::string emit_dsl(const ir::Kernel& k);

// The parts of emit_dsl: the includes, and the function alone (for files
// that hold several kernels).
std::string dsl_preamble();
std::string emit_dsl_function(const ir::Kernel& k);

}  // namespace kgen::translate
