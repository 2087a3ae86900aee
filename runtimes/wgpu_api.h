// wgpu-native entry points resolved from the dlopen'ed library (never linked),
// plus the one instance/adapter/device every user in the process shares.
// Built only when the `wgpu` wheel's webgpu.h was found at configure time.
#pragma once
#include <webgpu.h>

#include <cstdint>
#include <string>

namespace kgen::rt::wgpu {

#define KGEN_WGPU_FNS(X)                                                                                            \
  X(CreateInstance) X(InstanceRequestAdapter) X(InstanceProcessEvents) X(AdapterRequestDevice) X(AdapterGetInfo)    \
  X(AdapterInfoFreeMembers) X(DevicePushErrorScope) X(DevicePopErrorScope) X(DeviceCreateShaderModule)              \
  X(DeviceCreateComputePipeline) X(ShaderModuleRelease) X(ComputePipelineRelease) X(DeviceGetQueue)                 \
  X(DeviceCreateBuffer) X(BufferRelease) X(QueueWriteBuffer) X(QueueSubmit) X(DeviceCreateCommandEncoder)          \
  X(CommandEncoderBeginComputePass) X(CommandEncoderCopyBufferToBuffer) X(CommandEncoderFinish)                     \
  X(CommandEncoderRelease) X(CommandBufferRelease) X(ComputePassEncoderSetPipeline) X(ComputePassEncoderSetBindGroup) \
  X(ComputePassEncoderDispatchWorkgroups) X(ComputePassEncoderEnd) X(ComputePassEncoderRelease)                    \
  X(BufferMapAsync) X(BufferGetConstMappedRange) X(BufferUnmap) X(DeviceCreateBindGroupLayout)                      \
  X(DeviceCreatePipelineLayout) X(DeviceCreateBindGroup) X(BindGroupRelease) X(BindGroupLayoutRelease)             \
  X(PipelineLayoutRelease) X(AdapterHasFeature) X(DeviceGetLimits)

struct Api {
#define KGEN_WGPU_MEMBER(n) WGPUProc##n n = nullptr;
  KGEN_WGPU_FNS(KGEN_WGPU_MEMBER)
#undef KGEN_WGPU_MEMBER
  // wgpu.h extension (no Proc typedef there): blocks until queued work is done when wait is true.
  WGPUBool (*DevicePoll)(WGPUDevice, WGPUBool wait, const uint64_t* submission) = nullptr;
  WGPUInstance instance = nullptr;
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  std::string adapter_name;
  bool shader_f16 = false;  // the device was created with the shader-f16 feature (`enable f16`)
  std::string error;  // why device is null
};

// Loaded once per process; check device before use.
Api& api();

inline WGPUStringView sv(const std::string& s) { return WGPUStringView{s.data(), s.size()}; }
std::string str(WGPUStringView s);

}  // namespace kgen::rt::wgpu
