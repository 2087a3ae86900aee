// The row-wise twins (samples/cpp/rowwise.cpp, rowwise_gpu.cpp) against the
// op library's DSL kernels of the same names: the same signature and op
// census after the passes, and the same bits in every buffer through the
// interpreter on odd shapes, outputs poisoned (each twin computes with the
// same operations in the same order).
#include <doctest/doctest.h>

#include <map>

#include "dsl/registry.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ops/rowwise/rowwise.h"
#include "runtimes/check.h"
#include "translate_test_util.h"

using namespace kgen;
using namespace kgen::translate::testing;

namespace {
// Buffers (element type, access), scalars and the workgroup.
std::string signature(const ir::Kernel& k) {
  std::string s;
  for (const auto& b : k.buffers) s += b.name + ":" + b.elem.str() + " " + std::string(ir::access_name(b.access)) + ", ";
  for (const auto& p : k.scalars) s += p.name + ":" + p.type.str() + ", ";
  return s + "wg " + std::to_string(k.workgroup_size[0]) + "x" + std::to_string(k.workgroup_size[1]);
}

// How often each op occurs after the passes (see samples_test.cpp).
std::string census(ir::Kernel k) {
  ir::default_pipeline().run(k);
  std::map<std::string, int> count;
  ir::walk(k.body, [&](const ir::Instr& in) {
    ++count[std::string(ir::op_name(in.op)) + ":" + in.type.str() + (in.attr && in.op == ir::Op::Prefetch ? " w" : "")];
  });
  std::string s;
  for (const auto& [op, n] : count) s += op + " x" + std::to_string(n) + "\n";
  return s;
}

// Runs k on copies of `in` and returns the buffers' bytes afterwards.
std::vector<std::vector<uint8_t>> run_bytes(const ir::Kernel& k, const ir::Workload& w, rt::HostData in) {
  std::vector<ir::InterpBuffer> ib;
  for (auto& b : in.buffers) ib.push_back({b.data(), b.size()});
  ir::interpret(k, w.dims, ib, w.scalars);
  return in.buffers;
}

// Every kernel of a sample file, by name (one clang parse per file).
const ir::Kernel& twin(const std::string& file, const std::string& name) {
  static std::map<std::string, std::map<std::string, ir::Kernel>> files;
  if (!files.count(file))
    for (ir::Kernel& k : translate::translate_file(sample_path(file))) files[file][k.name] = std::move(k);
  auto it = files[file].find(name);
  if (it == files[file].end()) throw std::runtime_error(file + " has no kernel " + name);
  return it->second;
}

// The twin of the registered kernel `name` in `file` on rows x cols shapes.
void check_twin(const std::string& file, const std::string& name, std::initializer_list<std::pair<int64_t, int64_t>> shapes) {
  CAPTURE(name);
  const dsl::KernelEntry* entry = dsl::find_kernel(name);
  REQUIRE(entry != nullptr);
  const ir::Kernel& cpp = twin(file, name);
  ir::Kernel dsl = entry->build();
  CHECK(signature(cpp) == signature(dsl));
  CHECK(census(cpp) == census(dsl));
  for (auto [rows, cols] : shapes) {
    CAPTURE(rows);
    CAPTURE(cols);
    ir::Workload w = entry->workload(ops::pack_shape(rows, cols));
    rt::HostData in = rt::make_inputs(dsl, w, uint64_t(rows * 131 + cols));
    std::vector<std::vector<uint8_t>> got = run_bytes(cpp, w, in), want = run_bytes(dsl, w, in);
    REQUIRE(got.size() == want.size());
    for (size_t b = 0; b < got.size(); ++b) {
      INFO("buffer " << dsl.buffers[b].name);
      CHECK(got[b] == want[b]);
    }
    // A written output no longer holds the poison it started with.
    for (size_t b = 0; b < got.size(); ++b)
      if (dsl.buffers[b].name == "y") CHECK(got[b] != in.buffers[b]);
  }
}

struct Registered {
  Registered() { ops::register_all(); }
} registered;
}  // namespace

TEST_CASE("rowwise.cpp: lines of 16 are the DSL kernels, bit for bit") {
  for (const char* k : {"softmax_rows_pf_f32_l16", "softmax_online_rows_f32_l16", "log_softmax_rows_pf_f32_l16",
                        "rmsnorm_rows_f32_l16", "layernorm_rows_f32_l16"})
    check_twin("rowwise.cpp", k, {{1, 16}, {3, 48}, {67, 80}});
}

TEST_CASE("rowwise.cpp: the scalar forms are the DSL kernels, bit for bit") {
  for (const char* k : {"softmax_rows_f32", "softmax_online_rows_f32", "log_softmax_rows_f32", "rmsnorm_rows_f32",
                        "layernorm_rows_f32"})
    check_twin("rowwise.cpp", k, {{1, 1}, {3, 17}, {67, 33}});
}

TEST_CASE("rowwise.cpp: the masked-tail forms are the DSL kernels, bit for bit") {
  for (const char* k : {"softmax_rows_pf_f32_l16_tail", "log_softmax_rows_pf_f32_l16_tail", "rmsnorm_rows_f32_l16_tail",
                        "layernorm_rows_f32_l16_tail"})
    check_twin("rowwise.cpp", k, {{1, 16}, {3, 17}, {2, 31}, {67, 33}, {2, 64}});
}

TEST_CASE("rowwise.cpp: the streaming forms are the DSL kernels, bit for bit, and stream") {
  for (const char* k : {"softmax_rows_pf_stream_f32_l16", "softmax_online_rows_stream_f32_l16",
                        "log_softmax_rows_pf_stream_f32_l16", "rmsnorm_rows_stream_f32_l16", "layernorm_rows_stream_f32_l16"}) {
    check_twin("rowwise.cpp", k, {{1, 16}, {3, 48}, {67, 80}});
    int streamed = 0;
    ir::walk(twin("rowwise.cpp", k).body, [&](const ir::Instr& in) { streamed += ir::is_nontemporal_store(in); });
    CHECK(streamed > 0);
  }
}

TEST_CASE("rowwise_gpu.cpp: subgroup and shared-tree GPU forms are the DSL kernels, bit for bit") {
  for (const char* k : {"softmax_rows_gpu_sg_f32_wg64", "softmax_rows_gpu_f32_wg64", "log_softmax_rows_gpu_sg_f32_wg64",
                        "rmsnorm_rows_gpu_f32_wg64", "layernorm_rows_gpu_sg_f32_wg64"})
    check_twin("rowwise_gpu.cpp", k, {{1, 1}, {3, 17}, {2, 200}});
}
