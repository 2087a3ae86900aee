// Narrow-float conversion builtins for JIT-compiled kernels.
//
// Clang lowers conversions to __bf16 / _Float16 to compiler-rt calls
// (__truncsfbf2, __truncdfhf2, ...) when the host has no instruction for them
// (float -> bf16 needs AVX512-BF16 or AVX-NE-CONVERT; double -> half always
// calls). This process links libgcc, not compiler-rt, and GCC 12's libgcc has
// none of them, so every JIT dylib gets these definitions instead.
#pragma once
#include <utility>
#include <vector>

namespace kgen::jit {

// (symbol name, address) of every builtin defined here.
const std::vector<std::pair<const char*, void*>>& float_builtins();

}  // namespace kgen::jit
