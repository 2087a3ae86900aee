// The prepared-model (plan) cache: a second prepare in a fresh cache directory
// reads the plan instead of lowering, and runs bit-identically to the first
// (and within tolerance of the model's reference outputs); a damaged plan file
// is detected and rebuilt; anything lowering depends on changes the key; a
// plan naming kernels the cache no longer has falls back to lowering.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/plan_cache.h"
#include "graph/plan_codec.h"
#include "graph/prepared_model.h"
#include "runtimes/kernel_cache.h"

using namespace kgen;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("kgen_plan_cache_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bool have_cpu() {
  for (const std::string& d : rt::available_devices())
    if (d == "cpu") return true;
  return false;
}

std::string source(const std::string& rel) { return std::string(KGEN_SOURCE_DIR) + "/" + rel; }

// A CPU device over its own compile cache (and so its own plan directory).
struct CachedCpu {
  rt::KernelCache cache;
  std::unique_ptr<rt::Device> dev;
  explicit CachedCpu(const fs::path& dir, unsigned threads = 1) : cache(rt::CacheConfig{true, dir}) {
    rt::DeviceOptions o;
    o.threads = threads;
    o.cache = &cache;
    dev = rt::create_device("cpu", o);
  }
};

struct Model {
  graph::Graph g;
  std::vector<graph::Tensor> inputs, expected;
};

Model load_model(const std::string& onnx, const std::string& data) {
  Model m{graph::load_onnx(onnx), {}, {}};
  graph::TestData td = graph::load_test_data(data);
  for (size_t i = 0; i < td.inputs.size(); ++i) m.inputs.push_back(graph::fit_to_input(m.g, i, td.inputs[i]));
  m.expected = td.outputs;
  return m;
}

std::vector<fs::path> plan_files(const fs::path& cache_dir) {
  std::vector<fs::path> r;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_dir / "plans", ec))
    if (e.path().extension() == ".kgp") r.push_back(e.path());
  return r;
}

// Inputs of the model's types and shapes, random: a run on them leaves other
// values in every buffer, so a plan that skipped a launch cannot pass.
std::vector<graph::Tensor> poison_inputs(const std::vector<graph::Tensor>& real) {
  std::mt19937 rng(7);
  std::vector<graph::Tensor> r;
  for (const graph::Tensor& t : real) {
    graph::Tensor p = t;
    const bool is_int = !ir::Type(t.dtype).is_float();
    // Integer inputs (TopK's k, fixed at prepare) keep their values.
    if (!is_int)
      for (int64_t i = 0; i < p.numel(); ++i) p.set(i, std::uniform_real_distribution<double>(-3, 3)(rng));
    r.push_back(std::move(p));
  }
  return r;
}

void check_identical(const std::vector<graph::Tensor>& got, const std::vector<graph::Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    REQUIRE(got[i].dtype == want[i].dtype);
    REQUIRE(got[i].shape == want[i].shape);
    CHECK(std::memcmp(got[i].data(), want[i].data(), got[i].bytes()) == 0);
  }
}

void check_reference(const std::vector<graph::Tensor>& got, const std::vector<graph::Tensor>& want, double tol) {
  REQUIRE(got.size() >= want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const graph::OutputCheck c = graph::compare_tensors(got[i], want[i], tol, tol);
    INFO("output " << i << ": max abs " << c.max_abs_err << ", " << c.worst);
    CHECK(c.ok());
  }
}

// Prepares the model twice in one fresh cache directory: the first lowers and
// writes a plan, the second reads it, is poisoned by a run on other inputs,
// then must match the first bit for bit.
void check_second_prepare_hits(const Model& m, double tol) {
  TempDir dir;
  CachedCpu cpu(dir.path);
  auto first = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
  CHECK_FALSE(first->stats().plan_cached);
  CHECK(first->stats().lower_ms > 0);
  const std::vector<graph::Tensor> want = first->run(m.inputs);
  check_reference(want, m.expected, tol);
  REQUIRE(plan_files(dir.path).size() == 1);

  auto second = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
  CHECK(second->stats().plan_cached);
  CHECK(second->stats().lower_ms == 0);
  CHECK(second->stats().launches == first->stats().launches);
  CHECK(second->stats().kernels == first->stats().kernels);
  CHECK(second->stats().arena_bytes == first->stats().arena_bytes);
  second->run(poison_inputs(m.inputs));
  check_identical(second->run(m.inputs), want);

  // A new process (a new device and cache object over the same directory).
  CachedCpu again(dir.path);
  auto third = graph::prepare_for_inputs(*again.dev, m.g, m.inputs);
  CHECK(third->stats().plan_cached);
  CHECK(third->stats().kernels_compiled == 0);
  third->run(poison_inputs(m.inputs));
  check_identical(third->run(m.inputs), want);
}

Model mnist() {
  const std::string dir = source("samples/models/mnist-8");
  return load_model(dir + "/model.onnx", dir + "/test_data_set_0");
}

Model node_test(const std::string& name) {
  const std::string dir = source("tests/graph/data/onnx-extra/" + name);
  return load_model(dir + "/model.onnx", dir + "/test_data_set_0");
}

}  // namespace

TEST_CASE("a second prepare reads the plan and runs bit-identically: mnist-8 and node tests") {
  if (!have_cpu()) {
    MESSAGE("no cpu device (built without the C++ JIT): skipped");
    return;
  }
  SUBCASE("mnist-8 (graph constants and a folded bias)") { check_second_prepare_hits(mnist(), 1e-3); }
  SUBCASE("an LSTM with constant weights (constants the lowering makes)") {
    check_second_prepare_hits(node_test("test_lstm_const_weights"), 1e-4);
  }
  SUBCASE("TopK with k as an input (fixed at prepare)") {
    check_second_prepare_hits(node_test("test_topk_opset10_axis0"), 0);
  }
}

TEST_CASE("a truncated, corrupt or foreign plan file is rebuilt") {
  if (!have_cpu()) return;
  const Model m = mnist();
  TempDir dir;
  CachedCpu cpu(dir.path);
  const std::vector<graph::Tensor> want = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs)->run(m.inputs);
  REQUIRE(plan_files(dir.path).size() == 1);
  const fs::path plan = plan_files(dir.path)[0];
  std::string good;
  {
    std::ifstream f(plan, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(f), {});
  }
  REQUIRE(good.size() > 128);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  const std::vector<std::pair<const char*, std::string>> damaged = {
      {"empty", ""},
      {"truncated header", good.substr(0, 10)},
      {"truncated payload", good.substr(0, good.size() / 2)},
      {"a flipped bit", flipped},
      {"bad magic", bad_magic},
      {"trailing garbage", good + "garbage"},
  };
  for (const auto& [what, bytes] : damaged) {
    INFO(what);
    {
      std::ofstream f(plan, std::ios::binary | std::ios::trunc);
      f << bytes;
    }
    auto s = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
    CHECK_FALSE(s->stats().plan_cached);
    check_identical(s->run(m.inputs), want);
    // Rebuilt: the next prepare reads it again.
    CHECK(graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs)->stats().plan_cached);
  }
}

TEST_CASE("decoding a plan whose structure is damaged (checksum made valid) throws, never crashes") {
  if (!have_cpu()) return;
  const Model m = mnist();
  TempDir dir;
  CachedCpu cpu(dir.path);
  auto s = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
  const std::optional<graph::PlanKey> key = graph::plan_key(s->graph(), *cpu.dev, {});
  REQUIRE(key);
  std::string good;
  {
    std::ifstream f(plan_files(dir.path).at(0), std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(f), {});
  }
  uint64_t structure;
  std::memcpy(&structure, good.data() + 32, 8);
  REQUIRE(structure < good.size());
  auto* buf = static_cast<uint8_t*>(std::aligned_alloc(64, (good.size() + 63) / 64 * 64));
  std::shared_ptr<const void> owner(buf, std::free);
  int decoded = 0, rejected = 0, bad_index = 0;
  for (size_t at = 64; at < 64 + structure; ++at)
    for (uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::memcpy(buf, good.data(), good.size());
      buf[at] ^= x;
      const uint64_t sum = graph::hash_bytes(buf + 64, good.size() - 64, 0x6b67656e706c616eull);
      std::memcpy(buf + 24, &sum, 8);
      try {
        const graph::CachedPlan p = graph::decode_plan(buf, good.size(), owner, key->text, s->graph());
        // Accepted: every index it holds is in range (a changed size or scalar is not detectable).
        for (const graph::Launch& l : p.program.launches)
          for (int b : l.step.buffers) bad_index += b < 0 || size_t(b) >= p.program.slots.size();
        ++decoded;
      } catch (const graph::PlanFormatError&) {
        ++rejected;
      }
    }
  MESSAGE(decoded << " damaged structures decoded, " << rejected << " rejected");
  CHECK(rejected > 0);
  CHECK(bad_index == 0);
  // The undamaged file decodes, to the prepared model's own program.
  std::memcpy(buf, good.data(), good.size());
  const graph::CachedPlan p = graph::decode_plan(buf, good.size(), owner, key->text, s->graph());
  CHECK(p.program.launches.size() == s->program().launches.size());
  CHECK(p.program.slots.size() == s->program().slots.size());
  CHECK_THROWS_AS(graph::decode_plan(buf, good.size(), owner, key->text + "x", s->graph()), graph::PlanFormatError);
}

// y = x + w for x of shape [N, 8] (N symbolic) and a constant w of 8 floats.
graph::Graph add_model() {
  graph::Graph g;
  g.opsets[""] = 13;
  graph::Value x;
  x.name = "x";
  x.dims = {graph::Dim{-1, "N"}, graph::Dim{8, ""}};
  graph::Value w;
  w.name = "w";
  w.constant = graph::Tensor(ir::ScalarKind::F32, {8});
  for (int i = 0; i < 8; ++i) w.constant->set(i, 0.25 * i);
  graph::Value y;
  y.name = "y";
  y.producer = 0;
  graph::Node add;
  add.name = "add";
  add.op = "Add";
  add.opset = 13;
  add.inputs = {g.add_value(x), g.add_value(w)};
  add.outputs = {g.add_value(y)};
  g.nodes.push_back(add);
  g.inputs = {add.inputs[0]};
  g.outputs = {add.outputs[0]};
  return g;
}

TEST_CASE("the plan key changes with input shapes, constants, compile options and the device's threads") {
  if (!have_cpu()) return;
  TempDir dir;
  CachedCpu one(dir.path, 1), two(dir.path, 2);
  const graph::Graph g = add_model();
  // The key of the graph after the passes for this batch.
  auto key_for = [&](graph::Graph model, int64_t batch, rt::Device& dev, rt::CompileOptions opt = {}) {
    graph::PrepareOptions so;
    so.input_shapes["x"] = {batch, 8};
    graph::PreparedModel s(dev, std::move(model), so);
    return graph::plan_key(s.graph(), dev, opt).value().text;
  };
  const std::string base = key_for(g, 1, *one.dev);
  CHECK(key_for(g, 1, *one.dev) == base);  // deterministic
  CHECK(key_for(g, 2, *one.dev) != base);
  CHECK(key_for(g, 1, *two.dev) != base);
  rt::CompileOptions o1;
  o1.opt_level = 1;
  CHECK(key_for(g, 1, *one.dev, o1) != base);
  rt::CompileOptions indep;
  indep.assume_independent_items = true;
  CHECK(key_for(g, 1, *one.dev, indep) != base);
  graph::Graph edited = g;
  edited.values[1].constant->set(7, 0.25 * 7 + 1e-6);
  CHECK(key_for(edited, 1, *one.dev) != base);
  graph::Graph renamed = g;
  renamed.nodes[0].name = "sum";  // launch labels name nodes
  CHECK(key_for(renamed, 1, *one.dev) != base);

  // And a plan of one batch is not read for another: both run correctly.
  for (int64_t batch : {1, 2, 1}) {
    graph::Tensor x(ir::ScalarKind::F32, {batch, 8});
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(i));
    auto s = graph::prepare_for_inputs(*one.dev, g, {x});
    CHECK(s->stats().plan_cached);  // key_for prepared both batches
    const graph::Tensor y = s->run({x}).at(0);
    REQUIRE(y.shape == graph::Shape{batch, 8});
    for (int64_t i = 0; i < y.numel(); ++i) CHECK(y.get(i) == double(i) + 0.25 * double(i % 8));
  }
}

TEST_CASE("KGEN_PLAN_CACHE=0 turns the plan cache off; missing kernels fall back to lowering; clear removes plans") {
  if (!have_cpu()) return;
  const Model m = mnist();
  TempDir dir;
  CachedCpu cpu(dir.path);
  ::setenv("KGEN_PLAN_CACHE", "0", 1);
  auto off = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
  ::unsetenv("KGEN_PLAN_CACHE");
  CHECK_FALSE(off->stats().plan_cached);
  CHECK(plan_files(dir.path).empty());
  const std::vector<graph::Tensor> want = off->run(m.inputs);

  auto writes = graph::prepare_for_inputs(*cpu.dev, m.g, m.inputs);
  CHECK_FALSE(writes->stats().plan_cached);
  REQUIRE(plan_files(dir.path).size() == 1);
  // The aliases from raw kernels to their code gone (a cache cleared in part):
  // a new process reads the plan, cannot load its kernels, and lowers.
  for (const auto& e : fs::recursive_directory_iterator(dir.path / "v1"))
    if (e.path().extension() == ".kga") fs::remove(e.path());
  CachedCpu fresh(dir.path);
  auto fallback = graph::prepare_for_inputs(*fresh.dev, m.g, m.inputs);
  CHECK_FALSE(fallback->stats().plan_cached);
  CHECK(fallback->stats().lower_ms > 0);
  check_identical(fallback->run(m.inputs), want);
  CachedCpu later(dir.path);
  auto hit = graph::prepare_for_inputs(*later.dev, m.g, m.inputs);
  CHECK(hit->stats().plan_cached);
  check_identical(hit->run(m.inputs), want);
  // Clearing the compile cache clears the plans that name its entries.
  later.cache.clear();
  CHECK(plan_files(dir.path).empty());
}
