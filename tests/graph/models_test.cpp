// The real models of ../shared/models/onnx (MNIST also from samples/) run on
// the CPU and on Vulkan and match their reference outputs; the launch
// counts after fusion are pinned so that fusion cannot silently regress.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/session.h"

using namespace kgen;

namespace {

std::string shared(const std::string& rel) { return std::string(KGEN_SHARED_DIR) + "/models/onnx/" + rel; }
bool have_shared() { return std::filesystem::exists(shared("")); }

struct ModelCase {
  std::string model, inputs;   // inputs: a test data folder
  std::string expected;        // output_0.pb (empty: the folder's own)
  double rtol, atol;
  bool vulkan = true;          // lavapipe runs it within the test budget
};

int64_t argmax(const graph::Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.get(i) > t.get(best)) best = i;
  return best;
}

// Runs the model twice (the second run replays over the first's arena) and
// compares each output; returns the outputs of the last run.
std::vector<graph::Tensor> check_model(rt::Device& dev, const ModelCase& m, graph::SessionStats* stats = nullptr) {
  graph::Graph g = graph::load_onnx(m.model);
  graph::TestData td = graph::load_test_data(m.inputs);
  if (!m.expected.empty()) td.outputs = {graph::load_tensor_file(m.expected)};
  std::vector<graph::Tensor> inputs;
  graph::SessionOptions so;
  for (size_t i = 0; i < td.inputs.size(); ++i) {
    inputs.push_back(graph::fit_to_input(g, i, td.inputs[i]));
    so.input_shapes[g.values[size_t(g.inputs[i])].name] = inputs.back().shape;
  }
  graph::Session s(dev, std::move(g), so);
  std::vector<graph::Tensor> outs;
  for (int rep = 0; rep < 2; ++rep) {
    outs = s.run(inputs);
    REQUIRE(outs.size() == td.outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      auto c = graph::compare_tensors(outs[i], td.outputs[i], m.rtol, m.atol);
      INFO(m.model << " on " << dev.name() << " output " << i << ": max abs " << c.max_abs_err << ", " << c.worst);
      CHECK(c.ok());
    }
  }
  if (stats) *stats = s.stats();
  return outs;
}

std::vector<std::unique_ptr<rt::Device>> devices(bool vulkan) {
  std::vector<std::unique_ptr<rt::Device>> r;
  for (const auto& name : rt::available_devices())
    if (name == "cpu" || (vulkan && name == "vulkan")) r.push_back(rt::create_device(name));
  return r;
}

}  // namespace

TEST_CASE("mnist-8 from samples/ matches its three test sets with its launch count pinned") {
  const std::string dir = std::string(KGEN_SOURCE_DIR) + "/samples/models/mnist-8";
  for (auto& dev : devices(true))
    for (int set = 0; set < 3; ++set) {
      graph::SessionStats st;
      check_model(*dev, {dir + "/model.onnx", dir + "/test_data_set_" + std::to_string(set), "", 1e-3, 1e-3}, &st);
      // Conv+Add+Relu twice (the Add folds into the bias, the Relu is the conv's epilogue),
      // two pools, the Reshape (a view), MatMul+Add.
      CHECK(st.groups == 6);
      CHECK(st.launches <= (dev->name() == "cpu" ? 10 : 5));
    }
}

TEST_CASE("the real ONNX models match their reference outputs") {
  if (!have_shared()) {
    MESSAGE("../shared/models/onnx not found: the real-model checks need it beside the repository");
    return;
  }
  const std::vector<ModelCase> cases = {
      {shared("mnist-12/mnist-12.onnx"), shared("mnist-8/test_data_set_1"), "", 1e-3, 1e-3},
      // Integer convolutions and products are exact: bit-identical to onnxruntime here.
      {shared("mnist-8-int8-dynamic/model.onnx"), shared("mnist-8-int8-dynamic/ort_reference_data_set_2"), "", 1e-5, 1e-5},
      {shared("super-resolution-10/model.onnx"), shared("super-resolution-10/test_data_set_0"), "", 1e-3, 1e-4, false},
      // f16 weights and activations, computed in f32: within f16 rounding of onnxruntime's.
      {shared("squeezenet1.0-fp16/SqueezeNet_fp16.onnx"), shared("squeezenet1.0-fp16/ort_reference_data_set_0"), "", 1e-2, 1e-3, false},
  };
  for (auto& dev : devices(true))
    for (const auto& m : cases)
      if (m.vulkan || dev->name() == "cpu") check_model(*dev, m);
}

TEST_CASE("mobilenetv2-12-int8 matches the exact reference within requantization ties, and onnxruntime's top-1") {
  if (!have_shared()) return;
  const std::string data = std::string(KGEN_SOURCE_DIR) + "/tests/graph/data/mobilenetv2-12-int8";
  auto dev = rt::create_device("cpu");
  for (int set = 0; set < 2; ++set) {
    const std::string in = shared("mobilenetv2-12-int8/ort_reference_data_set_" + std::to_string(set));
    // kgen requantizes in f32 as onnxruntime does, the reference in f64: ties
    // round apart in a few elements per layer and spread over 50 layers, to
    // at most ~11 output steps (0.16) on logits of up to 20.
    const std::string exact = data + "/exact_output_" + std::to_string(set) + ".pb";
    auto outs = check_model(*dev, {shared("mobilenetv2-12-int8/mobilenetv2-12-int8.onnx"), in, exact, 0, 2.0});
    CHECK(argmax(outs[0]) == argmax(graph::load_tensor_pb(exact)));
    CHECK(argmax(outs[0]) == argmax(graph::load_tensor_pb(in + "/output_0.pb")));
  }
}
