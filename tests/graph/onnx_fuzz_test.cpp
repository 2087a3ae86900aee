// The ONNX reader against hostile input. Mutation fuzzing (fixed seeds) of
// real model bytes (samples/ MNIST, ../shared models and backend node tests),
// of serialized TensorProto inputs and of .npy files: every mutant either
// loads or is refused with a std::exception that says something; the ones that
// load go on through specialise + infer, and a few small ones through a cpu
// PreparedModel. Then hand-built malformed models, each refused with a message
// naming what is wrong and where.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <typeinfo>
#include <sys/wait.h>
#include <unistd.h>

#include "graph/handler.h"
#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/onnx/tensor_proto.h"
#include "graph/passes.h"
#include "graph/prepared_model.h"

using namespace kgen;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(bool(f), "cannot open " << path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  // A new file each time: rewriting a truncated one makes ext4 flush it on close (auto_da_alloc).
  std::error_code ec;
  fs::remove(path, ec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A private scratch folder, removed at the end of the test case.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / ("kgen_onnx_fuzz_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

// ---------------------------------------------------------------- mutation

// Byte ranges of large tensor payloads (raw_data of initializers and of
// Constant nodes' tensors): flipping bytes there only changes weights, so
// "structural" mutations pick their positions elsewhere.
std::vector<std::pair<size_t, size_t>> payload_ranges(const std::string& bytes) {
  onnx::ModelProto m;
  std::vector<std::pair<size_t, size_t>> r;
  if (!m.ParseFromString(bytes)) return r;
  auto add = [&](const onnx::TensorProto& t) {
    const std::string& raw = t.raw_data();
    if (raw.size() < 32) return;
    auto it = std::search(bytes.begin(), bytes.end(), raw.begin(), raw.end());
    if (it != bytes.end()) r.push_back({size_t(it - bytes.begin()), size_t(it - bytes.begin()) + raw.size()});
  };
  for (const auto& t : m.graph().initializer()) add(t);
  for (const auto& n : m.graph().node())
    for (const auto& a : n.attribute())
      if (a.has_t()) add(a.t());
  return r;
}

class Mutator {
 public:
  Mutator(const std::string& src, uint64_t seed) : src_(src), rng_(seed) {
    auto payload = payload_ranges(src);
    std::vector<bool> is_payload(src.size(), false);
    for (auto [b, e] : payload)
      for (size_t i = b; i < e; ++i) is_payload[i] = true;
    for (size_t i = 0; i < src.size(); ++i)
      if (!is_payload[i]) structural_.push_back(i);
    if (structural_.empty())
      for (size_t i = 0; i < src.size(); ++i) structural_.push_back(i);
  }

  size_t below(size_t n) { return n ? size_t(rng_() % n) : 0; }

  // 1 to 4 edits; `structural`: positions outside the weight payloads.
  std::string mutate(bool structural) {
    std::string s = src_;
    const int edits = 1 + int(below(4));
    for (int e = 0; e < edits; ++e) {
      auto pos = [&]() -> size_t {
        if (s.empty()) return 0;
        size_t p = structural && s.size() == src_.size() ? structural_[below(structural_.size())] : below(s.size());
        return std::min(p, s.size() - 1);
      };
      static const uint8_t interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12, 0x1a, 0x22, 0x3a};
      switch (below(7)) {
        case 0:  // bit flip
          if (!s.empty()) s[pos()] ^= char(1u << below(8));
          break;
        case 1:  // random byte
          if (!s.empty()) s[pos()] = char(rng_());
          break;
        case 2:  // an interesting byte (tags, wire types, varint ends)
          if (!s.empty()) s[pos()] = char(interesting[below(std::size(interesting))]);
          break;
        case 3: {  // insertion
          std::string ins(1 + below(8), '\0');
          for (char& c : ins) c = char(rng_());
          s.insert(s.empty() ? 0 : pos(), ins);
          break;
        }
        case 4:  // deletion
          if (!s.empty()) {
            size_t p = pos();
            s.erase(p, std::min(s.size() - p, 1 + below(16)));
          }
          break;
        case 5:  // a chunk duplicated elsewhere
          if (s.size() > 2) {
            size_t p = pos(), len = std::min(s.size() - p, 1 + below(32));
            std::string chunk = s.substr(p, len);
            s.insert(pos(), chunk);
          }
          break;
        case 6:  // a huge varint (lengths, dims, counts)
          if (!s.empty()) {
            static const char big[][6] = {"\xff\xff\xff\xff\x0f", "\xff\xff\xff\xff\x7f", "\x80\x80\x80\x80\x10"};
            const char* b = big[below(3)];
            size_t p = pos();
            s.replace(p, std::min<size_t>(5, s.size() - p), b, 5);
          }
          break;
      }
    }
    return s;
  }

  // Many prefix lengths: every length up to 64, the last 64, and `spread` in between.
  std::vector<size_t> truncations(size_t spread) {
    std::set<size_t> r;
    const size_t n = src_.size();
    for (size_t i = 0; i <= std::min<size_t>(n, 64); ++i) r.insert(i);
    for (size_t i = 0; i < std::min<size_t>(n, 64); ++i) r.insert(n - 1 - i);
    for (size_t i = 0; i < spread; ++i) r.insert(below(n));
    for (size_t p : structural_)
      if (below(structural_.size()) < spread) r.insert(p);
    r.erase(n);  // the intact model is not a truncation
    return {r.begin(), r.end()};
  }

 private:
  std::string src_;
  std::mt19937_64 rng_;
  std::vector<size_t> structural_;
};

// ---------------------------------------------------------------- outcomes

struct Tally {
  int parsed = 0, refused_parse = 0, inferred = 0, refused_infer = 0, prepares = 0, refused_prepare = 0;
  std::map<std::string, int> empty_what;  // label -> count: must stay empty
  std::vector<std::string> unlabelled;    // ModelErrors of parse_onnx not naming the model: must stay empty
  std::vector<std::string> known_bugs;    // parsed, not inferred: kKnownInferBugs
};

// prepared cpu models for the whole test binary (a kernel compile costs ~30 ms); each
// fuzzed file may take `prepares` of them.
int g_prepares_left = 20;

rt::Device& cpu() {
  static std::unique_ptr<rt::Device> d = rt::create_device("cpu");
  return *d;
}

bool small_enough_to_prepare(const graph::Graph& g) {
  int live = 0;
  double elems = 0;
  for (const auto& n : g.nodes) live += !n.dead;
  for (const auto& v : g.values)
    if (v.shaped) {
      double e = 1;
      for (int64_t d : v.shape) e *= double(d);
      elems += e;
    }
  return live > 0 && live <= 16 && elems <= double(1 << 18);
}

// Runs `f`; a std::exception must say something. Returns whether it succeeded.
// KGEN_FUZZ_VERBOSE=1 prints every refusal after parsing (inference and PreparedModel errors).
const bool g_verbose = std::getenv("KGEN_FUZZ_VERBOSE") != nullptr;

template <class F>
bool survives(F&& f, const std::string& label, Tally& t, std::string* msg = nullptr) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    if (!e.what() || !*e.what()) ++t.empty_what[label];
    if (msg) *msg = e.what();
    else if (g_verbose) std::printf("%s: %s: %s\n", label.c_str(), typeid(e).name(), e.what());
    return false;
  }
  // anything else propagates: doctest reports an unexpected exception
}

// parse_onnx, then specialise + infer, then (small graphs, while the budget
// lasts) a cpu PreparedModel run on zeros.
void exercise_model_here(const std::string& bytes, const std::string& dir, const std::string& label, Tally& t,
                         int* prepares);

// Mutants that parse but then crash or overflow in graph inference, in code
// outside the ONNX reader: not inferred until their bug is fixed (then
// delete the entry; KGEN_FUZZ_KNOWN=1 runs them anyway, KGEN_FUZZ_FORK=1
// finds new ones). Each names its bug.
// Mutants whose inference once crashed or overflowed (fixed): empty, kept as
// the place to list one while its fix is pending.
const std::map<std::string, std::string> kKnownInferBugs = {};
const bool g_known = std::getenv("KGEN_FUZZ_KNOWN") != nullptr;

// KGEN_FUZZ_FORK=1 (a debugging aid): every mutant in a child process, and
// crashes listed by label instead of ending the run (no PreparedModels then).
const bool g_fork = std::getenv("KGEN_FUZZ_FORK") != nullptr;
// KGEN_FUZZ_SCALE=k: k times the mutants; KGEN_FUZZ_SEED=s: other seeds (longer hunts).
const int g_scale = std::max(1, std::atoi(std::getenv("KGEN_FUZZ_SCALE") ? std::getenv("KGEN_FUZZ_SCALE") : "1"));
const uint64_t g_seed = std::getenv("KGEN_FUZZ_SEED") ? std::strtoull(std::getenv("KGEN_FUZZ_SEED"), nullptr, 0) : 0;

void exercise_model(const std::string& bytes, const std::string& dir, const std::string& label, Tally& t,
                    int* prepares = nullptr) {
  if (g_verbose) std::printf("-- %s\n", label.c_str()), std::fflush(stdout);
  if (!g_fork) return exercise_model_here(bytes, dir, label, t, prepares);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    exercise_model_here(bytes, dir, label, t, nullptr);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf("CRASH %s (status %d)\n", label.c_str(), status);
    ++t.empty_what[label + ": crashed"];
  }
}

void exercise_model_here(const std::string& bytes, const std::string& dir, const std::string& label, Tally& t,
                         int* prepares) {
  graph::Graph g;
  std::string msg;
  bool ok = survives([&] { g = graph::parse_onnx(bytes.data(), bytes.size(), dir, label); }, label, t, &msg);
  if (!ok) {
    ++t.refused_parse;
    if (msg.find(label) == std::string::npos && t.unlabelled.size() < 5) t.unlabelled.push_back(msg);
    return;
  }
  ++t.parsed;
  if (auto bug = kKnownInferBugs.find(label); bug != kKnownInferBugs.end() && !g_known) {
    t.known_bugs.push_back(label + ": " + bug->second);
    return;
  }
  graph::Graph original = g;
  ok = survives([&] {
    graph::specialise(g, {});
    graph::infer(g);
  }, label, t);
  if (!ok) {
    ++t.refused_infer;
    return;
  }
  ++t.inferred;
  if (!prepares || *prepares <= 0 || g_prepares_left <= 0 || !small_enough_to_prepare(g)) return;
  --g_prepares_left, --*prepares;
  ++t.prepares;
  ok = survives([&] {
    graph::PreparedModel s(cpu(), std::move(original));
    std::vector<graph::Tensor> inputs;
    for (size_t i = 0; i < s.graph().inputs.size(); ++i) inputs.emplace_back(s.input(i).dtype, s.input(i).shape);
    auto outs = s.run(inputs);
    CHECK(outs.size() == s.graph().outputs.size());
  }, label, t);
  if (!ok) ++t.refused_prepare;
}

void check_tally(const std::string& what, const Tally& t) {
  INFO(what << ": parsed " << t.parsed << ", refused " << t.refused_parse << "; inferred " << t.inferred
            << ", refused " << t.refused_infer << "; prepares " << t.prepares << " (" << t.refused_prepare
            << " refused)");
  for (const auto& [label, n] : t.empty_what) FAIL_CHECK(label << ": an exception with an empty message");
  for (const auto& m : t.unlabelled) FAIL_CHECK("a parse error that does not name the model: " << m);
  CHECK(t.empty_what.empty());
  for (const auto& k : t.known_bugs) MESSAGE("not inferred, a known bug: " << k);
  if (t.parsed + t.refused_parse)
    MESSAGE(what << ": parsed " << t.parsed << "/" << t.parsed + t.refused_parse << ", inferred " << t.inferred
                 << ", prepares " << t.prepares);
}

// Mutants of one model: `truncs` spread truncations, `n` mutants (half of them
// structural); small survivors of structural mutations get up to `prepares`
// prepared cpu models.
Tally fuzz_bytes(const std::string& bytes, const std::string& dir, const std::string& label, uint64_t seed,
                 size_t truncs, int n, int prepares) {
  Tally t;
  // The intact model loads (most also infer; some node tests need run-time values kgen refuses).
  exercise_model(bytes, dir, label, t);
  CHECK_MESSAGE(t.refused_parse == 0, label << " does not load");
  Mutator mut(bytes, seed ^ (g_seed * 0x9e3779b97f4a7c15ull));
  n *= g_scale;
  for (size_t len : mut.truncations(truncs))
    exercise_model(bytes.substr(0, len), "", label + " truncated to " + std::to_string(len), t);
  for (int i = 0; i < n; ++i) {
    const bool structural = i % 2 == 0;
    // Every fourth mutant may resolve external data, in the model's own folder.
    exercise_model(mut.mutate(structural), i % 4 == 1 ? dir : "", label + " mutant " + std::to_string(i), t,
                   structural ? &prepares : nullptr);
  }
  return t;
}

Tally fuzz_model(const std::string& path, uint64_t seed, size_t truncs, int n, int prepares) {
  return fuzz_bytes(read_bytes(path), fs::path(path).parent_path().string(), path, seed, truncs, n, prepares);
}

void add(Tally& all, const Tally& t) {
  all.parsed += t.parsed, all.refused_parse += t.refused_parse, all.inferred += t.inferred;
  all.refused_infer += t.refused_infer, all.prepares += t.prepares, all.refused_prepare += t.refused_prepare;
  for (auto& kv : t.empty_what) all.empty_what.insert(kv);
  for (auto& u : t.unlabelled) all.unlabelled.push_back(u);
  for (auto& k : t.known_bugs) all.known_bugs.push_back(k);
}

// A backend node test with its inputs 1.. turned into initializers from
// test_data_set_0 (Reshape's shape, Slice's starts, Tile's repeats...), so
// that the node infers and mutations reach those values too.
std::string with_constant_inputs(const fs::path& test) {
  onnx::ModelProto m;
  const std::string bytes = read_bytes((test / "model.onnx").string());
  if (!m.ParseFromString(bytes)) return {};
  auto* g = m.mutable_graph();
  for (int i = g->input_size() - 1; i >= 1; --i) {
    const fs::path pb = test / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
    onnx::TensorProto t;
    if (!fs::exists(pb) || !t.ParseFromString(read_bytes(pb.string()))) return {};
    t.set_name(g->input(i).name());
    *g->add_initializer() = t;
    g->mutable_input()->DeleteSubrange(i, 1);
  }
  std::string r;
  m.SerializeToString(&r);
  return r;
}

std::string shared_dir() { return std::string(KGEN_SHARED_DIR); }

}  // namespace

// ====================================================================== fuzz

TEST_CASE("mutated mnist-8 bytes: parsed, inferred or refused with a message") {
  const std::string path = std::string(KGEN_SOURCE_DIR) + "/samples/models/mnist-8/model.onnx";
  Tally t = fuzz_model(path, 0x6b67656e, 200, 1500, 4);
  check_tally("mnist-8", t);
  CHECK(t.parsed > 100);   // flips in the weights still load
  CHECK(t.inferred > 50);
}

TEST_CASE("mutated ../shared models: parsed, inferred or refused with a message") {
  const fs::path root = shared_dir() + "/models/onnx";
  if (!fs::exists(root)) {
    MESSAGE("../shared/models/onnx not found: only samples/ MNIST is fuzzed");
    return;
  }
  std::vector<fs::path> models;
  for (const auto& d : fs::directory_iterator(root))
    if (d.is_directory())
      for (const auto& f : fs::directory_iterator(d.path()))
        if (f.path().extension() == ".onnx") models.push_back(f.path());
  std::sort(models.begin(), models.end());
  uint64_t seed = 1;
  for (const auto& m : models) {
    const auto size = fs::file_size(m);
    // Parsing and inferring a multi-MB model costs milliseconds: fewer mutants.
    const int n = size > (1u << 20) ? 24 : size > (100u << 10) ? 60 : 300;
    Tally t = fuzz_model(m.string(), seed++, size > (1u << 20) ? 8 : 40, n, size < (100u << 10) ? 1 : 0);
    check_tally(m.parent_path().filename().string(), t);
  }
}

TEST_CASE("mutated ONNX backend node tests: parsed, inferred or refused with a message") {
  const fs::path root = shared_dir() + "/onnx-node-tests/node";
  if (!fs::exists(root)) {
    MESSAGE("../shared/onnx-node-tests not found");
    return;
  }
  const char* tests[] = {"test_add", "test_conv_with_strides_padding", "test_gemm_default_matrix_bias",
                         "test_reshape_reordered_all_dims", "test_softmax_axis_1", "test_maxpool_2d_pads",
                         "test_concat_2d_axis_0", "test_gather_0", "test_slice", "test_transpose_default",
                         "test_matmul_2d", "test_batchnorm_example", "test_cast_FLOAT_to_FLOAT16",
                         "test_constantofshape_int_zeros", "test_expand_dim_changed", "test_dequantizelinear",
                         "test_averagepool_2d_pads", "test_reduce_mean_default_axes_keepdims_example",
                         "test_where_example", "test_unsqueeze_axis_0", "test_flatten_axis1",
                         "test_layer_normalization_2d_axis0", "test_resize_upsample_scales_nearest", "test_tile"};
  Tally all;
  uint64_t seed = 100;
  int found = 0;
  for (const char* name : tests) {
    const fs::path m = root / name / "model.onnx";
    if (!fs::exists(m)) continue;
    ++found;
    add(all, fuzz_model(m.string(), seed++, 0, 60, 0));
    const std::string constant = with_constant_inputs(root / name);
    if (!constant.empty())
      add(all, fuzz_bytes(constant, "", std::string(name) + " (constant inputs)", seed++, 0, 150, 1));
  }
  check_tally(std::to_string(found) + " node tests", all);
}

TEST_CASE("mutated TensorProto (.pb) files: loaded or refused with a message") {
  const std::string src =
      read_bytes(std::string(KGEN_SOURCE_DIR) + "/samples/models/mnist-8/test_data_set_0/input_0.pb");
  TempDir tmp("pb");
  {
    const graph::Tensor t = graph::load_tensor_pb(std::string(KGEN_SOURCE_DIR) +
                                                  "/samples/models/mnist-8/test_data_set_0/input_0.pb");
    CHECK(t.shape == graph::Shape{1, 1, 28, 28});
  }
  Mutator mut(src, 0x7062);
  Tally t;
  int loaded = 0, n = 0;
  auto one = [&](const std::string& bytes, const std::string& label) {
    const std::string p = tmp / ("m" + std::to_string(n++ % 8) + ".pb");
    write_bytes(p, bytes);
    std::string msg;
    if (survives([&] { graph::load_tensor_file(p); }, label, t, &msg)) ++loaded;
    else if (msg.find(p) == std::string::npos && t.unlabelled.size() < 5) t.unlabelled.push_back(label + ": " + msg);
  };
  for (size_t len : mut.truncations(60)) one(src.substr(0, len), "input_0.pb truncated to " + std::to_string(len));
  for (int i = 0; i < 600; ++i) one(mut.mutate(i % 2 == 0), "input_0.pb mutant " + std::to_string(i));
  // The test data folder reader over a mutated folder.
  write_bytes(tmp / "input_0.pb", mut.mutate(true));
  write_bytes(tmp / "output_0.pb", src.substr(0, 100));
  survives([&] { graph::load_test_data(tmp.path.string()); }, "load_test_data", t);
  check_tally("input_0.pb", t);
  MESSAGE("input_0.pb: " << loaded << " of " << n << " mutants loaded");
  CHECK(loaded > 0);
}

namespace {

// A valid v1 .npy: f32 [2, 3], 0..5.
std::string npy_bytes(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string r = "\x93NUMPY\x01";
  r += '\0';
  r += char(header.size() & 0xff);
  r += char(header.size() >> 8);
  return r + header + data;
}

std::string f32_bytes(std::initializer_list<float> v) {
  std::string r(v.size() * 4, '\0');
  std::memcpy(r.data(), std::data(v), r.size());
  return r;
}

}  // namespace

TEST_CASE(".npy files: a valid one loads, mutants load or are refused with a message") {
  TempDir tmp("npy");
  const std::string data = f32_bytes({0, 1, 2, 3, 4, 5});
  const std::string good = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data);
  write_bytes(tmp / "good.npy", good);
  graph::Tensor t = graph::load_tensor_file(tmp / "good.npy");
  CHECK(t.dtype == ir::ScalarKind::F32);
  CHECK(t.shape == graph::Shape{2, 3});
  CHECK(t.get(5) == 5.0);

  // Hand-made bad headers, each refused with its reason.
  auto refused = [&](const std::string& bytes, std::initializer_list<const char*> words) {
    write_bytes(tmp / "bad.npy", bytes);
    std::string msg;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      graph::load_tensor_file(tmp / "bad.npy");
    } catch (const std::exception& e) {
      msg = e.what();
    }
    INFO("message: " << msg);
    CHECK(!msg.empty());
    for (const char* w : words) CHECK(msg.find(w) != std::string::npos);
    // Refused before allocating what the header claims.
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  };
  refused("\x93NUMPX", {"not a .npy file"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data), {"Fortran"});
  refused(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", data), {"'<c8'", "not supported"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, }", data), {"shape"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", data), {"truncated"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }", data), {"truncated"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", data),
          {"shape"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", data), {"shape"});
  refused(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", data),
          {"shape"});

  Mutator mut(good, 0x6e7079);
  Tally tally;
  int loaded = 0, n = 0;
  auto one = [&](const std::string& bytes, const std::string& label) {
    const std::string p = tmp / ("m" + std::to_string(n++ % 8) + ".npy");
    write_bytes(p, bytes);
    std::string msg;
    if (survives([&] { graph::load_tensor_file(p); }, label, tally, &msg)) ++loaded;
    else if (msg.find(p) == std::string::npos && tally.unlabelled.size() < 5)
      tally.unlabelled.push_back(label + ": " + msg);
  };
  for (size_t len : mut.truncations(0)) one(good.substr(0, len), "npy truncated to " + std::to_string(len));
  for (int i = 0; i < 600; ++i) one(mut.mutate(false), "npy mutant " + std::to_string(i));
  check_tally(".npy", tally);
  MESSAGE(".npy: " << loaded << " of " << n << " mutants loaded");
  CHECK(loaded > 0);
}

// ================================================================ targeted

namespace {

// X: f32 [2, 3] -> Relu (node 'relu') -> Y, opset 13.
onnx::ModelProto base_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("targeted");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name, int elem, std::initializer_list<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (int64_t d : dims) sh->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "X", onnx::TensorProto::FLOAT, {2, 3});
  value(g->add_output(), "Y", onnx::TensorProto::FLOAT, {2, 3});
  auto* n = g->add_node();
  n->set_name("relu");
  n->set_op_type("Relu");
  n->add_input("X");
  n->add_output("Y");
  return m;
}

onnx::TensorProto* add_initializer(onnx::ModelProto& m, const std::string& name, int elem,
                                   std::initializer_list<int64_t> dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

graph::Graph parse(const onnx::ModelProto& m, const std::string& dir = "") {
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  return graph::parse_onnx(bytes.data(), bytes.size(), dir, "targeted.onnx");
}

// parse_onnx must refuse `m` with a ModelError naming the model and holding every word.
void refused(const onnx::ModelProto& m, std::initializer_list<std::string> words, const std::string& dir = "") {
  std::string msg;
  try {
    parse(m, dir);
    FAIL_CHECK("accepted; expected an error with: " << *words.begin());
    return;
  } catch (const graph::ModelError& e) {
    msg = e.what();
  }
  INFO("message: " << msg);
  CHECK(msg.find("targeted.onnx") != std::string::npos);
  for (const auto& w : words) CHECK_MESSAGE(msg.find(w) != std::string::npos, "missing '" << w << "'");
}

// parse_onnx accepts `m`; specialise + infer refuse it with an exception of type E holding every word.
template <class E>
void refused_by_inference(const onnx::ModelProto& m, std::initializer_list<std::string> words) {
  graph::Graph g = parse(m);
  std::string msg;
  try {
    graph::specialise(g, {});
    graph::infer(g);
    FAIL_CHECK("inferred; expected an error with: " << *words.begin());
    return;
  } catch (const E& e) {
    msg = e.what();
  }
  INFO("message: " << msg);
  for (const auto& w : words) CHECK_MESSAGE(msg.find(w) != std::string::npos, "missing '" << w << "'");
}

}  // namespace

TEST_CASE("the base model of the targeted cases loads and infers") {
  graph::Graph g = parse(base_model());
  graph::specialise(g, {});
  graph::infer(g);
  CHECK(g.values[size_t(g.outputs[0])].shape == graph::Shape{2, 3});
}

TEST_CASE("malformed bytes and model structure") {
  const std::string junk = "this is not a protobuf \xff\xff\xff";
  CHECK_THROWS_WITH_AS(graph::parse_onnx(junk.data(), junk.size(), "", "junk.onnx"),
                       doctest::Contains("junk.onnx"), graph::ModelError);
  CHECK_THROWS_WITH_AS(graph::load_onnx("/nonexistent/model.onnx"), doctest::Contains("cannot open"),
                       graph::ModelError);
  {
    onnx::ModelProto m;
    m.set_ir_version(8);
    refused(m, {"no graph"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->clear_output();
    refused(m, {"no outputs"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->add_sparse_initializer();
    refused(m, {"sparse"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
    refused(m, {"'X'", "not a tensor"});
  }
  {
    auto m = base_model();
    add_initializer(m, "", onnx::TensorProto::FLOAT, {});
    refused(m, {"no name"});
  }
}

TEST_CASE("raw_data or typed fields that do not match the dims") {
  {
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {2, 3})->set_raw_data(std::string(20, '\0'));
    refused(m, {"initializer 'W'", "raw_data", "20 bytes", "[2, 3]", "24"});
  }
  {
    auto m = base_model();
    auto* t = add_initializer(m, "W", onnx::TensorProto::FLOAT, {2, 3});
    for (int i = 0; i < 5; ++i) t->add_float_data(float(i));
    refused(m, {"initializer 'W'", "5 values", "needs 6"});
  }
  {
    auto m = base_model();
    auto* t = add_initializer(m, "W", onnx::TensorProto::INT64, {4});
    t->add_int64_data(1);
    refused(m, {"initializer 'W'", "1 values", "needs 4"});
  }
  {  // Large dims with a small payload are refused before anything that size is allocated.
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {1000000, 1000, 1000})->set_raw_data(std::string(8, '\0'));
    refused(m, {"initializer 'W'"});
    auto m2 = base_model();
    add_initializer(m2, "W", onnx::TensorProto::FLOAT, {100000, 100000})->set_raw_data(std::string(8, '\0'));
    const auto t0 = std::chrono::steady_clock::now();
    refused(m2, {"initializer 'W'", "raw_data", "8 bytes"});
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
    auto m3 = base_model();  // a zero dimension after dims whose product overflows int64
    add_initializer(m3, "W", onnx::TensorProto::FLOAT, {int64_t(1) << 62, int64_t(1) << 62, 0});
    refused(m3, {"initializer 'W'", "overflow"});
  }
}

TEST_CASE("negative dimensions") {
  {
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {-1, 3});
    refused(m, {"initializer 'W'", "negative dimension -1"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-3);
    refused(m, {"graph input", "'X'", "negative dimension"});
  }
}

TEST_CASE("undefined, twice defined and cyclic values") {
  {
    auto m = base_model();
    m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    refused(m, {"node 'relu'", "'nowhere'", "no node, initializer or graph input defines"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->mutable_output(0)->set_name("Z");
    refused(m, {"graph output 'Z'", "never defined"});
  }
  {  // two nodes writing Y
    auto m = base_model();
    auto* n = m.mutable_graph()->add_node();
    n->set_name("relu2");
    n->set_op_type("Relu");
    n->add_input("X");
    n->add_output("Y");
    refused(m, {"value 'Y'", "defined twice"});
  }
  {  // a node writing a graph input
    auto m = base_model();
    auto* n = m.mutable_graph()->add_node();
    n->set_name("clobber");
    n->set_op_type("Relu");
    n->add_input("Y");
    n->add_output("X");
    refused(m, {"value 'X'", "defined twice", "node 'clobber'"});
  }
  {  // a node writing an initializer
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {2, 3})->set_raw_data(std::string(24, '\0'));
    auto* n = m.mutable_graph()->add_node();
    n->set_name("clobber");
    n->set_op_type("Relu");
    n->add_input("Y");
    n->add_output("W");
    refused(m, {"value 'W'", "defined twice"});
  }
  {  // two initializers of one name
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {1})->add_float_data(1);
    add_initializer(m, "W", onnx::TensorProto::FLOAT, {1})->add_float_data(2);
    refused(m, {"initializer 'W'", "defined twice"});
  }
  {  // X -> a(Add X, C) -> B -> b(Relu) -> C: a cycle
    auto m = base_model();
    auto* g = m.mutable_graph();
    g->clear_node();
    auto* a = g->add_node();
    a->set_name("a");
    a->set_op_type("Add");
    a->add_input("X");
    a->add_input("C");
    a->add_output("B");
    auto* b = g->add_node();
    b->set_name("b");
    b->set_op_type("Relu");
    b->add_input("B");
    b->add_output("C");
    auto* c = g->add_node();
    c->set_name("c");
    c->set_op_type("Relu");
    c->add_input("C");
    c->add_output("Y");
    refused(m, {"cycle"});
  }
  {  // a node reading its own output
    auto m = base_model();
    auto* n = m.mutable_graph()->add_node();
    n->set_name("self");
    n->set_op_type("Add");
    n->add_input("Y");
    n->add_input("S");
    n->add_output("S");
    refused(m, {"cycle", "'S'"});
  }
  {  // nodes out of order are sorted, not refused
    auto m = base_model();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_output(0, "T");
    auto* n = g->add_node();
    n->set_name("late");
    n->set_op_type("Relu");
    n->add_input("T");
    n->add_output("Y");
    g->mutable_node()->SwapElements(0, 1);
    graph::Graph gr = parse(m);
    REQUIRE(gr.nodes.size() == 2);
    CHECK(gr.nodes[0].name == "relu");
    CHECK(gr.nodes[1].name == "late");
  }
}

TEST_CASE("unsupported element types") {
  {
    auto m = base_model();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
    refused(m, {"'X'", "element type string", "not supported"});
  }
  {
    auto m = base_model();
    add_initializer(m, "W", 17 /* FLOAT8E4M3FN */, {2})->set_raw_data(std::string(2, '\0'));
    refused(m, {"initializer 'W'", "float8e4m3fn", "not supported"});
  }
  {
    auto m = base_model();
    add_initializer(m, "W", onnx::TensorProto::COMPLEX64, {1})->set_raw_data(std::string(8, '\0'));
    refused(m, {"initializer 'W'", "complex64"});
  }
  {
    auto m = base_model();
    add_initializer(m, "W", 4242, {1});
    refused(m, {"initializer 'W'", "4242"});
  }
  {
    auto m = base_model();
    add_initializer(m, "W", -7, {1});
    refused(m, {"initializer 'W'", "-7"});
  }
  {  // a string tensor inside a node attribute
    auto m = base_model();
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::STRING);
    refused(m, {"node 'relu'", "attribute 'value'", "string"});
  }
  {
    auto m = base_model();
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("odd");
    refused(m, {"node 'relu'", "attribute 'odd'", "unsupported type"});
  }
}

TEST_CASE("every typed storage field round-trips") {
  auto m = base_model();
  auto* f = add_initializer(m, "f", onnx::TensorProto::FLOAT, {2});
  f->add_float_data(1.5f), f->add_float_data(-2);
  auto* d = add_initializer(m, "d", onnx::TensorProto::DOUBLE, {1});
  d->add_double_data(0.25);
  auto* i64 = add_initializer(m, "i64", onnx::TensorProto::INT64, {2});
  i64->add_int64_data(-5), i64->add_int64_data(int64_t(1) << 40);
  auto* i8 = add_initializer(m, "i8", onnx::TensorProto::INT8, {2});
  i8->add_int32_data(-3), i8->add_int32_data(7);
  auto* u32 = add_initializer(m, "u32", onnx::TensorProto::UINT32, {1});
  u32->add_uint64_data(4000000000u);
  auto* h = add_initializer(m, "h", onnx::TensorProto::FLOAT16, {1});
  h->add_int32_data(0x3c00);  // 1.0
  auto* b = add_initializer(m, "b", onnx::TensorProto::BOOL, {0, 3});  // empty: nothing stored
  (void)b;
  graph::Graph g = parse(m);
  auto c = [&](const char* n) { return *g.values[size_t(g.find_value(n))].constant; };
  CHECK(c("f").get(0) == 1.5);
  CHECK(c("f").get(1) == -2);
  CHECK(c("d").get(0) == 0.25);
  CHECK(c("i64").get_int(1) == (int64_t(1) << 40));
  CHECK(c("i8").get(0) == -3);
  CHECK(c("u32").get(0) == 4000000000.0);
  CHECK(c("h").get(0) == 1.0);
  CHECK(c("b").numel() == 0);

  graph::Tensor t = graph::Tensor::from_ints(ir::ScalarKind::I32, {3}, {1, -2, 3});
  onnx::TensorProto p;
  graph::tensor_to_proto(t, "t", p);
  graph::Tensor back = graph::tensor_from_proto(p, "", "round trip");
  CHECK(back.shape == t.shape);
  CHECK(back.ints() == t.ints());
}

TEST_CASE("external data: beside the model, checked, never outside its folder") {
  TempDir tmp("ext");
  const std::string weights = f32_bytes({9, 1, 2, 3, 4, 5, 6, 7});  // the tensor is bytes 4..28
  write_bytes(tmp / "w.bin", weights);
  auto with_external = [](std::map<std::string, std::string> kv, std::initializer_list<int64_t> dims = {2, 3}) {
    auto m = base_model();
    auto* t = add_initializer(m, "W", onnx::TensorProto::FLOAT, dims);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto& [k, v] : kv) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    return m;
  };
  const std::string dir = tmp.path.string();
  {
    graph::Graph g = parse(with_external({{"location", "w.bin"}, {"offset", "4"}, {"length", "24"}}), dir);
    const graph::Tensor& w = *g.values[size_t(g.find_value("W"))].constant;
    CHECK(w.get(0) == 1);
    CHECK(w.get(5) == 6);
  }
  refused(with_external({{"location", "../w.bin"}}), {"initializer 'W'", "'../w.bin'", "beside the model"}, dir);
  refused(with_external({{"location", "sub/../../w.bin"}}), {"beside the model"}, dir);
  refused(with_external({{"location", "/etc/passwd"}}), {"'/etc/passwd'", "beside the model"}, dir);
  refused(with_external({}), {"location", "beside the model"}, dir);
  refused(with_external({{"location", "w.bin"}}), {"not allowed"}, "");
  refused(with_external({{"location", "missing.bin"}}), {"cannot open external data", "missing.bin"}, dir);
  refused(with_external({{"location", "w.bin"}, {"length", "20"}}), {"length 20", "does not match", "24 bytes"},
          dir);
  refused(with_external({{"location", "w.bin"}, {"offset", "16"}}), {"'w.bin'", "32 bytes", "needs 16 + 24"}, dir);
  refused(with_external({{"location", "w.bin"}, {"offset", "-4"}}), {"initializer 'W'"}, dir);
  refused(with_external({{"location", "w.bin"}, {"offset", "9223372036854775800"}}), {"initializer 'W'"}, dir);
  refused(with_external({{"location", "w.bin"}, {"offset", "four"}}), {"initializer 'W'", "offset", "four"}, dir);
  refused(with_external({{"location", "w.bin"}, {"length", "99999999999999999999999"}}), {"initializer 'W'", "length"},
          dir);
  refused(with_external({{"location", "w.bin"}}, {1000000, 1000000}), {"initializer 'W'"}, dir);
  fs::create_directories(tmp.path / "adir");
  refused(with_external({{"location", "adir"}}), {"initializer 'W'", "adir"}, dir);
}

TEST_CASE("unknown op types and domains that are not imported") {
  {
    auto m = base_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateV2");
    m.mutable_graph()->mutable_node(0)->set_name("weird");
    refused_by_inference<graph::UnsupportedError>(m, {"node 'weird'", "FrobnicateV2", "not supported"});
    // The same through a PreparedModel (refused before any kernel is compiled).
    std::string msg;
    try {
      graph::PreparedModel s(cpu(), parse(m));
      FAIL_CHECK("a PreparedModel for an unknown op");
    } catch (const graph::UnsupportedError& e) {
      msg = e.what();
    }
    CHECK(msg.find("'weird'") != std::string::npos);
    CHECK(msg.find("FrobnicateV2") != std::string::npos);
  }
  {  // an unnamed node is named after its op and index
    auto m = base_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("Nope");
    m.mutable_graph()->mutable_node(0)->clear_name();
    refused_by_inference<graph::UnsupportedError>(m, {"'Nope_0'", "Nope"});
  }
  {
    auto m = base_model();
    m.mutable_graph()->mutable_node(0)->set_domain("com.example");
    refused(m, {"node 'relu'", "domain 'com.example'", "does not import"});
  }
  {  // imported, but kgen has no handler for the op in that domain
    auto m = base_model();
    auto* op = m.add_opset_import();
    op->set_domain("com.example");
    op->set_version(1);
    m.mutable_graph()->mutable_node(0)->set_domain("com.example");
    refused_by_inference<graph::UnsupportedError>(m, {"node 'relu'", "com.example", "Relu", "not supported"});
  }
  {  // a control-flow attribute parses; inference refuses it naming the node
    auto m = base_model();
    auto* n = m.mutable_graph()->mutable_node(0);
    n->set_op_type("If");
    n->set_name("branch");
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    graph::Graph g = parse(m);
    std::string msg;
    try {
      graph::specialise(g, {});
      graph::infer(g);
    } catch (const std::exception& e) {
      msg = e.what();
    }
    CHECK(msg.find("'branch'") != std::string::npos);
  }
}

TEST_CASE("a graph output that is also a graph input keeps the input's declared shape") {
  auto m = base_model();
  auto* g = m.mutable_graph();
  auto* out = g->add_output();
  out->set_name("X");  // declared without a shape
  graph::Graph gr = parse(m);
  graph::specialise(gr, {});
  CHECK(gr.values[size_t(gr.inputs[0])].shape == graph::Shape{2, 3});
}
