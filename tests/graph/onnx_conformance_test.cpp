// Every ONNX backend test that passes (tests/graph/onnx_passing.txt, written
// by `kgen conformance ../shared/onnx-node-tests --passing FILE`) keeps
// passing on the CPU: a conformance regression fails here, naming the test.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "graph/conformance.h"

using namespace kgen;

TEST_CASE("the passing ONNX backend tests still pass on the cpu") {
  const std::string root = std::string(KGEN_SHARED_DIR) + "/onnx-node-tests";
  if (!std::filesystem::exists(root)) {
    MESSAGE("../shared/onnx-node-tests not found: the conformance regression test needs it beside the repository");
    return;
  }
  std::ifstream list(std::string(KGEN_SOURCE_DIR) + "/tests/graph/onnx_passing.txt");
  REQUIRE(list);
  auto dev = rt::create_device("cpu");
  int n = 0;
  for (std::string name; std::getline(list, name);) {
    if (name.empty() || name[0] == '#') continue;
    const auto r = name.rfind("light/", 0) == 0 ? graph::run_light_model(*dev, root + "/" + name + ".onnx")
                                                 : graph::run_node_test(*dev, root + "/" + name);
    INFO(name << ": " << graph::status_name(r.status) << " " << r.message);
    CHECK(r.status == graph::ConformanceResult::Status::Passed);
    ++n;
  }
  MESSAGE(n << " backend tests checked");
}
