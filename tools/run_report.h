// What `kgen run` prints: the summary, the per-output check, the profile
// (time per node and per kernel, sorted), the JSON object and the Chrome trace.
#pragma once
#include <string>
#include <vector>

#include "graph/model_io.h"
#include "graph/prepared_model.h"

namespace kgen::tools {

struct RunReport {
  std::string model, device;
  double load_ms = 0, first_run_ms = 0, run_ms = 0;
  struct Check {
    std::string output;
    graph::OutputCheck c;
  };
  std::vector<Check> checks;
  std::vector<double> launch_ms;  // per launch (profile), empty when not asked
  int64_t top1 = -1;              // a classifier's class (--image, --labels), -1 when none
};

void print_report(const graph::PreparedModel& s, const RunReport& r, const std::vector<graph::Tensor>& outs, bool profile);
// Time per node and per kernel of `ms` (one entry per launch), sorted; the
// replay's overhead over its kernels when run_ms (a whole replay) is given.
void print_profile(const graph::PreparedModel& s, const std::vector<double>& ms, double run_ms);
std::string report_json(const graph::PreparedModel& s, const RunReport& r, bool ok, bool checked);
void write_trace(const graph::PreparedModel& s, const std::vector<double>& launch_ms, const std::string& path);
void write_outputs(const graph::PreparedModel& s, const std::vector<graph::Tensor>& outs, const std::string& dir);
// One tensor as a TensorProto file (input_N.pb / output_N.pb).
void write_tensor_pb(const graph::Tensor& t, const std::string& name, const std::string& path);

}  // namespace kgen::tools
