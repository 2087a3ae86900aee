// Built instead of webgpu_device.cpp/wgpu_validate.cpp when the python `wgpu`
// wheel (wgpu-native + webgpu.h) was not found at configure time.
#include <stdexcept>

#include "runtimes/webgpu_device.h"
#include "runtimes/wgpu_validate.h"

namespace kgen::rt {

namespace {
const char* kWhy = "kgen was built without wgpu-native headers (pip install wgpu, then re-run cmake)";
}

bool webgpu_available(std::string* why) {
  if (why) *why = kWhy;
  return false;
}
std::unique_ptr<Device> create_webgpu_device(const DeviceOptions&) { throw std::runtime_error(std::string("webgpu: ") + kWhy); }
bool wgpu_available(std::string* why) { return webgpu_available(why); }
std::string wgpu_library_path() { return {}; }
std::string validate_wgsl(const std::string&) { throw std::runtime_error(std::string("wgpu unavailable: ") + kWhy); }
std::string wgpu_adapter_name() { return {}; }

}  // namespace kgen::rt
