#include "runtimes/webgpu_device.h"

#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "codegen/wgsl_dialect.h"
#include "ir/debug.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "ir/hash.h"
#include "runtimes/gpu_artifacts.h"
#include "runtimes/wgpu_api.h"

namespace kgen::rt {

namespace {

using wgpu::Api;
using wgpu::sv;

size_t align4(size_t n) { return (n + 3) & ~size_t(3); }

void wait_idle(Api& a) { a.DevicePoll(a.device, 1, nullptr); }

// Runs `f` inside a validation error scope; throws with wgpu's message.
template <class F>
void scoped(Api& a, const std::string& what, F&& f) {
  a.DevicePushErrorScope(a.device, WGPUErrorFilter_Validation);
  f();
  struct R { bool done = false; std::string msg; } r;
  WGPUPopErrorScopeCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = [](WGPUPopErrorScopeStatus st, WGPUErrorType type, WGPUStringView m, void* u, void*) {
    auto* r = static_cast<R*>(u);
    r->done = true;
    if (st != WGPUPopErrorScopeStatus_Success || type != WGPUErrorType_NoError) r->msg = wgpu::str(m);
  };
  cb.userdata1 = &r;
  a.DevicePopErrorScope(a.device, cb);
  for (int i = 0; i < 100 && !r.done; ++i) a.InstanceProcessEvents(a.instance);
  if (!r.msg.empty()) throw std::runtime_error("webgpu: " + what + ": " + r.msg);
}

class WgBuf final : public Buffer {
 public:
  WgBuf(Api& a, size_t bytes) : Buffer(bytes), a_(a) {
    WGPUBufferDescriptor d{};
    d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    d.size = align4(bytes ? bytes : 4);  // no empty bindings; copies move whole words
    buf_ = a.DeviceCreateBuffer(a.device, &d);
    if (!buf_) throw std::runtime_error("webgpu: cannot allocate " + std::to_string(bytes) + " bytes");
    owned_ = true;
  }
  // A view: bytes [offset, offset + bytes) of `parent`, owning nothing.
  WgBuf(const WgBuf& parent, size_t offset, size_t bytes)
      : Buffer(bytes), a_(parent.a_), buf_(parent.buf_), offset_(parent.offset_ + offset) {}
  ~WgBuf() override {
    if (owned_) a_.BufferRelease(buf_);
  }
  WGPUBuffer handle() const { return buf_; }
  // Where a binding starts and how long it is: whole 4-byte words (WebGPU
  // binds no less; f16 without shader-f16 is packed in words), which fit in
  // the buffer as views start at multiples of 4. No binding may be empty: an
  // empty view binds its buffer's first word, which no kernel reads through it.
  uint64_t binding_offset() const { return bytes_ ? offset_ : 0; }
  uint64_t binding_size() const { return align4(bytes_ ? bytes_ : 4); }

  void upload(const void* src, size_t n, size_t off) override {
    check(n, off);
    if (off % 4 == 0 && n % 4 == 0) return a_.QueueWriteBuffer(a_.queue, buf_, offset_ + off, src, n);
    // writeBuffer moves whole words: merge the partial ones with the current contents.
    size_t lo = off & ~size_t(3), hi = align4(off + n);
    std::vector<unsigned char> tmp(hi - lo);
    read(tmp.data(), lo, hi - lo);
    std::memcpy(tmp.data() + (off - lo), src, n);
    a_.QueueWriteBuffer(a_.queue, buf_, offset_ + lo, tmp.data(), tmp.size());
  }
  void download(void* dst, size_t n, size_t off) const override {
    check(n, off);
    size_t lo = off & ~size_t(3), hi = align4(off + n);
    std::vector<unsigned char> tmp(hi - lo);
    read(tmp.data(), lo, hi - lo);
    std::memcpy(dst, tmp.data() + (off - lo), n);
  }

 private:
  void check(size_t n, size_t off) const {
    if (off > bytes_ || n > bytes_ - off) throw std::out_of_range("webgpu buffer: range past the end");
  }
  // Copy to a mappable staging buffer, wait, map, copy out.
  void read(void* dst, size_t off, size_t n) const {
    if (!n) return;
    WGPUBufferDescriptor d{};
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    d.size = n;
    WGPUBuffer st = a_.DeviceCreateBuffer(a_.device, &d);
    WGPUCommandEncoder enc = a_.DeviceCreateCommandEncoder(a_.device, nullptr);
    a_.CommandEncoderCopyBufferToBuffer(enc, buf_, offset_ + off, st, 0, n);
    WGPUCommandBuffer cmd = a_.CommandEncoderFinish(enc, nullptr);
    a_.QueueSubmit(a_.queue, 1, &cmd);
    a_.CommandBufferRelease(cmd);
    a_.CommandEncoderRelease(enc);
    struct M { bool done = false, ok = false; } m;
    WGPUBufferMapCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_AllowSpontaneous;
    cb.callback = [](WGPUMapAsyncStatus s, WGPUStringView, void* u, void*) {
      static_cast<M*>(u)->done = true;
      static_cast<M*>(u)->ok = s == WGPUMapAsyncStatus_Success;
    };
    cb.userdata1 = &m;
    a_.BufferMapAsync(st, WGPUMapMode_Read, 0, n, cb);
    for (int i = 0; i < 1000 && !m.done; ++i) wait_idle(a_);
    if (!m.ok) {
      a_.BufferRelease(st);
      throw std::runtime_error("webgpu: mapping a staging buffer failed");
    }
    std::memcpy(dst, a_.BufferGetConstMappedRange(st, 0, n), n);
    a_.BufferUnmap(st);
    a_.BufferRelease(st);
  }

  Api& a_;
  WGPUBuffer buf_ = nullptr;
  uint64_t offset_ = 0;  // of byte 0 in buf_
  bool owned_ = false;   // false for a view
};

// One shader module and layout; pipelines per workgroup size (override constants).
class WgKernel final : public CompiledKernel {
 public:
  WgKernel(Api& a, const ir::Kernel& k, const std::string& wgsl) : a_(a) {
    kernel_ = k;
    source_ = wgsl;
    entry_ = "main";
    std::vector<WGPUBindGroupLayoutEntry> e;
    for (size_t i = 0; i < k.buffers.size(); ++i) {
      WGPUBindGroupLayoutEntry b{};
      b.binding = uint32_t(i);
      b.visibility = WGPUShaderStage_Compute;
      // Must match the declaration the emitter chose (read-only unless written or atomic).
      bool ro = wgsl.find("var<storage, read> b" + std::to_string(i) + ":") != std::string::npos;
      b.buffer.type = ro ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
      read_only_.push_back(ro);
      e.push_back(b);
    }
    if (!k.scalars.empty()) {
      WGPUBindGroupLayoutEntry u{};
      u.binding = uint32_t(k.buffers.size());
      u.visibility = WGPUShaderStage_Compute;
      u.buffer.type = WGPUBufferBindingType_Uniform;
      e.push_back(u);
    }
    // The loop-limit flag, after the uniform (wgsl_emitter.cpp).
    loop_flag_ = wgsl.find("var<storage, read_write> kg_loop_flag") != std::string::npos;
    if (loop_flag_) {
      WGPUBindGroupLayoutEntry f{};
      f.binding = uint32_t(k.buffers.size() + 1);
      f.visibility = WGPUShaderStage_Compute;
      f.buffer.type = WGPUBufferBindingType_Storage;
      e.push_back(f);
    }
    scoped(a, "kernel '" + k.name + "'", [&] {
      WGPUShaderSourceWGSL src{};
      src.chain.sType = WGPUSType_ShaderSourceWGSL;
      src.code = sv(source_);
      WGPUShaderModuleDescriptor md{};
      md.nextInChain = &src.chain;
      module_ = a.DeviceCreateShaderModule(a.device, &md);
      WGPUBindGroupLayoutDescriptor bd{};
      bd.entryCount = e.size();
      bd.entries = e.data();
      bgl_ = a.DeviceCreateBindGroupLayout(a.device, &bd);
      WGPUPipelineLayoutDescriptor pd{};
      pd.bindGroupLayoutCount = 1;
      pd.bindGroupLayouts = &bgl_;
      layout_ = a.DeviceCreatePipelineLayout(a.device, &pd);
    });
  }
  ~WgKernel() override {
    for (auto& [wg, p] : pipes_) a_.ComputePipelineRelease(p);
    a_.PipelineLayoutRelease(layout_);
    a_.BindGroupLayoutRelease(bgl_);
    a_.ShaderModuleRelease(module_);
  }
  WGPUBindGroupLayout bgl() const { return bgl_; }
  bool read_only(size_t buffer) const { return read_only_[buffer]; }
  bool loop_flag() const { return loop_flag_; }
  void set_compile_ms(double ms) { compile_ms_ = ms; }
  void set_cache_hit(bool hit) { cache_hit_ = hit; }

  WGPUComputePipeline pipeline(const std::array<uint32_t, 3>& wg) {
    auto it = pipes_.find(wg);
    if (it != pipes_.end()) return it->second;
    static const std::string keys[3] = {"kg_wg_x", "kg_wg_y", "kg_wg_z"};
    WGPUConstantEntry c[3]{};
    for (int i = 0; i < 3; ++i) c[i].key = sv(keys[i]), c[i].value = wg[i];
    WGPUComputePipelineDescriptor d{};
    d.layout = layout_;
    d.compute.module = module_;
    d.compute.entryPoint = sv(entry_);
    d.compute.constantCount = 3;
    d.compute.constants = c;
    WGPUComputePipeline p = nullptr;
    scoped(a_, "pipeline for kernel '" + kernel_.name + "'", [&] { p = a_.DeviceCreateComputePipeline(a_.device, &d); });
    return pipes_[wg] = p;
  }

 private:
  Api& a_;
  WGPUShaderModule module_ = nullptr;
  WGPUBindGroupLayout bgl_ = nullptr;
  WGPUPipelineLayout layout_ = nullptr;
  bool loop_flag_ = false;  // binds the loop-limit flag
  std::vector<bool> read_only_;  // per buffer parameter: bound as read-only storage
  std::map<std::array<uint32_t, 3>, WGPUComputePipeline> pipes_;
};

class WebGpuDevice final : public Device {
 public:
  WebGpuDevice(Api& a, KernelCache& cache) : a_(a), cache_(cache) {
    caps_.name = "webgpu";
    // wgpu on Mesa's llvmpipe (lavapipe) inherits its loop limiter (see the
    // Vulkan device): the kernels count iterations and flag the limit.
    if (a_.adapter_name.find("llvmpipe") != std::string::npos) caps_.loop_iteration_limit = 65535;
    WGPULimits limits{};
    if (a_.DeviceGetLimits(a_.device, &limits) == WGPUStatus_Success && limits.minStorageBufferOffsetAlignment &&
        limits.minStorageBufferOffsetAlignment != WGPU_LIMIT_U32_UNDEFINED)
      view_alignment_ = limits.minStorageBufferOffsetAlignment;
  }
  std::string name() const override { return "webgpu"; }
  std::string description() const override {
    return "webgpu: " + a_.adapter_name + " (wgpu-native" + (a_.shader_f16 ? ", shader-f16" : ", f16 packed in u32") + ")";
  }
  const TargetCaps& caps() const override { return caps_; }
  std::unique_ptr<Buffer> alloc(size_t bytes) override { return std::make_unique<WgBuf>(a_, bytes); }
  size_t view_alignment() const override { return view_alignment_; }

  std::shared_ptr<CompiledKernel> compile(const ir::Kernel& k, const CompileOptions& opt) override {
    auto t0 = std::chrono::steady_clock::now();
    ir::Kernel optimized = prepare_kernel(k, caps_, opt);
    codegen::WgslOptions wo;
    wo.caps = caps_;
    wo.shader_f16 = a_.shader_f16;
    // Refused before the cache, so a refusal never depends on what is cached.
    if (std::string why = codegen::wgsl_unsupported(optimized, wo); !why.empty()) throw ir::Error({}, why);
    // The artifact is the WGSL itself: naga compiles it when the module is
    // created, which no cache outlives; a disk hit saves the emission.
    const CacheKey key = make_cache_key({ir::structural_hash(optimized), "webgpu-wgsl",
                                         caps_key(caps_) + " shader_f16=" + std::to_string(wo.shader_f16), opt.key(),
                                         "wgsl"});
    GpuArtifactLookup r = find_or_build_artifact(
        cache_, key, optimized,
        [&] {
          GpuArtifact a;
          a.source = a.artifact = codegen::emit_wgsl(optimized, wo);
          if (ir::debug_level() >= 2) ir::debug_log(2, "source", "generated WGSL for '" + k.name + "':\n" + a.source);
          a.meta = "kernel=" + k.name + "\nformat=wgsl\n";
          return a;
        },
        [](const CacheEntry& e) { return e.artifact.find("fn main(") == std::string::npos ? "not a WGSL kernel" : ""; });
    std::lock_guard lock(mu_);
    auto kern = std::make_shared<WgKernel>(a_, k, r.art->artifact);
    if (optimized.fixed_workgroup()) kern->pipeline(optimized.workgroup_size);
    kern->set_compile_ms(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    kern->set_cache_hit(r.hit);
    return kern;
  }

  void launch(const CompiledKernel& ck, const LaunchArgs& args) override {
    auto* k = const_cast<WgKernel*>(dynamic_cast<const WgKernel*>(&ck));
    if (!k) throw std::invalid_argument("webgpu: kernel '" + ck.kernel().name + "' was not compiled by this device");
    validate_launch(ck.kernel(), args);
    for (int ax = 0; ax < 3; ++ax)
      if (args.dims.grid[ax] > 65535)
        throw std::invalid_argument("launch of kernel '" + ck.kernel().name + "': grid " + std::to_string(args.dims.grid[ax]) +
                                    " exceeds WebGPU's maxComputeWorkgroupsPerDimension 65535");
    if (args.dims.group_threads() > caps_.max_workgroup_threads)
      throw std::invalid_argument("launch of kernel '" + ck.kernel().name + "': workgroup of " +
                                  std::to_string(args.dims.group_threads()) + " items exceeds WebGPU's 256");
    std::lock_guard lock(mu_);
    const ir::Kernel& kk = ck.kernel();
    WGPUComputePipeline pipe = k->pipeline(args.dims.workgroup);
    std::vector<WGPUBindGroupEntry> e;
    for (size_t i = 0; i < kk.buffers.size(); ++i) {
      const auto* b = dynamic_cast<const WgBuf*>(args.buffers[i]);
      if (!b)
        throw std::invalid_argument("launch of kernel '" + kk.name + "': buffer '" + kk.buffers[i].name +
                                    "' was not allocated by the webgpu device");
      WGPUBindGroupEntry x{};
      x.binding = uint32_t(i);
      x.buffer = b->handle();
      x.offset = b->binding_offset();
      x.size = b->binding_size();
      e.push_back(x);
    }
    WGPUBuffer ub = nullptr;
    if (!kk.scalars.empty()) {
      std::vector<uint64_t> slots(args.scalars);
      slots.resize((slots.size() + 1) & ~size_t(1), 0);  // uniform arrays: 16-byte elements
      WGPUBufferDescriptor d{};
      d.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
      d.size = slots.size() * 8;
      ub = a_.DeviceCreateBuffer(a_.device, &d);
      a_.QueueWriteBuffer(a_.queue, ub, 0, slots.data(), d.size);
      WGPUBindGroupEntry x{};
      x.binding = uint32_t(kk.buffers.size());
      x.buffer = ub;
      x.size = d.size;
      e.push_back(x);
    }
    if (k->loop_flag()) {
      if (!loop_flag_) {
        loop_flag_ = std::make_unique<WgBuf>(a_, 4);
        const uint32_t zero = 0;
        loop_flag_->upload(&zero, 4, 0);
      }
      WGPUBindGroupEntry x{};
      x.binding = uint32_t(kk.buffers.size() + 1);
      x.buffer = loop_flag_->handle();
      x.size = 4;
      e.push_back(x);
    }
    WGPUCommandEncoder enc = a_.DeviceCreateCommandEncoder(a_.device, nullptr);
    std::vector<WGPUBuffer> temps;  // released after the launch: the scalars, copies of aliased ranges
    if (ub) temps.push_back(ub);
    auto release = [&] {
      a_.CommandEncoderRelease(enc);
      for (WGPUBuffer t : temps) a_.BufferRelease(t);
    };
    WGPUBindGroup bg = nullptr;
    try {
      copy_read_only_aliases(enc, *k, e, temps);
      scoped(a_, "bind group for kernel '" + kk.name + "'", [&] {
        WGPUBindGroupDescriptor bd{};
        bd.layout = k->bgl();
        bd.entryCount = e.size();
        bd.entries = e.data();
        bg = a_.DeviceCreateBindGroup(a_.device, &bd);
      });
    } catch (...) {
      release();
      throw;
    }
    WGPUComputePassEncoder pass = a_.CommandEncoderBeginComputePass(enc, nullptr);
    a_.ComputePassEncoderSetPipeline(pass, pipe);
    a_.ComputePassEncoderSetBindGroup(pass, 0, bg, 0, nullptr);
    a_.ComputePassEncoderDispatchWorkgroups(pass, args.dims.grid[0], args.dims.grid[1], args.dims.grid[2]);
    a_.ComputePassEncoderEnd(pass);
    WGPUCommandBuffer cmd = a_.CommandEncoderFinish(enc, nullptr);
    a_.QueueSubmit(a_.queue, 1, &cmd);
    wait_idle(a_);  // launches complete before returning, so the bind group can go
    a_.CommandBufferRelease(cmd);
    a_.ComputePassEncoderRelease(pass);
    a_.BindGroupRelease(bg);
    release();
    if (k->loop_flag()) check_loop_limit_flag(*loop_flag_, "webgpu (" + a_.adapter_name + ")", kk.name, caps_.loop_iteration_limit);
  }

  void synchronize() override {}  // every launch has completed when launch() returns

 protected:
  std::unique_ptr<Buffer> make_view(Buffer& parent, size_t offset, size_t bytes) override {
    const auto* p = dynamic_cast<const WgBuf*>(&parent);
    if (!p) throw std::invalid_argument("webgpu: view of a buffer that another device allocated");
    return std::make_unique<WgBuf>(*p, offset, bytes);
  }

 private:
  // wgpu checks usage per buffer, not per range: one dispatch may not bind a
  // buffer both read-only and writable, as views of one arena do to read an
  // input and write an output. Such a read-only binding is pointed at a copy
  // of its range, recorded in `enc` ahead of the pass (so it is the range's
  // contents at launch, as the kernel would read). Adds the copies to `temps`.
  void copy_read_only_aliases(WGPUCommandEncoder enc, const WgKernel& k, std::vector<WGPUBindGroupEntry>& e,
                              std::vector<WGPUBuffer>& temps) {
    const size_t nbuf = k.kernel().buffers.size();
    auto bound_writable = [&](WGPUBuffer b) {
      for (size_t j = 0; j < nbuf; ++j)
        if (!k.read_only(j) && e[j].buffer == b) return true;
      return false;
    };
    for (size_t i = 0; i < nbuf; ++i) {
      if (!k.read_only(i) || !bound_writable(e[i].buffer)) continue;
      WGPUBufferDescriptor d{};
      d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst;
      d.size = e[i].size;
      WGPUBuffer c = a_.DeviceCreateBuffer(a_.device, &d);
      if (!c) throw std::runtime_error("webgpu: cannot allocate " + std::to_string(d.size) + " bytes");
      temps.push_back(c);
      a_.CommandEncoderCopyBufferToBuffer(enc, e[i].buffer, e[i].offset, c, 0, e[i].size);
      e[i].buffer = c;
      e[i].offset = 0;
    }
  }

  Api& a_;
  TargetCaps caps_ = codegen::wgsl_default_caps();
  size_t view_alignment_ = 256;  // minStorageBufferOffsetAlignment, WebGPU's default unless the device says
  KernelCache& cache_;
  std::mutex mu_;
  std::unique_ptr<WgBuf> loop_flag_;  // made on the first launch that binds it
};

}  // namespace

bool webgpu_available(std::string* why) {
  Api& a = wgpu::api();
  if (!a.device && why) *why = a.error;
  return a.device != nullptr;
}

std::unique_ptr<Device> create_webgpu_device(const DeviceOptions& opt) {
  std::string why;
  if (!webgpu_available(&why)) throw std::runtime_error("webgpu: " + why);
  return std::make_unique<WebGpuDevice>(wgpu::api(), opt.cache ? *opt.cache : KernelCache::global());
}

}  // namespace kgen::rt
