#include "tools/run_report.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "graph/onnx/tensor_proto.h"
#include "tools/json_writer.h"

namespace kgen::tools {

namespace {

void print_stats(const graph::PrepareStats& st) {
  std::printf("graph: %d nodes -> %d live (%d folded, %d BN into Conv, %d dead) -> %d fused groups -> %d launches, %d distinct kernels\n",
              st.model_nodes, st.nodes, st.folded, st.bn_folded, st.dead, st.groups, st.launches, st.kernels);
  std::printf("compile: %.1f ms (%d compiled, %d cache hits); arena %.2f MB (%.2f MB without reuse, %d outputs in place), constants %.2f MB\n",
              st.compile_ms, st.kernels_compiled, st.cache_hits, double(st.arena_bytes) / 1e6,
              double(st.unshared_bytes) / 1e6, st.in_place, double(st.constant_bytes) / 1e6);
  std::printf("prepare: passes %.1f ms, plan %.1f ms (%s), lowering %.1f ms, kernels %.1f ms, placement %.1f ms\n",
              st.passes_ms, st.plan_ms, st.plan_cached ? "cached" : "lowered", st.lower_ms, st.kernels_ms, st.place_ms);
}

void print_sorted(const char* title, const std::map<std::string, std::pair<double, int>>& m, double total) {
  std::vector<std::pair<std::string, std::pair<double, int>>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
  std::printf("%s\n", title);
  for (auto& [name, t] : v)
    std::printf("  %8.3f ms %5.1f%%  %3dx  %s\n", t.first, total > 0 ? 100 * t.first / total : 0.0, t.second, name.c_str());
}


std::string top_classes(const graph::Tensor& t) {
  if (t.numel() < 2 || t.numel() > 100000) return "";
  std::vector<int64_t> idx(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) idx[size_t(i)] = i;
  const size_t k = std::min<size_t>(5, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + long(k), idx.end(), [&](int64_t a, int64_t b) { return t.get(a) > t.get(b); });
  std::string r = "top:";
  char buf[64];
  for (size_t i = 0; i < k; ++i) {
    std::snprintf(buf, sizeof buf, " %lld (%.4g)", (long long)idx[i], t.get(idx[i]));
    r += buf;
  }
  return r;
}

}  // namespace

void print_profile(const graph::PreparedModel& s, const std::vector<double>& ms, double run_ms) {
  std::map<std::string, std::pair<double, int>> by_node, by_kernel;
  double total = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto& l = s.program().launches[i];
    auto& n = by_node[l.label];
    n.first += ms[i];
    n.second++;
    auto& k = by_kernel[l.step.kernel.name];
    k.first += ms[i];
    k.second++;
    total += ms[i];
  }
  std::printf("profile: %.3f ms over %zu launches, each synchronized\n", total, ms.size());
  // What a replay adds to its kernels: input copies, launch bookkeeping,
  // output copies (the launches' own synchronizations count as kernel time).
  if (!ms.empty() && run_ms > 0)
    std::printf("replay overhead: run %.3f ms - launches %.3f ms = %.2f us per launch\n", run_ms, total,
                std::max(0.0, run_ms - total) * 1000.0 / double(ms.size()));
  print_sorted("by node:", by_node, total);
  print_sorted("by kernel:", by_kernel, total);
}

void print_report(const graph::PreparedModel& s, const RunReport& r, const std::vector<graph::Tensor>& outs, bool profile) {
  std::printf("%s on %s: load %.1f ms, prepare %.1f ms, first run %.3f ms, run %.3f ms (median)\n", r.model.c_str(),
              s.device().description().c_str(), r.load_ms, s.stats().prepare_ms, r.first_run_ms, r.run_ms);
  print_stats(s.stats());
  for (size_t i = 0; i < outs.size(); ++i)
    std::printf("output '%s' %s%s %s\n", s.output(i).name.c_str(), std::string(ir::scalar_name(outs[i].dtype)).c_str(),
                graph::shape_str(outs[i].shape).c_str(), top_classes(outs[i]).c_str());
  for (const auto& c : r.checks)
    std::printf("check '%s': max abs err %.3g, max rel err %.3g: %s%s\n", c.output.c_str(), c.c.max_abs_err, c.c.max_rel_err,
                c.c.ok() ? "OK" : "FAIL", c.c.ok() ? "" : (" (" + std::to_string(c.c.mismatches) + " mismatches; worst " + c.c.worst + ")").c_str());
  if (profile) print_profile(s, r.launch_ms, r.run_ms);
}

std::string report_json(const graph::PreparedModel& s, const RunReport& r, bool ok, bool checked) {
  const auto& st = s.stats();
  double abs_err = 0, rel_err = 0;
  for (const auto& c : r.checks) abs_err = std::max(abs_err, c.c.max_abs_err), rel_err = std::max(rel_err, c.c.max_rel_err);
  JsonObject j;
  j.add("model", r.model).add("device", r.device).add("ok", ok).add("checked", checked);
  j.add("max_abs_err", abs_err).add("max_rel_err", rel_err);
  j.add("load_ms", r.load_ms).add("prepare_ms", st.prepare_ms).add("compile_ms", st.compile_ms);
  j.add("plan_cached", st.plan_cached).add("plan_ms", st.plan_ms);
  j.add("passes_ms", st.passes_ms).add("lower_ms", st.lower_ms).add("kernels_ms", st.kernels_ms).add("place_ms", st.place_ms);
  j.add("cache_hits", int64_t(st.cache_hits)).add("kernels_compiled", int64_t(st.kernels_compiled));
  j.add("kernels", int64_t(st.kernels)).add("nodes", int64_t(st.nodes)).add("groups", int64_t(st.groups));
  j.add("launches", int64_t(st.launches)).add("arena_bytes", int64_t(st.arena_bytes)).add("in_place", int64_t(st.in_place));
  j.add("first_run_ms", r.first_run_ms).add("run_ms", r.run_ms);
  if (r.top1 >= 0) j.add("top1", r.top1);
  return j.str();
}

void write_trace(const graph::PreparedModel& s, const std::vector<double>& ms, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write '" + path + "'");
  f << "{\"traceEvents\": [\n";
  double ts = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto& l = s.program().launches[i];
    f << (i ? ",\n" : "") << "{\"name\": \"" << json_escape(l.label) << "\", \"cat\": \"" << json_escape(l.step.kernel.name)
      << "\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": " << ts * 1000 << ", \"dur\": " << ms[i] * 1000
      << ", \"args\": {\"kernel\": \"" << json_escape(l.step.kernel.name) << "\"}}";
    ts += ms[i];
  }
  f << "\n]}\n";
}

void write_tensor_pb(const graph::Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto p;
  graph::tensor_to_proto(t, name, p);
  std::ofstream f(path, std::ios::binary);
  if (!f || !p.SerializeToOstream(&f)) throw std::runtime_error("cannot write " + path);
}

void write_outputs(const graph::PreparedModel& s, const std::vector<graph::Tensor>& outs, const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < outs.size(); ++i) write_tensor_pb(outs[i], s.output(i).name, dir + "/output_" + std::to_string(i) + ".pb");
}

}  // namespace kgen::tools
