// Built instead of vulkan_device.cpp when the Vulkan headers are missing.
#include <stdexcept>

#include "runtimes/vulkan_device.h"

namespace kgen::rt {

bool vulkan_available(std::string* why) {
  if (why) *why = "kgen was built without the Vulkan headers (libvulkan-dev)";
  return false;
}
std::unique_ptr<Device> create_vulkan_device(const DeviceOptions&) {
  throw std::runtime_error("vulkan: kgen was built without the Vulkan headers (libvulkan-dev)");
}
double vulkan_last_kernel_ms(const Device&) { return -1; }

}  // namespace kgen::rt
