// Shared by the llama runner tests: greedy decoding and the devices to run on.
#pragma once
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "graph/llama/runner.h"
#include "runtimes/runtime.h"

namespace kgen::test {

inline int32_t argmax(const std::vector<float>& v) { return int32_t(std::max_element(v.begin(), v.end()) - v.begin()); }

// n tokens by argmax, one step each, starting by feeding `first`.
inline std::vector<int32_t> greedy(graph::llama::Runner& r, int32_t first, size_t n) {
  std::vector<int32_t> out;
  int32_t tok = first;
  for (size_t i = 0; i < n; ++i) {
    tok = argmax(r.forward(std::span<const int32_t>(&tok, 1)));
    out.push_back(tok);
  }
  return out;
}

// The CPU and, where present, Vulkan (lavapipe in CI).
inline std::vector<std::unique_ptr<rt::Device>> llama_devices() {
  std::vector<std::unique_ptr<rt::Device>> r;
  for (const auto& name : rt::available_devices())
    if (name == "cpu" || name == "vulkan") r.push_back(rt::create_device(name));
  return r;
}

}  // namespace kgen::test
