// The CPU device: kernels are emitted as C++ (codegen/cpp.h), compiled in
// process (jit/jit.h) and run over groups by a persistent thread pool.
#pragma once
#include <memory>

#include "runtimes/runtime.h"

namespace kgen::rt {

std::unique_ptr<Device> create_cpu_device(const DeviceOptions& opt);

}  // namespace kgen::rt
