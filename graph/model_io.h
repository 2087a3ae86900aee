// Model inputs and reference outputs from files: ONNX test data folders
// (input_N.pb / output_N.pb), .pb and .npy tensors; and the comparison of
// outputs with references that `kgen run --test-data` and the tests use.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace kgen::graph {

// A .pb (TensorProto) or .npy file.
Tensor load_tensor_file(const std::string& path);
// DIR/input_*.pb and DIR/output_*.pb in index order.
struct TestData {
  std::vector<Tensor> inputs, outputs;
  std::vector<std::string> input_names, output_names;  // as stored (may be empty)
};
TestData load_test_data(const std::string& dir);
// Fits a tensor to the graph input it feeds: a rank-mismatched tensor with
// the declared element count (symbols as 1) is reshaped to the declaration.
Tensor fit_to_input(const Graph& g, size_t input, Tensor t);

struct OutputCheck {
  double max_abs_err = 0, max_rel_err = 0;
  int64_t mismatches = 0;  // elements outside atol + rtol·|want|
  std::string worst;       // "element 17: got 1.5, expected 1.25"
  bool ok() const { return mismatches == 0; }
};
// Shape and dtype must match; NaN matches NaN only.
OutputCheck compare_tensors(const Tensor& got, const Tensor& want, double rtol, double atol);

}  // namespace kgen::graph
