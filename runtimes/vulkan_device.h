// The Vulkan device: kernels become GLSL compute shaders (codegen/glsl_*),
// SPIR-V in process (jit/spirv.h), one compute pipeline per workgroup size.
// Buffers live in host-visible memory (simple and right for lavapipe and
// integrated GPUs; a staging path for discrete GPUs is a later step).
// Launches are submitted with a fence and waited for, which keeps descriptor
// and command-buffer reuse trivially safe; the GPU time of the last launch
// comes from timestamp queries.
#pragma once
#include <memory>
#include <string>

#include "runtimes/runtime.h"

namespace kgen::rt {

// True when libvulkan loads, an ICD offers a physical device with a compute
// queue and kgen was built with shaderc. `why` says what is missing otherwise.
bool vulkan_available(std::string* why = nullptr);

// Throws std::runtime_error when no Vulkan device can be created.
std::unique_ptr<Device> create_vulkan_device(const DeviceOptions& opt = {});

// GPU time of the device's last launch in ms (timestamp queries), or a
// negative value when the queue has no timestamps or `dev` is not Vulkan.
double vulkan_last_kernel_ms(const Device& dev);

}  // namespace kgen::rt
