#include "runtimes/vulkan_api.h"

#include <dlfcn.h>

#include <stdexcept>

namespace kgen::rt::vk {

const Api* loader(std::string* why) {
  // Opened once and never closed: drivers register atexit handlers.
  static std::string error;
  static const Api* api = [] () -> const Api* {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = std::string("no Vulkan loader (libvulkan.so.1): ") + dlerror();
      return nullptr;
    }
    static Api a;
    a.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!a.vkGetInstanceProcAddr) {
      error = "libvulkan.so.1 has no vkGetInstanceProcAddr";
      return nullptr;
    }
#define KGEN_VK_LOAD(name) a.name = reinterpret_cast<PFN_##name>(a.vkGetInstanceProcAddr(nullptr, #name));
    KGEN_VK_GLOBAL_FNS(KGEN_VK_LOAD)
#undef KGEN_VK_LOAD
    if (!a.vkCreateInstance) {
      error = "libvulkan.so.1 has no vkCreateInstance";
      return nullptr;
    }
    return &a;
  }();
  if (!api && why) *why = error;
  return api;
}

void load_instance(Api& a, VkInstance inst) {
#define KGEN_VK_LOAD(name) a.name = reinterpret_cast<PFN_##name>(a.vkGetInstanceProcAddr(inst, #name));
  KGEN_VK_INSTANCE_FNS(KGEN_VK_LOAD)
#undef KGEN_VK_LOAD
}

void load_device(Api& a, VkDevice dev) {
#define KGEN_VK_LOAD(name) a.name = reinterpret_cast<PFN_##name>(a.vkGetDeviceProcAddr(dev, #name));
  KGEN_VK_DEVICE_FNS(KGEN_VK_LOAD)
#undef KGEN_VK_LOAD
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string("vulkan: ") + what + " failed (VkResult " + std::to_string(int(r)) + ")");
}

}  // namespace kgen::rt::vk
