// The Vulkan entry points kgen uses, loaded at run time from libvulkan.so.1
// (dlopen + vkGetInstanceProcAddr) so every binary starts on machines without
// a Vulkan loader or driver. One X-macro list declares, loads and names them.
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace kgen::rt::vk {

#define KGEN_VK_GLOBAL_FNS(X) \
  X(vkCreateInstance)         \
  X(vkEnumerateInstanceVersion)

#define KGEN_VK_INSTANCE_FNS(X)               \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define KGEN_VK_DEVICE_FNS(X)       \
  X(vkDestroyDevice)                \
  X(vkGetDeviceQueue)               \
  X(vkCreateBuffer)                 \
  X(vkDestroyBuffer)                \
  X(vkGetBufferMemoryRequirements)  \
  X(vkAllocateMemory)               \
  X(vkFreeMemory)                   \
  X(vkBindBufferMemory)             \
  X(vkMapMemory)                    \
  X(vkUnmapMemory)                  \
  X(vkFlushMappedMemoryRanges)      \
  X(vkInvalidateMappedMemoryRanges) \
  X(vkCreateShaderModule)           \
  X(vkDestroyShaderModule)          \
  X(vkCreateDescriptorSetLayout)    \
  X(vkDestroyDescriptorSetLayout)   \
  X(vkCreatePipelineLayout)         \
  X(vkDestroyPipelineLayout)        \
  X(vkCreateComputePipelines)       \
  X(vkDestroyPipeline)              \
  X(vkCreatePipelineCache)          \
  X(vkDestroyPipelineCache)         \
  X(vkCreateDescriptorPool)         \
  X(vkDestroyDescriptorPool)        \
  X(vkAllocateDescriptorSets)       \
  X(vkUpdateDescriptorSets)         \
  X(vkCreateCommandPool)            \
  X(vkDestroyCommandPool)           \
  X(vkAllocateCommandBuffers)       \
  X(vkResetCommandBuffer)           \
  X(vkBeginCommandBuffer)           \
  X(vkEndCommandBuffer)             \
  X(vkCmdBindPipeline)              \
  X(vkCmdBindDescriptorSets)        \
  X(vkCmdPushConstants)             \
  X(vkCmdDispatch)                  \
  X(vkCmdPipelineBarrier)           \
  X(vkCmdResetQueryPool)            \
  X(vkCmdWriteTimestamp)            \
  X(vkCreateQueryPool)              \
  X(vkDestroyQueryPool)             \
  X(vkGetQueryPoolResults)          \
  X(vkQueueSubmit)                  \
  X(vkCreateFence)                  \
  X(vkDestroyFence)                 \
  X(vkWaitForFences)                \
  X(vkResetFences)                  \
  X(vkDeviceWaitIdle)

struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define KGEN_VK_DECL(name) PFN_##name name = nullptr;
  KGEN_VK_GLOBAL_FNS(KGEN_VK_DECL)
  KGEN_VK_INSTANCE_FNS(KGEN_VK_DECL)
  KGEN_VK_DEVICE_FNS(KGEN_VK_DECL)
#undef KGEN_VK_DECL
};

// The process-wide loader: libvulkan opened once; null (with `why` set) when
// there is no loader. Instance/device functions are filled by load_instance/
// load_device into a copy owned by the device object.
const Api* loader(std::string* why = nullptr);
void load_instance(Api& api, VkInstance inst);
void load_device(Api& api, VkDevice dev);

// Throws std::runtime_error naming the call and the VkResult.
void check(VkResult r, const char* what);

}  // namespace kgen::rt::vk
