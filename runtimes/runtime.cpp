#include "runtimes/runtime.h"

#include "ir/passes.h"
#include "ir/verifier.h"

#include <stdexcept>

#include "jit/jit.h"
#include "runtimes/cpu_device.h"
#include "runtimes/cuda_device.h"
#include "runtimes/vulkan_device.h"
#include "runtimes/webgpu_device.h"

namespace kgen::rt {

std::string CompileOptions::key() const {
  return "O" + std::to_string(opt_level) + (assume_independent_items ? " indep" : "") + (keep_ir ? " ir" : "");
}

std::unique_ptr<Device> create_device(std::string_view name, const DeviceOptions& opt) {
  if (name == "cpu") {
    if (!jit::cpp_jit_available()) throw std::runtime_error("no cpu device: kgen was built without the C++ JIT (KGEN_WITH_CPU_JIT=OFF)");
    return create_cpu_device(opt);
  }
  if (name == "cuda") return create_cuda_device(opt);  // throws "no CUDA device: ..." without one
  if (name == "vulkan") return create_vulkan_device(opt);  // throws "vulkan: ..." without a driver
  if (name == "webgpu") return create_webgpu_device(opt);  // throws "webgpu: ..." without wgpu-native
  std::string known;
  for (const std::string& d : available_devices()) known += (known.empty() ? "" : ", ") + d;
  throw std::invalid_argument("unknown device '" + std::string(name) + "' (available: " + known + ")");
}

std::unique_ptr<Buffer> Device::view(Buffer& parent, size_t offset, size_t bytes) {
  const size_t align = view_alignment();
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(name() + ": view of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                                " of a " + std::to_string(parent.bytes()) + "-byte buffer: " + why);
  };
  if (offset > parent.bytes() || bytes > parent.bytes() - offset) fail("the range ends past the buffer");
  if (offset % align != 0) fail("the offset is not a multiple of the device's view alignment, " + std::to_string(align) + " bytes");
  return make_view(parent, offset, bytes);
}

std::shared_ptr<CompiledKernel> Device::load_cached(const ir::Kernel&, uint64_t, const CompileOptions&) { return nullptr; }

std::unique_ptr<Buffer> Device::wrap(void* host, size_t bytes) {
  if (!host && bytes) throw std::invalid_argument(name() + ": wrap of " + std::to_string(bytes) + " bytes at a null pointer");
  std::unique_ptr<Buffer> b = alloc(bytes);
  if (bytes) b->upload(host, bytes);
  return b;
}

std::vector<std::string> available_devices() {
  std::vector<std::string> d;
  if (jit::cpp_jit_available()) d.push_back("cpu");
  if (cuda_device_available()) d.push_back("cuda");
  if (vulkan_available()) d.push_back("vulkan");
  if (webgpu_available()) d.push_back("webgpu");
  return d;
}

ir::Kernel prepare_kernel(const ir::Kernel& k, const TargetCaps& caps, const CompileOptions& opt) {
  ir::verify(k);
  codegen::check_capabilities(k, caps);
  ir::Kernel optimized = k;
  if (opt.opt_level > 0) ir::default_pipeline().run(optimized);
  return optimized;
}

void check_loop_limit_flag(Buffer& flag, const std::string& device, const std::string& kernel, uint32_t limit) {
  uint32_t hit = 0;
  flag.download(&hit, 4, 0);
  if (!hit) return;
  const uint32_t zero = 0;
  flag.upload(&zero, 4, 0);
  throw std::runtime_error(device + ": kernel '" + kernel + "' ran " + std::to_string(limit) +
                           " loop iterations in one invocation; this driver (Mesa llvmpipe) stops a shader's loops there "
                           "without an error, so the launch's results are incomplete. Run it on the cpu device or a "
                           "hardware GPU, or choose a variant with more work-items (less work each)");
}

void validate_launch(const ir::Kernel& k, const LaunchArgs& a) {
  auto fail = [&](const std::string& m) { throw std::invalid_argument("launch of kernel '" + k.name + "': " + m); };
  if (a.buffers.size() != k.buffers.size())
    fail("expects " + std::to_string(k.buffers.size()) + " buffers, got " + std::to_string(a.buffers.size()));
  if (a.scalars.size() != k.scalars.size())
    fail("expects " + std::to_string(k.scalars.size()) + " scalars, got " + std::to_string(a.scalars.size()));
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const ir::BufferParam& p = k.buffers[i];
    if (!a.buffers[i]) fail("buffer '" + p.name + "' is null");
    size_t eb = size_t(p.elem.bytes());
    if (eb && a.buffers[i]->bytes() % eb != 0)
      fail("buffer '" + p.name + "' has " + std::to_string(a.buffers[i]->bytes()) + " bytes, not a multiple of its " +
           p.elem.str() + " elements (" + std::to_string(eb) + " bytes)");
  }
  for (size_t i = 0; i < a.scalars.size(); ++i) {
    int bits = k.scalars[i].type.bytes() * 8;
    if (bits < 64 && (a.scalars[i] >> bits) != 0)
      fail("scalar '" + k.scalars[i].name + "' (" + k.scalars[i].type.str() + ") has bits set above its size; use ir::scalar_slot");
  }
  for (int ax = 0; ax < 3; ++ax) {
    if (a.dims.grid[ax] == 0 || a.dims.workgroup[ax] == 0) fail("grid and workgroup sizes must be >= 1 on every axis");
    // Global ids are u32: an axis past 2^32 - 1 work-items would repeat ids.
    if (uint64_t(a.dims.grid[ax]) * a.dims.workgroup[ax] > UINT32_MAX)
      fail("axis " + std::to_string(ax) + " has " + std::to_string(uint64_t(a.dims.grid[ax]) * a.dims.workgroup[ax]) +
           " work-items; global ids are 32-bit (at most 4294967295)");
    if (k.fixed_workgroup() && a.dims.workgroup[ax] != k.workgroup_size[ax])
      fail("workgroup " + std::to_string(a.dims.workgroup[0]) + "x" + std::to_string(a.dims.workgroup[1]) + "x" +
           std::to_string(a.dims.workgroup[2]) + " differs from the kernel's fixed " + std::to_string(k.workgroup_size[0]) +
           "x" + std::to_string(k.workgroup_size[1]) + "x" + std::to_string(k.workgroup_size[2]));
  }
}

}  // namespace kgen::rt
