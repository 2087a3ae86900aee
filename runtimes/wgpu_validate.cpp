#include "runtimes/wgpu_validate.h"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

#include "runtimes/wgpu_api.h"  // the wheel's webgpu.h: types only, nothing is linked

namespace kgen::rt {

namespace {

using wgpu::Api;
using Ctx = Api;

std::string view(WGPUStringView s) {
  if (!s.data) return {};
  return s.length == WGPU_STRLEN ? std::string(s.data) : std::string(s.data, s.length);
}
using wgpu::sv;

// wgpu-native calls these callbacks before returning (AllowSpontaneous);
// process_events covers an implementation that defers them.
void on_adapter(WGPURequestAdapterStatus st, WGPUAdapter a, WGPUStringView msg, void* u1, void*) {
  auto* c = static_cast<Ctx*>(u1);
  if (st == WGPURequestAdapterStatus_Success) c->adapter = a;
  else c->error = "no WebGPU adapter: " + view(msg);
}
void on_device(WGPURequestDeviceStatus st, WGPUDevice d, WGPUStringView msg, void* u1, void*) {
  auto* c = static_cast<Ctx*>(u1);
  if (st == WGPURequestDeviceStatus_Success) c->device = d;
  else c->error = "no WebGPU device: " + view(msg);
}

Ctx* context() { return &wgpu::api(); }

}  // namespace

// Opened once and never closed (drivers register atexit handlers).
wgpu::Api& wgpu::api() {
  static Api* ctx = [] {
    auto* c = new Api;
    std::string path = wgpu_library_path();
    void* lib = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      c->error = path.empty() ? "wgpu-native not found (pip install wgpu, or set KGEN_WGPU_LIB)"
                              : "cannot load wgpu-native '" + path + "': " + dlerror();
      return c;
    }
#define KGEN_WGPU_LOAD(n)                                                       \
  c->n = reinterpret_cast<WGPUProc##n>(dlsym(lib, "wgpu" #n));                  \
  if (!c->n) { c->error = path + " has no wgpu" #n " (wgpu-native too old?)"; return c; }
    KGEN_WGPU_FNS(KGEN_WGPU_LOAD)
#undef KGEN_WGPU_LOAD
    c->DevicePoll = reinterpret_cast<decltype(c->DevicePoll)>(dlsym(lib, "wgpuDevicePoll"));
    if (!c->DevicePoll) { c->error = path + " has no wgpuDevicePoll"; return c; }
    c->instance = c->CreateInstance(nullptr);
    if (!c->instance) { c->error = "wgpuCreateInstance failed"; return c; }
    WGPURequestAdapterOptions opt{};
    WGPURequestAdapterCallbackInfo acb{};
    acb.mode = WGPUCallbackMode_AllowSpontaneous;
    acb.callback = on_adapter;
    acb.userdata1 = c;
    c->InstanceRequestAdapter(c->instance, &opt, acb);
    for (int i = 0; i < 100 && !c->adapter && c->error.empty(); ++i) c->InstanceProcessEvents(c->instance);
    if (!c->adapter) { if (c->error.empty()) c->error = "no WebGPU adapter (request never completed)"; return c; }
    WGPUAdapterInfo info{};
    if (c->AdapterGetInfo(c->adapter, &info) == WGPUStatus_Success) {
      c->adapter_name = view(info.device) + " / " + (info.backendType == WGPUBackendType_Vulkan ? "Vulkan" : "other backend");
      c->AdapterInfoFreeMembers(info);
    }
    WGPURequestDeviceCallbackInfo dcb{};
    dcb.mode = WGPUCallbackMode_AllowSpontaneous;
    dcb.callback = on_device;
    dcb.userdata1 = c;
    // shader-f16 when the adapter has it: f16 buffers are then array<f16>
    // instead of packed u32 words (codegen/wgsl_dialect.h).
    WGPUFeatureName f16 = WGPUFeatureName_ShaderF16;
    WGPUDeviceDescriptor dd{};
    // KGEN_WGPU_SHADER_F16=0 leaves it off (tests the packed f16 path on an adapter that has it).
    const char* want = std::getenv("KGEN_WGPU_SHADER_F16");
    if ((!want || std::string(want) != "0") && c->AdapterHasFeature(c->adapter, f16)) {
      dd.requiredFeatureCount = 1;
      dd.requiredFeatures = &f16;
    }
    c->AdapterRequestDevice(c->adapter, &dd, dcb);
    for (int i = 0; i < 100 && !c->device && c->error.empty(); ++i) c->InstanceProcessEvents(c->instance);
    if (!c->device && c->error.empty()) c->error = "no WebGPU device (request never completed)";
    if (c->device) c->queue = c->DeviceGetQueue(c->device);
    c->shader_f16 = c->device && dd.requiredFeatureCount == 1;
    return c;
  }();
  return *ctx;
}

std::string wgpu::str(WGPUStringView s) { return view(s); }

namespace {

struct ScopeResult {
  bool done = false;
  std::string message;
};
void on_pop(WGPUPopErrorScopeStatus st, WGPUErrorType type, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<ScopeResult*>(u1);
  r->done = true;
  if (st != WGPUPopErrorScopeStatus_Success) r->message = "error scope lost: " + view(msg);
  else if (type != WGPUErrorType_NoError) r->message = view(msg);
}

}  // namespace

std::string wgpu_library_path() {
  if (const char* e = std::getenv("KGEN_WGPU_LIB"); e && *e) return e;
#ifdef KGEN_WGPU_LIB_DEFAULT
  return KGEN_WGPU_LIB_DEFAULT;
#else
  return {};
#endif
}

bool wgpu_available(std::string* why) {
  Ctx* c = context();
  if (!c->device && why) *why = c->error;
  return c->device != nullptr;
}

std::string wgpu_adapter_name() { return context()->adapter_name; }

bool wgpu_has_shader_f16() { return context()->shader_f16; }

std::string validate_wgsl(const std::string& wgsl) {
  Ctx* c = context();
  if (!c->device) throw std::runtime_error("wgpu unavailable: " + c->error);
  c->DevicePushErrorScope(c->device, WGPUErrorFilter_Validation);
  WGPUShaderSourceWGSL src{};
  src.chain.sType = WGPUSType_ShaderSourceWGSL;
  src.code = sv(wgsl);
  WGPUShaderModuleDescriptor md{};
  md.nextInChain = &src.chain;
  WGPUShaderModule m = c->DeviceCreateShaderModule(c->device, &md);
  // The pipeline resolves the override constants (workgroup size) and lowers
  // the module for the backend, which shader-module creation alone does not.
  const std::string entry = "main";
  WGPUComputePipelineDescriptor pd{};
  pd.compute.module = m;
  pd.compute.entryPoint = sv(entry);
  WGPUComputePipeline p = m ? c->DeviceCreateComputePipeline(c->device, &pd) : nullptr;
  ScopeResult r;
  WGPUPopErrorScopeCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = on_pop;
  cb.userdata1 = &r;
  c->DevicePopErrorScope(c->device, cb);
  for (int i = 0; i < 100 && !r.done; ++i) c->InstanceProcessEvents(c->instance);
  if (p) c->ComputePipelineRelease(p);
  if (m) c->ShaderModuleRelease(m);
  if (!r.done) return "wgpu: the error scope never completed";
  return r.message;
}

}  // namespace kgen::rt
