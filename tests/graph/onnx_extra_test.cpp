// Node tests beyond ONNX's own backend data, in its layout (model.onnx +
// test_data_set_0): recurrences in every direction and layout, with and
// without bias, initial states, peepholes and constant weights; TopK at
// opsets 1 and 10, integer and f64 inputs, k = 0 and ties. Written by
// scripts/make-test-recurrent.py and scripts/make-test-topk.py (outputs from
// onnx.reference and NumPy); each runs on the CPU and on Vulkan where present.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "graph/conformance.h"

using namespace kgen;

namespace {

std::vector<std::string> extra_tests() {
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(KGEN_SOURCE_DIR) + "/tests/graph/data/onnx-extra"))
    if (e.is_directory()) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

void check_all(rt::Device& dev) {
  const std::vector<std::string> dirs = extra_tests();
  CHECK(dirs.size() >= 20);
  for (const std::string& d : dirs) {
    const graph::ConformanceResult r = graph::run_node_test(dev, d);
    INFO(dev.name() << " " << r.name << ": " << graph::status_name(r.status) << " " << r.message);
    CHECK(r.status == graph::ConformanceResult::Status::Passed);
  }
}

}  // namespace

TEST_CASE("recurrences and TopK beyond ONNX's node tests: cpu") {
  auto dev = rt::create_device("cpu");
  check_all(*dev);
}

TEST_CASE("recurrences and TopK beyond ONNX's node tests: vulkan") {
  auto names = rt::available_devices();
  if (std::find(names.begin(), names.end(), "vulkan") == names.end()) {
    MESSAGE("no vulkan device: skipped");
    return;
  }
  auto dev = rt::create_device("vulkan");
  check_all(*dev);
}
