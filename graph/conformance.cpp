#include "graph/conformance.h"

#include <filesystem>

#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/prepared_model.h"

namespace kgen::graph {

namespace {

using Status = ConformanceResult::Status;

// Runs g on inputs and compares with `want`; fills r.
void run_and_compare(rt::Device& dev, Graph g, const std::vector<Tensor>& inputs, const std::vector<Tensor>& want,
                     ConformanceResult& r) {
  auto s = prepare_for_inputs(dev, g, inputs);
  auto got = s->run(inputs);
  if (got.size() != want.size()) {
    r.status = Status::Failed;
    r.message = std::to_string(got.size()) + " outputs, " + std::to_string(want.size()) + " expected";
    return;
  }
  r.status = Status::Passed;
  for (size_t i = 0; i < got.size(); ++i) {
    auto c = compare_tensors(got[i], want[i], kConformanceRtol, kConformanceAtol);
    r.max_abs_err = std::max(r.max_abs_err, c.max_abs_err);
    if (!c.ok()) {
      r.status = Status::Failed;
      r.message = "output " + std::to_string(i) + " " + c.worst;
    }
  }
}

template <class F>
ConformanceResult guarded(const std::string& name, F&& f) {
  ConformanceResult r;
  r.name = name;
  try {
    f(r);
  } catch (const std::exception& e) {
    r.status = Status::Unsupported;
    r.message = e.what();
  }
  return r;
}

}  // namespace

const char* status_name(Status s) {
  return s == Status::Passed ? "passed" : s == Status::Failed ? "failed" : "unsupported";
}

ConformanceResult run_node_test(rt::Device& dev, const std::string& dir) {
  return guarded(std::filesystem::path(dir).filename().string(), [&](ConformanceResult& r) {
    Graph g = load_onnx(dir + "/model.onnx");
    if (!g.nodes.empty()) r.op = g.nodes.back().op;
    for (int set = 0;; ++set) {
      const std::string d = dir + "/test_data_set_" + std::to_string(set);
      if (!std::filesystem::exists(d)) break;
      TestData td = load_test_data(d);
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < td.inputs.size(); ++i) inputs.push_back(fit_to_input(g, i, td.inputs[i]));
      if (inputs.size() != g.inputs.size())
        throw std::invalid_argument(std::to_string(inputs.size()) + " inputs given, the model takes " + std::to_string(g.inputs.size()));
      run_and_compare(dev, g, inputs, td.outputs, r);
      if (r.status != Status::Passed) return;
    }
  });
}

ConformanceResult run_light_model(rt::Device& dev, const std::string& path) {
  return guarded(std::filesystem::path(path).stem().string(), [&](ConformanceResult& r) {
    Graph g = load_onnx(path);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.values[size_t(g.inputs[i])];
      Shape s;
      for (const Dim& d : v.dims) s.push_back(d.known() ? d.size : 1);
      Tensor t(ScalarKind::F32, s);
      const int64_t n = t.numel();
      for (int64_t k = 0; k < n; ++k) t.set(k, double(float(k) / float(n)));
      inputs.push_back(std::move(t));
    }
    const std::string out = path.substr(0, path.size() - 5) + "_output_0.pb";
    run_and_compare(dev, std::move(g), inputs, {load_tensor_pb(out)}, r);
  });
}

}  // namespace kgen::graph
