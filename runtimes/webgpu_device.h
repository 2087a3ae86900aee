// The WebGPU device on wgpu-native (dlopen'ed, see wgpu_api.h): kernels become
// WGSL (codegen/wgsl_*), one compute pipeline per workgroup size (override
// constants), storage buffers for buffer parameters and a uniform buffer of
// 8-byte slots for scalars. Every launch is waited for (wgpuDevicePoll), so
// binding/staging reuse is trivially safe. CI runs it on lavapipe.
#pragma once
#include <memory>
#include <string>

#include "runtimes/runtime.h"

namespace kgen::rt {

// True when wgpu-native loads and gives a device; `why` says what is missing.
bool webgpu_available(std::string* why = nullptr);

// Throws std::runtime_error when no WebGPU device can be created.
std::unique_ptr<Device> create_webgpu_device(const DeviceOptions& opt = {});

}  // namespace kgen::rt
