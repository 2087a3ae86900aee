// The ONNX backend test data as conformance tests: a test folder
// (model.onnx + test_data_set_N/) or a light model (light_<net>.onnx, input
// arange(N)/N, expected light_<net>_output_0.pb) is run on a device and
// classified as passed, failed (with the largest error) or unsupported
// (with the error that names the node and what is missing).
#pragma once
#include <string>
#include <vector>

#include "runtimes/runtime.h"

namespace kgen::graph {

struct ConformanceResult {
  enum class Status { Passed, Failed, Unsupported } status = Status::Unsupported;
  std::string name;     // the test folder's or model's name
  std::string op;       // the op type under test (the first node's), "" for models
  std::string message;  // failure: the worst element; unsupported: the error
  double max_abs_err = 0;
};

// ONNX's backend tests compare with rtol 1e-3, atol 1e-7; kgen's float
// kernels use fast exp/tanh approximations, hence a slightly larger atol.
inline constexpr double kConformanceRtol = 1e-3, kConformanceAtol = 1e-5;

ConformanceResult run_node_test(rt::Device& dev, const std::string& test_dir);
ConformanceResult run_light_model(rt::Device& dev, const std::string& onnx_path);
const char* status_name(ConformanceResult::Status s);

}  // namespace kgen::graph
