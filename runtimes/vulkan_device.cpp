#include "runtimes/vulkan_device.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "codegen/glsl_dialect.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "ir/debug.h"
#include "ir/hash.h"
#include "jit/spirv.h"
#include "runtimes/gpu_artifacts.h"
#include "runtimes/vulkan_api.h"

namespace kgen::rt {

namespace {

using vk::check;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Instance + logical device + queue; shared (shared_ptr) by buffers and
// kernels so they can outlive nothing they depend on.
struct Context {
  vk::Api api;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem{};
  uint32_t timestamp_bits = 0;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  codegen::GlslOptions glsl;

  ~Context() {
    if (device) {
      api.vkDeviceWaitIdle(device);
      if (pipeline_cache) api.vkDestroyPipelineCache(device, pipeline_cache, nullptr);
      api.vkDestroyDevice(device, nullptr);
    }
    if (instance) api.vkDestroyInstance(instance, nullptr);
  }
};

// Creates the instance and picks a physical device with a compute queue,
// preferring a discrete GPU, then integrated, then anything (lavapipe).
std::shared_ptr<Context> make_instance(std::string* why) {
  const vk::Api* base = vk::loader(why);
  if (!base) return nullptr;
  auto ctx = std::make_shared<Context>();
  ctx->api = *base;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kgen";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = ctx->api.vkCreateInstance(&ici, nullptr, &ctx->instance);
  if (r != VK_SUCCESS) {
    if (why) *why = "vkCreateInstance failed (VkResult " + std::to_string(int(r)) + "): no Vulkan 1.2 driver (ICD)";
    return nullptr;
  }
  vk::load_instance(ctx->api, ctx->instance);
  uint32_t n = 0;
  ctx->api.vkEnumeratePhysicalDevices(ctx->instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devs(n);
  if (n) ctx->api.vkEnumeratePhysicalDevices(ctx->instance, &n, devs.data());
  int best = -1;
  for (VkPhysicalDevice d : devs) {
    VkPhysicalDeviceProperties p;
    ctx->api.vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t nq = 0;
    ctx->api.vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    ctx->api.vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, qs.data());
    for (uint32_t q = 0; q < nq; ++q) {
      if (!(qs[q].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      int score = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 3
                  : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2 : 1;
      if (score > best) {
        best = score;
        ctx->phys = d;
        ctx->family = q;
        ctx->props = p;
        ctx->timestamp_bits = qs[q].timestampValidBits;
      }
      break;
    }
  }
  if (best < 0) {
    if (why) *why = "no Vulkan 1.2 physical device with a compute queue";
    return nullptr;
  }
  return ctx;
}

// Enables the optional features kgen's GLSL may use and derives the caps.
void make_device(Context& c) {
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  c.api.vkGetPhysicalDeviceFeatures2(c.phys, &f2);

  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &sg;
  c.api.vkGetPhysicalDeviceProperties2(c.phys, &p2);
  c.api.vkGetPhysicalDeviceMemoryProperties(c.phys, &c.mem);

  // Enable exactly what the GLSL dialect may ask for, when present.
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  e12.shaderInt8 = f12.shaderInt8;
  e12.shaderFloat16 = f12.shaderFloat16;
  e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  e11.pNext = &e12;
  VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  e2.features.shaderInt16 = f2.features.shaderInt16;
  e2.features.shaderInt64 = f2.features.shaderInt64;
  e2.features.shaderFloat64 = f2.features.shaderFloat64;
  e2.pNext = &e11;

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = c.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &e2;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  check(c.api.vkCreateDevice(c.phys, &dci, nullptr, &c.device), "vkCreateDevice");
  vk::load_device(c.api, c.device);
  c.api.vkGetDeviceQueue(c.device, c.family, 0, &c.queue);
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  check(c.api.vkCreatePipelineCache(c.device, &pci, nullptr, &c.pipeline_cache), "vkCreatePipelineCache");

  codegen::TargetCaps& caps = c.glsl.caps;
  caps = codegen::glsl_default_caps();
  caps.name = "vulkan";
  caps.f16 = f12.shaderFloat16 && f11.storageBuffer16BitAccess;
  caps.f64 = f2.features.shaderFloat64;
  caps.i64 = f2.features.shaderInt64;
  const VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  caps.subgroups = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg.supportedOperations & need) == need;
  caps.subgroup_size = caps.subgroups ? sg.subgroupSize : 0;
  const VkPhysicalDeviceLimits& L = c.props.limits;
  caps.max_shared_bytes = L.maxComputeSharedMemorySize;
  caps.max_workgroup_threads = L.maxComputeWorkGroupInvocations;
  caps.max_workgroup_size = {L.maxComputeWorkGroupSize[0], L.maxComputeWorkGroupSize[1], L.maxComputeWorkGroupSize[2]};
  c.glsl.int8 = f12.shaderInt8 && f12.storageBuffer8BitAccess;
  c.glsl.int16 = f2.features.shaderInt16 && f11.storageBuffer16BitAccess;
  caps.bf16 = c.glsl.int16;  // emulated in uint16_t, computed in f32
  // Mesa's llvmpipe (lavapipe) ends a shader invocation's loops after 65535
  // iterations in all (gallivm's loop limiter), silently: the kernels count
  // and flag it (TargetCaps::loop_iteration_limit).
  if (std::string(c.props.deviceName).find("llvmpipe") != std::string::npos) caps.loop_iteration_limit = 65535;
}

class VkBuf final : public Buffer {
 public:
  VkBuf(std::shared_ptr<Context> c, size_t bytes) : Buffer(bytes), c_(std::move(c)) {
    auto& a = c_->api;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = std::max<size_t>(bytes, 16);  // Vulkan has no empty buffers
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(a.vkCreateBuffer(c_->device, &bci, nullptr, &buf_), "vkCreateBuffer");
    VkMemoryRequirements req;
    a.vkGetBufferMemoryRequirements(c_->device, buf_, &req);
    // Host-visible + coherent: uploads/downloads are memcpy, no flushes.
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < c_->mem.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (c_->mem.memoryTypes[i].propertyFlags & want) == want) {
        type = i;
        break;
      }
    if (type == UINT32_MAX) {
      a.vkDestroyBuffer(c_->device, buf_, nullptr);
      throw std::runtime_error("vulkan: no host-visible coherent memory type for storage buffers");
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    VkResult r = a.vkAllocateMemory(c_->device, &mai, nullptr, &mem_);
    if (r != VK_SUCCESS) {
      a.vkDestroyBuffer(c_->device, buf_, nullptr);
      check(r, "vkAllocateMemory");
    }
    check(a.vkBindBufferMemory(c_->device, buf_, mem_, 0), "vkBindBufferMemory");
    void* map = nullptr;
    check(a.vkMapMemory(c_->device, mem_, 0, VK_WHOLE_SIZE, 0, &map), "vkMapMemory");
    map_ = static_cast<char*>(map);
    size_ = bci.size;
  }
  // A view: bytes [offset, offset + bytes) of `parent`, owning nothing.
  VkBuf(const VkBuf& parent, size_t offset, size_t bytes)
      : Buffer(bytes), c_(parent.c_), buf_(parent.buf_), map_(parent.map_ + offset), offset_(parent.offset_ + offset),
        size_(parent.size_) {}
  ~VkBuf() override {
    if (!mem_) return;  // a view
    c_->api.vkUnmapMemory(c_->device, mem_);
    c_->api.vkDestroyBuffer(c_->device, buf_, nullptr);
    c_->api.vkFreeMemory(c_->device, mem_, nullptr);
  }
  void upload(const void* src, size_t bytes, size_t offset) override {
    range(bytes, offset, "upload");
    std::memcpy(map_ + offset, src, bytes);
  }
  void download(void* dst, size_t bytes, size_t offset) const override {
    range(bytes, offset, "download");
    std::memcpy(dst, map_ + offset, bytes);
  }
  void* host_ptr() override { return map_; }
  const Context* context() const { return c_.get(); }
  // What a descriptor binds: the whole VkBuffer for an owner; a view's range
  // in whole 4-byte words (kernels without 8/16-bit storage load narrow
  // types as words), within the VkBuffer. No range may be empty: an empty
  // view binds its VkBuffer, which no kernel reads through it.
  VkDescriptorBufferInfo binding() const {
    if (mem_ || bytes_ == 0) return {buf_, 0, VK_WHOLE_SIZE};
    const VkDeviceSize words = (VkDeviceSize(bytes_) + 3) & ~VkDeviceSize(3);
    return {buf_, offset_, std::min(words, size_ - offset_)};
  }

 private:
  void range(size_t bytes, size_t offset, const char* what) const {
    if (offset > bytes_ || bytes > bytes_ - offset)
      throw std::out_of_range(std::string("vulkan buffer ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + " exceeds its " + std::to_string(bytes_) + " bytes");
  }
  std::shared_ptr<Context> c_;
  VkBuffer buf_ = VK_NULL_HANDLE;
  VkDeviceMemory mem_ = VK_NULL_HANDLE;  // null for a view
  char* map_ = nullptr;                  // this buffer's byte 0
  VkDeviceSize offset_ = 0;              // of byte 0 in buf_
  VkDeviceSize size_ = 0;                // of buf_
};

// Shader module, layouts, one descriptor set, and a pipeline per workgroup
// size (the size is a specialization constant, fixed at pipeline creation).
class VkKernel final : public CompiledKernel {
 public:
  VkKernel(std::shared_ptr<Context> c, const ir::Kernel& k, std::string glsl, const std::vector<uint32_t>& spirv)
      : c_(std::move(c)) {
    kernel_ = k;
    source_ = std::move(glsl);
    entry_ = "main";
    auto& a = c_->api;
    VkDevice d = c_->device;
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = spirv.size() * 4;
    smi.pCode = spirv.data();
    check(a.vkCreateShaderModule(d, &smi, nullptr, &module_), "vkCreateShaderModule");
    nbuf_ = uint32_t(k.buffers.size());
    // The loop-limit flag's binding follows the buffers (glsl_emitter.cpp).
    nbind_ = nbuf_ + (c_->glsl.caps.loop_iteration_limit ? 1 : 0);
    std::vector<VkDescriptorSetLayoutBinding> binds(nbind_);
    for (uint32_t i = 0; i < nbind_; ++i)
      binds[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = nbind_;
    dli.pBindings = binds.data();
    check(a.vkCreateDescriptorSetLayout(d, &dli, nullptr, &dsl_), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(8 * k.scalars.size())};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &dsl_;
    pli.pushConstantRangeCount = k.scalars.empty() ? 0 : 1;
    pli.pPushConstantRanges = &pcr;
    check(a.vkCreatePipelineLayout(d, &pli, nullptr, &layout_), "vkCreatePipelineLayout");
    if (nbind_) {
      VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nbind_};
      VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      dpi.maxSets = 1;
      dpi.poolSizeCount = 1;
      dpi.pPoolSizes = &ps;
      check(a.vkCreateDescriptorPool(d, &dpi, nullptr, &pool_), "vkCreateDescriptorPool");
      VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      dai.descriptorPool = pool_;
      dai.descriptorSetCount = 1;
      dai.pSetLayouts = &dsl_;
      check(a.vkAllocateDescriptorSets(d, &dai, &set_), "vkAllocateDescriptorSets");
    }
    if (k.fixed_workgroup()) pipeline({k.workgroup_size[0], k.workgroup_size[1], k.workgroup_size[2]});
  }
  ~VkKernel() override {
    auto& a = c_->api;
    VkDevice d = c_->device;
    for (auto& [wg, p] : pipelines_) a.vkDestroyPipeline(d, p, nullptr);
    if (pool_) a.vkDestroyDescriptorPool(d, pool_, nullptr);
    a.vkDestroyPipelineLayout(d, layout_, nullptr);
    a.vkDestroyDescriptorSetLayout(d, dsl_, nullptr);
    a.vkDestroyShaderModule(d, module_, nullptr);
  }

  VkPipeline pipeline(std::array<uint32_t, 3> wg) const {
    auto it = pipelines_.find(wg);
    if (it != pipelines_.end()) return it->second;
    VkSpecializationMapEntry map[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
    VkSpecializationInfo si{3, map, sizeof wg, wg.data()};
    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module_;
    cpi.stage.pName = "main";
    cpi.stage.pSpecializationInfo = &si;
    cpi.layout = layout_;
    VkPipeline p;
    check(c_->api.vkCreateComputePipelines(c_->device, c_->pipeline_cache, 1, &cpi, nullptr, &p), "vkCreateComputePipelines");
    pipelines_[wg] = p;
    return p;
  }

  std::shared_ptr<Context> c_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout dsl_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  uint32_t nbuf_ = 0, nbind_ = 0;  // the kernel's buffers; bindings (with the loop-limit flag)
  mutable std::map<std::array<uint32_t, 3>, VkPipeline> pipelines_;
};

class VulkanDevice final : public Device {
 public:
  VulkanDevice(std::shared_ptr<Context> c, KernelCache& cache) : c_(std::move(c)), cache_(cache) {
    auto& a = c_->api;
    VkDevice d = c_->device;
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = c_->family;
    check(a.vkCreateCommandPool(d, &cpi, nullptr, &cmd_pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(a.vkAllocateCommandBuffers(d, &cai, &cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(a.vkCreateFence(d, &fci, nullptr, &fence_), "vkCreateFence");
    if (c_->timestamp_bits) {
      VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qpi.queryCount = 2;
      check(a.vkCreateQueryPool(d, &qpi, nullptr, &queries_), "vkCreateQueryPool");
    }
  }
  ~VulkanDevice() override {
    auto& a = c_->api;
    VkDevice d = c_->device;
    a.vkDeviceWaitIdle(d);
    kernels_.clear();
    if (queries_) a.vkDestroyQueryPool(d, queries_, nullptr);
    a.vkDestroyFence(d, fence_, nullptr);
    a.vkDestroyCommandPool(d, cmd_pool_, nullptr);
  }

  std::string name() const override { return "vulkan"; }
  std::string description() const override {
    const auto& p = c_->props;
    return "vulkan: " + std::string(p.deviceName) + " (Vulkan " + std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
           std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." + std::to_string(VK_API_VERSION_PATCH(p.apiVersion)) +
           (c_->glsl.caps.subgroups ? ", subgroup " + std::to_string(c_->glsl.caps.subgroup_size) : std::string()) + ")";
  }
  const TargetCaps& caps() const override { return c_->glsl.caps; }
  std::unique_ptr<Buffer> alloc(size_t bytes) override { return std::make_unique<VkBuf>(c_, bytes); }
  size_t view_alignment() const override { return c_->props.limits.minStorageBufferOffsetAlignment; }

  std::shared_ptr<CompiledKernel> compile(const ir::Kernel& k, const CompileOptions& opt) override {
    auto t0 = std::chrono::steady_clock::now();
    ir::Kernel optimized = prepare_kernel(k, caps(), opt);
    // Refused before the cache, so a refusal never depends on what is cached.
    if (std::string why = codegen::glsl_unsupported(optimized, c_->glsl); !why.empty()) throw ir::Error({}, why);
    const CacheKey key = make_cache_key({ir::structural_hash(optimized), "vulkan-glsl450-spirv",
                                         caps_key(caps()) + " int8=" + std::to_string(c_->glsl.int8) +
                                             " int16=" + std::to_string(c_->glsl.int16),
                                         opt.key(), "shaderc-static"});
    GpuArtifactLookup r = find_or_build_artifact(
        cache_, key, optimized,
        [&] {
          GpuArtifact a;
          a.source = codegen::emit_glsl(optimized, c_->glsl);
          if (ir::debug_level() >= 2) ir::debug_log(2, "source", "generated GLSL for '" + k.name + "':\n" + a.source);
          std::vector<uint32_t> spirv = jit::compile_glsl(a.source, k.name);
          a.artifact.assign(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
          a.meta = "kernel=" + k.name + "\nformat=spirv\n";
          return a;
        },
        [](const CacheEntry& e) -> std::string {
          const bool ok = e.artifact.size() >= 20 && e.artifact.size() % 4 == 0 &&
                          *reinterpret_cast<const uint32_t*>(e.artifact.data()) == 0x07230203u;
          return ok ? "" : "not a SPIR-V module";
        });
    std::lock_guard lock(mu_);
    // Pipelines per device, shared by every compile of the same SPIR-V.
    std::shared_ptr<VkKernel>& kern = kernels_[r.art->artifact];
    if (!kern) {
      std::vector<uint32_t> words(r.art->artifact.size() / 4);
      std::memcpy(words.data(), r.art->artifact.data(), words.size() * 4);
      kern = std::make_shared<VkKernel>(c_, optimized, r.art->source, words);
    }
    double ms = ms_since(t0);
    ir::debug_log(1, "compile", "'" + k.name + "' for vulkan in " + std::to_string(ms) + " ms (" +
                                    (r.hit ? "cache hit " : "cache miss ") + key.hex() + ")");
    return std::make_shared<Handle>(kern, k, r.hit, ms);
  }

  void launch(const CompiledKernel& ck, const LaunchArgs& args) override {
    const auto* h = dynamic_cast<const Handle*>(&ck);
    if (!h) throw std::invalid_argument("vulkan: kernel '" + ck.kernel().name + "' was not compiled by this device");
    validate_launch(ck.kernel(), args);
    const VkKernel& k = *h->impl;
    const auto& L = c_->props.limits;
    for (int ax = 0; ax < 3; ++ax)
      if (args.dims.grid[ax] > L.maxComputeWorkGroupCount[ax])
        throw std::invalid_argument("launch of kernel '" + ck.kernel().name + "': grid " + std::to_string(args.dims.grid[ax]) +
                                    " on axis " + std::to_string(ax) + " exceeds the device's maxComputeWorkGroupCount " +
                                    std::to_string(L.maxComputeWorkGroupCount[ax]));
    if (args.dims.group_threads() > L.maxComputeWorkGroupInvocations)
      throw std::invalid_argument("launch of kernel '" + ck.kernel().name + "': workgroup of " +
                                  std::to_string(args.dims.group_threads()) + " items exceeds the device's " +
                                  std::to_string(L.maxComputeWorkGroupInvocations));
    std::lock_guard lock(mu_);
    auto& a = c_->api;
    VkDevice d = c_->device;
    VkPipeline pipe = k.pipeline(args.dims.workgroup);
    if (k.nbind_) {
      std::vector<VkDescriptorBufferInfo> infos(k.nbind_);
      std::vector<VkWriteDescriptorSet> writes(k.nbind_);
      for (uint32_t i = 0; i < k.nbind_; ++i) {
        const auto* b = i < k.nbuf_ ? dynamic_cast<const VkBuf*>(args.buffers[i]) : loop_flag();
        if (!b)
          throw std::invalid_argument("launch of kernel '" + ck.kernel().name + "': buffer '" + ck.kernel().buffers[i].name +
                                      "' was not allocated by the vulkan device");
        infos[i] = b->binding();
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = k.set_;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      // Safe: the previous launch using this set has completed (launches wait).
      a.vkUpdateDescriptorSets(d, k.nbind_, writes.data(), 0, nullptr);
    }
    check(a.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(a.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    if (queries_) a.vkCmdResetQueryPool(cmd_, queries_, 0, 2);
    a.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (k.nbind_) a.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout_, 0, 1, &k.set_, 0, nullptr);
    if (!args.scalars.empty())
      a.vkCmdPushConstants(cmd_, k.layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(8 * args.scalars.size()), args.scalars.data());
    if (queries_) a.vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    a.vkCmdDispatch(cmd_, args.dims.grid[0], args.dims.grid[1], args.dims.grid[2]);
    if (queries_) a.vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    // Shader writes -> host reads of the mapped buffers (submission already
    // orders earlier host writes before the dispatch).
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    a.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    check(a.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    check(a.vkResetFences(d, 1, &fence_), "vkResetFences");
    check(a.vkQueueSubmit(c_->queue, 1, &si, fence_), "vkQueueSubmit");
    check(a.vkWaitForFences(d, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    if (k.nbind_ > k.nbuf_) check_loop_flag(ck.kernel().name);
    last_ms_ = -1;
    if (queries_) {
      uint64_t ts[2];
      if (a.vkGetQueryPoolResults(d, queries_, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)
        last_ms_ = double(ts[1] - ts[0]) * c_->props.limits.timestampPeriod * 1e-6;
    }
  }

  void synchronize() override {}  // every launch has completed when launch() returns

  // The buffer kernels raise when a loop reaches the driver's iteration
  // limit (one u32, zero until then).
  const VkBuf* loop_flag() {
    if (!loop_flag_) {
      loop_flag_ = std::make_unique<VkBuf>(c_, 4);
      const uint32_t zero = 0;
      loop_flag_->upload(&zero, 4, 0);
    }
    return loop_flag_.get();
  }
  void check_loop_flag(const std::string& kernel) {
    check_loop_limit_flag(*loop_flag_, "vulkan (" + std::string(c_->props.deviceName) + ")", kernel,
                          c_->glsl.caps.loop_iteration_limit);
  }
  double last_ms() const { return last_ms_; }

 protected:
  std::unique_ptr<Buffer> make_view(Buffer& parent, size_t offset, size_t bytes) override {
    const auto* p = dynamic_cast<const VkBuf*>(&parent);
    if (!p || p->context() != c_.get())
      throw std::invalid_argument("vulkan: view of a buffer that another device allocated");
    return std::make_unique<VkBuf>(*p, offset, bytes);
  }

 private:
  struct Handle final : CompiledKernel {
    Handle(std::shared_ptr<VkKernel> k, const ir::Kernel& orig, bool hit, double ms) : impl(std::move(k)) {
      kernel_ = orig;
      source_ = impl->source();
      entry_ = "main";
      cache_hit_ = hit;
      compile_ms_ = ms;
    }
    std::shared_ptr<VkKernel> impl;
  };

  std::shared_ptr<Context> c_;
  KernelCache& cache_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<VkKernel>> kernels_;  // by SPIR-V
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::unique_ptr<VkBuf> loop_flag_;  // made on the first launch that binds it
  double last_ms_ = -1;
};

}  // namespace

bool vulkan_available(std::string* why) {
  // Probed once: creating an instance loads every ICD, which is not free.
  static std::string reason;
  static const bool ok = [] {
    if (!jit::spirv_available()) {
      reason = "kgen was built without shaderc";
      return false;
    }
    return make_instance(&reason) != nullptr;
  }();
  if (!ok && why) *why = reason;
  return ok;
}

std::unique_ptr<Device> create_vulkan_device(const DeviceOptions& opt) {
  std::string why;
  if (!jit::spirv_available()) throw std::runtime_error("vulkan: kgen was built without shaderc (GLSL -> SPIR-V)");
  auto ctx = make_instance(&why);
  if (!ctx) throw std::runtime_error("vulkan: " + why);
  make_device(*ctx);
  return std::make_unique<VulkanDevice>(std::move(ctx), opt.cache ? *opt.cache : KernelCache::global());
}

double vulkan_last_kernel_ms(const Device& dev) {
  const auto* v = dynamic_cast<const VulkanDevice*>(&dev);
  return v ? v->last_ms() : -1;
}

}  // namespace kgen::rt
