#include "runtimes/cuda_device.h"

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "codegen/cuda.h"
#include "ir/debug.h"
#include "ir/hash.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "jit/nvrtc.h"
#include "runtimes/cuda_driver.h"
#include "runtimes/gpu_artifacts.h"

namespace kgen::rt {

namespace {

// Every driver call needs the device's context current on the calling thread.
class CudaContext {
 public:
  CudaContext(const cu::Driver& d, cu::Device dev) : d_(d), dev_(dev) {
    d_.check(d_.DevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  }
  ~CudaContext() { d_.DevicePrimaryCtxRelease(dev_); }
  void bind() const { d_.check(d_.CtxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  const cu::Driver& d() const { return d_; }

 private:
  const cu::Driver& d_;
  cu::Device dev_;
  cu::Context ctx_ = nullptr;
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<const CudaContext> ctx, size_t bytes) : Buffer(bytes), ctx_(std::move(ctx)) {
    ctx_->bind();
    ctx_->d().check(ctx_->d().MemAlloc(&ptr_, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    owned_ = true;
  }
  // A view: bytes [offset, offset + bytes) of `parent`, owning nothing.
  CudaBuffer(const CudaBuffer& parent, size_t offset, size_t bytes)
      : Buffer(bytes), ctx_(parent.ctx_), ptr_(parent.ptr_ + offset) {}
  ~CudaBuffer() override {
    if (!owned_) return;
    ctx_->bind();
    ctx_->d().MemFree(ptr_);
  }
  void upload(const void* src, size_t bytes, size_t offset) override {
    check(bytes, offset, "upload");
    ctx_->bind();
    ctx_->d().check(ctx_->d().MemcpyHtoD(ptr_ + offset, src, bytes), "cuMemcpyHtoD");
  }
  void download(void* dst, size_t bytes, size_t offset) const override {
    check(bytes, offset, "download");
    ctx_->bind();
    ctx_->d().check(ctx_->d().MemcpyDtoH(dst, ptr_ + offset, bytes), "cuMemcpyDtoH");
  }
  cu::DevicePtr ptr() const { return ptr_; }  // this buffer's byte 0
  const CudaContext* context() const { return ctx_.get(); }

 private:
  void check(size_t bytes, size_t offset, const char* what) const {
    if (offset > bytes_ || bytes > bytes_ - offset)
      throw std::out_of_range(std::string("cuda buffer ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + " exceeds its " + std::to_string(bytes_) + " bytes");
  }
  std::shared_ptr<const CudaContext> ctx_;
  cu::DevicePtr ptr_ = 0;
  bool owned_ = false;  // false for a view
};

// A loaded module, shared by the compile cache and the kernels using it.
struct CudaCode {
  std::shared_ptr<const CudaContext> ctx;
  cu::Module module = nullptr;
  cu::Function fn = nullptr;
  std::string ptx;
  ~CudaCode() {
    if (module) {
      ctx->bind();
      ctx->d().ModuleUnload(module);
    }
  }
};

class CudaKernel final : public CompiledKernel {
 public:
  CudaKernel(const ir::Kernel& k, std::string source, std::string entry, std::shared_ptr<const CudaCode> code, bool hit,
             double ms)
      : code_(std::move(code)) {
    kernel_ = k;
    source_ = std::move(source);
    entry_ = std::move(entry);
    cache_hit_ = hit;
    compile_ms_ = ms;
  }
  cu::Function fn() const { return code_->fn; }
  std::string debug_asm() const override { return code_->ptx; }

 private:
  std::shared_ptr<const CudaCode> code_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(const cu::Driver& d, cu::Device dev, KernelCache& cache) : dev_(dev), cache_(cache) {
    ctx_ = std::make_shared<CudaContext>(d, dev);
    char name[256] = {};
    d.check(d.DeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
    auto attr = [&](int a) {
      int v = 0;
      d.check(d.DeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
      return v;
    };
    cc_major_ = attr(cu::kCcMajor);
    cc_minor_ = attr(cu::kCcMinor);
    caps_ = codegen::cuda_caps();
    caps_.name = "cuda:sm_" + std::to_string(cc_major_) + std::to_string(cc_minor_);
    caps_.subgroup_size = uint32_t(attr(cu::kWarpSize));
    caps_.max_workgroup_threads = uint32_t(attr(cu::kMaxThreadsPerBlock));
    caps_.max_workgroup_size = {uint32_t(attr(cu::kMaxBlockDimX)), uint32_t(attr(cu::kMaxBlockDimY)),
                                uint32_t(attr(cu::kMaxBlockDimZ))};
    caps_.max_shared_bytes = std::min<uint32_t>(caps_.max_shared_bytes, uint32_t(attr(cu::kMaxSharedPerBlock)));
    int drv = 0;
    d.DriverGetVersion(&drv);
    desc_ = "cuda: " + std::string(name) + ", sm_" + std::to_string(cc_major_) + std::to_string(cc_minor_) + ", " +
            std::to_string(attr(cu::kMultiprocessors)) + " SMs, driver " + std::to_string(drv / 1000) + "." +
            std::to_string(drv % 1000 / 10);
  }

  std::string name() const override { return "cuda"; }
  std::string description() const override { return desc_; }
  const TargetCaps& caps() const override { return caps_; }
  std::unique_ptr<Buffer> alloc(size_t bytes) override { return std::make_unique<CudaBuffer>(ctx_, bytes); }
  size_t view_alignment() const override { return 256; }  // cuMemAlloc's alignment

  std::shared_ptr<CompiledKernel> compile(const ir::Kernel& k, const CompileOptions& opt) override {
    auto t0 = std::chrono::steady_clock::now();
    ir::Kernel optimized = prepare_kernel(k, caps_, opt);
    std::string entry = codegen::cuda_entry_symbol(k);
    auto elapsed = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
    if (!jit::nvrtc_available())
      throw std::runtime_error("cuda: kgen was built without NVRTC, so it cannot compile kernels for the GPU");
    // A CUBIN for exactly this GPU: no PTX JIT in the driver at load time.
    jit::NvrtcOptions no;
    no.arch = "sm_" + std::to_string(cc_major_) + std::to_string(cc_minor_);
    // The entry symbol is part of the source (named after the kernel), so it is in the key too.
    const CacheKey key = make_cache_key({ir::structural_hash(optimized), "cuda-nvrtc-" + no.arch + " entry=" + entry,
                                         caps_key(caps_), opt.key(), "nvrtc " + jit::nvrtc_version()});
    double nvrtc_ms = 0;
    GpuArtifactLookup r = find_or_build_artifact(
        cache_, key, optimized,
        [&] {
          GpuArtifact a;
          a.source = codegen::emit_cuda(optimized);
          if (ir::debug_level() >= 2) ir::debug_log(2, "source", "generated CUDA for '" + k.name + "':\n" + a.source);
          jit::NvrtcResult nr = jit::nvrtc_compile(a.source, no);
          nvrtc_ms = nr.ms;
          const bool cubin = !nr.cubin.empty();
          a.artifact = cubin ? std::move(nr.cubin) : std::move(nr.ptx);
          a.meta = "kernel=" + k.name + "\nentry=" + entry + "\nformat=" + (cubin ? "cubin" : "ptx") + "\n";
          return a;
        },
        [](const CacheEntry& e) { return e.artifact.empty() ? "empty CUDA module" : ""; });
    std::lock_guard lock(mu_);
    std::shared_ptr<const CudaCode>& code = modules_[r.art->artifact];
    if (!code) {
      auto c = std::make_shared<CudaCode>();
      c->ctx = ctx_;
      if (r.art->meta.find("format=ptx") != std::string::npos) c->ptx = r.art->artifact;
      ctx_->bind();
      const cu::Driver& d = ctx_->d();
      // A PTX image must be NUL-terminated; std::string's data() is.
      d.check(d.ModuleLoadData(&c->module, r.art->artifact.c_str()), "cuModuleLoadData");
      d.check(d.ModuleGetFunction(&c->fn, c->module, entry.c_str()), "cuModuleGetFunction");
      code = c;
    }
    double ms = elapsed();
    ir::debug_log(1, "compile", "'" + k.name + "' for " + caps_.name + " in " + std::to_string(ms) + " ms (nvrtc " +
                                    std::to_string(nvrtc_ms) + " ms); " + (r.hit ? "cache hit " : "cache miss ") + key.hex());
    return std::make_shared<CudaKernel>(k, r.art->source, std::move(entry), code, r.hit, ms);
  }

  void launch(const CompiledKernel& ck, const LaunchArgs& a) override {
    const auto* k = dynamic_cast<const CudaKernel*>(&ck);
    if (!k) throw std::invalid_argument("cuda launch: kernel '" + ck.kernel().name + "' was compiled for another device");
    validate_launch(ck.kernel(), a);
    // kernelParams[i] points at the i-th parameter's value: the device
    // pointer for buffers, the 8-byte slot for scalars (value in its low bytes).
    std::vector<cu::DevicePtr> ptrs(a.buffers.size());
    std::vector<uint64_t> slots(a.scalars.begin(), a.scalars.end());
    std::vector<void*> params;
    params.reserve(ptrs.size() + slots.size());
    for (size_t i = 0; i < a.buffers.size(); ++i) {
      const auto* b = dynamic_cast<const CudaBuffer*>(a.buffers[i]);
      if (!b) throw std::invalid_argument("cuda launch: buffer " + std::to_string(i) + " belongs to another device");
      ptrs[i] = b->ptr();
      params.push_back(&ptrs[i]);
    }
    for (uint64_t& s : slots) params.push_back(&s);
    ctx_->bind();
    const auto& g = a.dims.grid;
    const auto& w = a.dims.workgroup;
    ctx_->d().check(ctx_->d().LaunchKernel(k->fn(), g[0], g[1], g[2], w[0], w[1], w[2], 0, nullptr, params.data(), nullptr),
                    "cuLaunchKernel");
  }

  void synchronize() override {
    ctx_->bind();
    ctx_->d().check(ctx_->d().CtxSynchronize(), "cuCtxSynchronize");
  }

 protected:
  std::unique_ptr<Buffer> make_view(Buffer& parent, size_t offset, size_t bytes) override {
    const auto* p = dynamic_cast<const CudaBuffer*>(&parent);
    if (!p || p->context() != ctx_.get()) throw std::invalid_argument("cuda: view of a buffer that another device allocated");
    return std::make_unique<CudaBuffer>(*p, offset, bytes);
  }

 private:
  cu::Device dev_;
  std::shared_ptr<CudaContext> ctx_;
  int cc_major_ = 0, cc_minor_ = 0;
  TargetCaps caps_;
  std::string desc_;
  std::mutex mu_;
  KernelCache& cache_;
  std::unordered_map<std::string, std::shared_ptr<const CudaCode>> modules_;  // by CUBIN/PTX
};

// The first device, or nullptr with the reason.
const cu::Driver* first_device(cu::Device* dev, std::string* why) {
  const cu::Driver* d = cu::driver(why);
  if (!d) return nullptr;
  int n = 0;
  if (d->DeviceGetCount(&n) != 0 || n == 0) {
    if (why) *why = "the CUDA driver reports no devices";
    return nullptr;
  }
  if (d->DeviceGet(dev, 0) != 0) {
    if (why) *why = "cuDeviceGet(0) failed";
    return nullptr;
  }
  return d;
}

}  // namespace

bool cuda_device_available(std::string* why) {
  cu::Device dev = 0;
  return first_device(&dev, why) != nullptr;
}

std::unique_ptr<Device> create_cuda_device(const DeviceOptions& opt) {
  cu::Device dev = 0;
  std::string why;
  const cu::Driver* d = first_device(&dev, &why);
  if (!d) throw std::runtime_error("no CUDA device: " + why);
  return std::make_unique<CudaDevice>(*d, dev, opt.cache ? *opt.cache : KernelCache::global());
}

}  // namespace kgen::rt
