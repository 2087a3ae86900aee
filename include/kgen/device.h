// Devices: rt::create_device("cpu" | "cuda" | "vulkan" | "webgpu") opens one
// (throwing, with the reason, where it is unavailable); a Device allocates
// Buffers, compiles kernels and launches them. Compiles go through the kernel
// cache (rt::KernelCache: loaded code in memory, artifacts on disk in
// KGEN_CACHE_DIR), so a kernel compiled once is a lookup afterwards.
#pragma once
#include <memory>
#include <vector>

#include "runtimes/kernel_cache.h"
#include "runtimes/runtime.h"

namespace kgen {

// A buffer on `dev` holding a copy of `host`.
template <class T>
std::unique_ptr<rt::Buffer> upload(rt::Device& dev, const std::vector<T>& host) {
  std::unique_ptr<rt::Buffer> b = dev.alloc(host.size() * sizeof(T));
  if (!host.empty()) b->upload(host.data(), host.size() * sizeof(T));
  return b;
}

// The contents of `b` as elements of T (synchronize the device first).
template <class T>
std::vector<T> download(const rt::Buffer& b) {
  std::vector<T> host(b.bytes() / sizeof(T));
  if (!host.empty()) b.download(host.data(), host.size() * sizeof(T));
  return host;
}

}  // namespace kgen
