// ONNX models into graph::Graph, through Debian's protobuf and the onnx.proto
// schema of libonnx-dev. Every malformed or unsupported construct is a
// graph::ModelError saying what and where; nothing is trusted (fuzzed by
// tests/graph/onnx_fuzz_test.cpp).
#pragma once
#include <stdexcept>
#include <string>

#include "graph/graph.h"

namespace kgen::graph {

// A model file that cannot be read as it is: what and where.
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `path`: an .onnx file; external data is read relative to its folder.
Graph load_onnx(const std::string& path);
// The model bytes; `dir` resolves external data ("" forbids it).
Graph parse_onnx(const void* data, size_t bytes, const std::string& dir, const std::string& what);
// A serialized TensorProto (the backend tests' input_0.pb / output_0.pb).
Tensor load_tensor_pb(const std::string& path, std::string* name = nullptr);

}  // namespace kgen::graph
