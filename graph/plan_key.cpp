// plan_key: everything lowering reads, hashed.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "graph/plan_cache.h"
#include "graph/plan_codec.h"
#include "ir/hash.h"
#include "ops/core/tune.h"
#include "runtimes/kernel_cache.h"

namespace kgen::graph {

namespace {

constexpr const char* kFormat = "kgen-plan-v1";

void add_tensor(ir::Hasher& h, const Tensor& t) {
  h.add(uint64_t(t.dtype));
  h.add(t.shape.size());
  for (int64_t d : t.shape) h.add(uint64_t(d));
  h.add(hash_bytes(t.data(), t.bytes(), 0));
}

void add_attribute(ir::Hasher& h, const std::string& name, const Attribute& a) {
  h.add(name);
  h.add(uint64_t(a.kind));
  h.add(uint64_t(a.i));
  uint64_t bits;
  std::memcpy(&bits, &a.f, 8);
  h.add(bits);
  h.add(a.s);
  h.add(a.ints.size());
  for (int64_t v : a.ints) h.add(uint64_t(v));
  h.add(a.floats.size());
  for (double v : a.floats) {
    std::memcpy(&bits, &v, 8);
    h.add(bits);
  }
  h.add(a.strings.size());
  for (const std::string& s : a.strings) h.add(s);
  h.add(a.tensor.has_value());
  if (a.tensor) add_tensor(h, *a.tensor);
}

void add_ints(ir::Hasher& h, const std::vector<int>& v) {
  h.add(v.size());
  for (int x : v) h.add(uint64_t(int64_t(x)));
}

// Values a live node reads, and the graph's outputs: the only constants
// lowering can see (folded intermediates are not).
std::vector<bool> read_values(const Graph& g) {
  std::vector<bool> read(g.values.size(), false);
  for (const Node& n : g.nodes)
    if (!n.dead)
      for (int v : n.inputs)
        if (v >= 0) read[size_t(v)] = true;
  for (int v : g.outputs) read[size_t(v)] = true;
  return read;
}

size_t read_constant_bytes(const Graph& g) {
  const std::vector<bool> read = read_values(g);
  size_t n = 0;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (read[i] && g.values[i].constant) n += g.values[i].constant->bytes();
  return n;
}

// The graph after the passes: live nodes with their attributes, every value's
// type, and the constants lowering may read, bytes included.
uint64_t graph_hash(const Graph& g) {
  ir::Hasher h(0x6b67656e67726170ull);
  const std::vector<bool> read = read_values(g);
  h.add(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    h.add(v.name);
    h.add(uint64_t(v.dtype));
    h.add(v.shape.size());
    for (int64_t d : v.shape) h.add(uint64_t(d));
    h.add(uint64_t(v.state) | uint64_t(v.shaped) << 1 | uint64_t(v.constant.has_value()) << 2);
    h.add(uint64_t(int64_t(v.producer)));
    if (v.constant && read[i]) add_tensor(h, *v.constant);
  }
  h.add(g.nodes.size());
  for (const Node& n : g.nodes) {
    h.add(uint64_t(n.dead));
    if (n.dead) continue;
    h.add(n.name);
    h.add(n.op);
    h.add(n.domain);
    h.add(uint64_t(n.opset));
    add_ints(h, n.inputs);
    add_ints(h, n.outputs);
    h.add(n.attrs.size());
    for (const auto& [name, a] : n.attrs) add_attribute(h, name, a);
  }
  add_ints(h, g.inputs);
  add_ints(h, g.outputs);
  for (const auto& [domain, version] : g.opsets) {
    h.add(domain);
    h.add(uint64_t(version));
  }
  return h.finish();
}

// A file's version: a rebuild or an edit changes it.
std::string file_version(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "none";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// The files holding the code that lowers: the executable and, when kgen is a
// shared library, that library (kgen_build_id() covers only the code
// generators, not the op library or this graph layer).
std::vector<std::string> lowering_binaries() {
  std::vector<std::string> files;
  std::error_code ec;
  files.push_back(std::filesystem::read_symlink("/proc/self/exe", ec).string());
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&plan_key), &info) && info.dli_fname && info.dli_fname[0] == '/' &&
      info.dli_fname != files[0])
    files.push_back(info.dli_fname);
  return files;
}

}  // namespace

std::string PlanKey::hex() const { return rt::hex16(hash); }

std::optional<PlanKey> plan_key(const Graph& g, rt::Device& dev, const rt::CompileOptions& opt) {
  if (read_constant_bytes(g) > kPlanCacheMaxBytes) return std::nullopt;
  static const std::vector<std::string> binaries = lowering_binaries();
  const rt::TargetCaps& caps = dev.caps();
  // What the plan is for (it names the file: a rebuilt kgen replaces its
  // older plans rather than adding to them) ...
  std::string what = std::string("format ") + kFormat + "\ngraph " + rt::hex16(graph_hash(g)) + "\ndevice " + dev.name() +
                     " | " + dev.description() + "\ncaps " + rt::caps_key(caps) + " threads=" +
                     std::to_string(caps.threads) + "\noptions " + opt.key() + "\n";
  for (const std::string& b : binaries) what += "binary " + b + "\n";
  ir::Hasher h(0x6b67656e706b6579ull);
  h.add(what);
  // ... and the versions of the code and data lowering read (checked on load).
  std::string versions = "kgen " + std::string(rt::kgen_build_id()) + "\n";
  for (const std::string& b : binaries) versions += "version " + file_version(b) + "\n";
  const std::string& tune = ops::TuneDb::global().path();
  versions += "tune " + tune + " " + file_version(tune) + "\n";
  return PlanKey{what + versions, h.finish()};
}

}  // namespace kgen::graph
