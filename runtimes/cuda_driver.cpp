#include "runtimes/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

namespace kgen::rt::cu {

void Driver::check(Result r, const char* what) const {
  if (r == 0) return;
  const char* msg = nullptr;
  if (GetErrorString) GetErrorString(r, &msg);
  throw std::runtime_error(std::string("cuda: ") + what + ": " + (msg ? msg : "error " + std::to_string(r)));
}

namespace {

struct Loaded {
  Driver d{};
  std::string error;  // empty when usable
};

Loaded load() {
  Loaded l;
  // Never linked: a machine without the NVIDIA driver just has no "cuda" device.
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.error = std::string("cannot load libcuda.so.1 (") + (e ? e : "unknown error") + ")";
    return l;
  }
  bool ok = true;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn && ok) {
      ok = false;
      l.error = std::string("libcuda.so.1 lacks ") + name;
    }
  };
  Driver& d = l.d;
  sym(d.Init, "cuInit");
  sym(d.DriverGetVersion, "cuDriverGetVersion");
  sym(d.DeviceGetCount, "cuDeviceGetCount");
  sym(d.DeviceGet, "cuDeviceGet");
  sym(d.DeviceGetName, "cuDeviceGetName");
  sym(d.DeviceGetAttribute, "cuDeviceGetAttribute");
  sym(d.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(d.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  sym(d.CtxSetCurrent, "cuCtxSetCurrent");
  sym(d.CtxSynchronize, "cuCtxSynchronize");
  sym(d.ModuleLoadData, "cuModuleLoadData");
  sym(d.ModuleUnload, "cuModuleUnload");
  sym(d.ModuleGetFunction, "cuModuleGetFunction");
  sym(d.MemAlloc, "cuMemAlloc_v2");
  sym(d.MemFree, "cuMemFree_v2");
  sym(d.MemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(d.MemcpyDtoH, "cuMemcpyDtoH_v2");
  sym(d.LaunchKernel, "cuLaunchKernel");
  sym(d.GetErrorString, "cuGetErrorString");
  if (!ok) return l;
  if (Result r = d.Init(0); r != 0) {
    const char* msg = nullptr;
    d.GetErrorString(r, &msg);
    l.error = std::string("cuInit failed: ") + (msg ? msg : "error " + std::to_string(r));
  }
  return l;  // the library stays loaded for the life of the process
}

}  // namespace

const Driver* driver(std::string* why) {
  static const Loaded l = load();
  if (!l.error.empty()) {
    if (why) *why = l.error;
    return nullptr;
  }
  return &l.d;
}

}  // namespace kgen::rt::cu
