// The CUDA device: kernels are emitted as CUDA C++ (codegen/cuda.h),
// compiled in process by NVRTC (jit/nvrtc.h) to a CUBIN for the GPU found,
// and launched through the driver API. libcuda is dlopen'ed, never linked,
// so every kgen binary starts on machines without an NVIDIA driver.
#pragma once
#include <memory>
#include <string>

#include "runtimes/runtime.h"

namespace kgen::rt {

// True when libcuda.so.1 loads, cuInit succeeds and a device exists;
// otherwise false with the reason in *why (when given).
bool cuda_device_available(std::string* why = nullptr);
// Throws std::runtime_error("no CUDA device: <reason>") when there is none.
std::unique_ptr<Device> create_cuda_device(const DeviceOptions& opt);

}  // namespace kgen::rt
