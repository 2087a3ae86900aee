// Compiling many kernels at once: a model's distinct kernels, an op's plan.
#pragma once

#include <memory>
#include <vector>

#include "runtimes/runtime.h"

namespace kgen::rt {

// Compiles every kernel of `kernels` (in order: result i is kernels[i]'s),
// on up to `threads` threads (0: one per hardware thread) where the device
// compiles concurrently, else one after another. A cold compile is tens to
// hundreds of milliseconds of single-threaded clang and LLVM, so a model's
// first run scales with the cores. When compiles fail, the first failing
// kernel's exception (in `kernels` order) is rethrown after all have ended.
std::vector<std::shared_ptr<CompiledKernel>> compile_all(Device& dev, const std::vector<const ir::Kernel*>& kernels,
                                                         const CompileOptions& opt = {}, unsigned threads = 0);

}  // namespace kgen::rt
