// The backend-neutral runtime interface: a Device allocates Buffers, compiles
// IR kernels into CompiledKernels and launches them. The CPU device
// implements it now; Vulkan, WebGPU and CUDA devices implement the same
// interface, so tools, tests and benchmarks are written once.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/target.h"
#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::rt {

using TargetCaps = codegen::TargetCaps;

class Buffer {
 public:
  virtual ~Buffer() = default;
  size_t bytes() const { return bytes_; }
  virtual void upload(const void* src, size_t bytes, size_t offset = 0) = 0;
  virtual void download(void* dst, size_t bytes, size_t offset = 0) const = 0;
  // Host-visible memory, when the device has it (CPU: always); a view's
  // pointer is its first byte.
  virtual void* host_ptr() { return nullptr; }

 protected:
  explicit Buffer(size_t bytes) : bytes_(bytes) {}
  size_t bytes_;
};

struct CompileOptions {
  int opt_level = 2;  // -O2: as fast as -O3 on our kernels, cheaper to compile (kgen bench compile/cold)
  // See codegen::CppOptions::assume_independent_items (CPU only).
  bool assume_independent_items = false;
  bool keep_ir = false;  // keep optimised IR / assembly for debugging (also KGEN_DEBUG=1); bypasses the cache
  // The options' part of the compile-cache key (runtimes/kernel_cache.h).
  std::string key() const;
};

class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  const ir::Kernel& kernel() const { return kernel_; }
  double compile_ms() const { return compile_ms_; }  // on a cache hit: the lookup + load time
  bool cache_hit() const { return cache_hit_; }       // memory or disk hit
  const std::string& source() const { return source_; }  // generated target source
  const std::string& entry() const { return entry_; }
  virtual std::string debug_ir() const { return {}; }   // optimised IR when kept
  virtual std::string debug_asm() const { return {}; }

 protected:
  ir::Kernel kernel_;
  double compile_ms_ = 0;
  bool cache_hit_ = false;
  std::string source_, entry_;
};

struct LaunchArgs {
  ir::LaunchDims dims;
  std::vector<Buffer*> buffers;   // one per buffer parameter, in order
  std::vector<uint64_t> scalars;  // one 8-byte slot per scalar parameter (ir::scalar_slot)
};

class KernelCache;  // runtimes/kernel_cache.h

struct DeviceOptions {
  unsigned threads = 0;  // CPU: worker threads including the caller; 0 = all cores
  // Compile cache (memory + disk); null: KernelCache::global(), configured
  // from KGEN_CACHE / KGEN_CACHE_DIR. Tests pass their own to isolate state.
  KernelCache* cache = nullptr;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const { return name(); }
  virtual const TargetCaps& caps() const = 0;
  virtual std::unique_ptr<Buffer> alloc(size_t bytes) = 0;
  // A Buffer aliasing bytes [offset, offset + bytes) of `parent` (a buffer of
  // this device, or a view of one: views compose). A kernel launched with it
  // sees exactly that range, its element 0 at the parent's byte `offset`, and
  // upload/download/host_ptr act on that range. The view owns nothing:
  // `parent` must outlive it. Throws std::invalid_argument when the range
  // leaves `parent` or `offset` is not a multiple of view_alignment().
  std::unique_ptr<Buffer> view(Buffer& parent, size_t offset, size_t bytes);
  // The offset alignment views need: the device's storage-buffer binding
  // alignment on GPUs, the alignment of an allocation on the CPU.
  virtual size_t view_alignment() const = 0;
  // Caller memory as a Buffer. When wraps_without_copy(), kernels read and
  // write `host` itself, which must outlive the buffer (a launch refuses it
  // when it is not aligned as the kernel's element types need). Otherwise (GPUs,
  // which cannot alias host memory portably) the buffer is a device copy of
  // `host` taken now: a snapshot, not an alias; kernel writes stay in the
  // buffer (download them) and later changes to `host` are not seen.
  virtual std::unique_ptr<Buffer> wrap(void* host, size_t bytes);
  virtual bool wraps_without_copy() const { return false; }
  // Verifies and checks capabilities; throws ir::Error or jit::CompileError.
  virtual std::shared_ptr<CompiledKernel> compile(const ir::Kernel& k, const CompileOptions& opt = {}) = 0;
  // The kernel compile() built in an earlier process from a kernel whose
  // ir::structural_hash was `raw_hash`, taken from the compile cache without
  // the kernel's body: `signature` gives its name, parameters and workgroup
  // size (what a launch reads). Null when the cache does not hold it or the
  // device cannot load kernels this way (the default).
  virtual std::shared_ptr<CompiledKernel> load_cached(const ir::Kernel& signature, uint64_t raw_hash,
                                                      const CompileOptions& opt = {});
  // True when compile() may run on several threads at once (see compile_all).
  virtual bool concurrent_compile() const { return false; }
  // The compile cache this device uses, or null when it has none.
  virtual KernelCache* kernel_cache() { return nullptr; }
  // Validates argument counts, buffer sizes and the workgroup against a fixed
  // size (throws std::invalid_argument naming the kernel and argument).
  virtual void launch(const CompiledKernel& k, const LaunchArgs& args) = 0;
  virtual void synchronize() = 0;

 protected:
  // view() once the range and alignment are checked: throws
  // std::invalid_argument when `parent` belongs to another device.
  virtual std::unique_ptr<Buffer> make_view(Buffer& parent, size_t offset, size_t bytes) = 0;
};

// "cpu" (more later). Throws std::invalid_argument for unknown names.
std::unique_ptr<Device> create_device(std::string_view name, const DeviceOptions& opt = {});
std::vector<std::string> available_devices();

// Shared launch validation for every device (clear messages, no allocation
// on success). Sizes are the buffers' own, so a view is checked by its range.
void validate_launch(const ir::Kernel& k, const LaunchArgs& args);

// After a launch on a device with a loop limit (TargetCaps::loop_iteration_limit):
// `flag` is the u32 the kernel sets when a loop reached it. Clears the flag
// and throws, naming the device and the kernel, when it was set.
void check_loop_limit_flag(Buffer& flag, const std::string& device, const std::string& kernel, uint32_t limit);

// The device-independent front half of Device::compile: verify the kernel,
// check it against the target's capabilities, run the IR pipeline (fold,
// simplify, CSE, DCE; skipped at opt_level 0). Every device calls it, so all
// targets emit from the same optimised IR.
ir::Kernel prepare_kernel(const ir::Kernel& k, const TargetCaps& caps, const CompileOptions& opt);

}  // namespace kgen::rt
