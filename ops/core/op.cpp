#include "ops/core/op.h"

#include <algorithm>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "ops/core/op_families.h"

namespace kgen::ops {

#define KGEN_X(family) void register_##family##_ops();
KGEN_OP_FAMILIES(KGEN_X)
#undef KGEN_X

namespace {

// The family whose register function runs (register_all_ops), stamped on
// each OpDef it adds.
std::string& registering_family() {
  static std::string family;
  return family;
}

std::vector<OpDef>& registry() {
  static std::vector<OpDef> ops;
  return ops;
}

std::vector<std::string_view> split(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find_first_of(seps, i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

int64_t parse_int(std::string_view s, std::string_view what) {
  try {
    size_t used = 0;
    // Base 10 always: a leading 0 is a digit (transpose's perm=0213), not octal.
    int64_t v = std::stoll(std::string(s), &used, 10);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("bad integer '" + std::string(s) + "' in " + std::string(what));
}

std::string join_params(const std::map<std::string, int64_t>& m, const char* sep) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : sep) + k + "=" + std::to_string(v);
  return s;
}

}  // namespace

std::string Problem::str() const {
  std::string s = op + " ";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  s += " " + std::string(ir::scalar_name(dtype));
  if (!attrs.empty()) s += " " + join_params(attrs, ",");
  return s;
}

std::vector<int64_t> parse_dims(std::string_view s) {
  std::vector<int64_t> d;
  std::string what = "shape '" + std::string(s) + "'";
  size_t i = 0;
  while (true) {  // every part non-empty: "12xx" is an error, not 12
    size_t j = std::min(s.find_first_of("x,", i), s.size());
    d.push_back(parse_int(s.substr(i, j - i), what));
    if (d.back() < 0) throw std::invalid_argument("negative size in " + what);
    if (j == s.size()) break;
    i = j + 1;
  }
  return d;
}

std::map<std::string, int64_t> parse_attrs(std::string_view s) {
  std::map<std::string, int64_t> m;
  for (auto part : split(s, ", ")) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw std::invalid_argument("bad attribute '" + std::string(part) + "' (expected name=value)");
    m[std::string(part.substr(0, eq))] = parse_int(part.substr(eq + 1), "attribute '" + std::string(part) + "'");
  }
  return m;
}

std::string Variant::str() const { return join_params(params, " "); }

Variant Variant::parse(std::string_view s) { return Variant{parse_attrs(s)}; }

void Plan::append(size_t n_io, const Plan& sub, size_t sub_nio, const std::vector<int>& io) {
  if (io.size() != sub_nio) throw std::logic_error("Plan::append: one slot per tensor of the appended plan");
  std::vector<int> temps;
  for (size_t b : sub.temp_bytes) temps.push_back(add_temp(n_io, b));
  for (Step st : sub.steps) {
    for (int& slot : st.buffers) slot = size_t(slot) < sub_nio ? io[size_t(slot)] : temps[size_t(slot) - sub_nio];
    steps.push_back(std::move(st));
  }
}

void register_op(OpDef def) {
  if (def.name.empty()) throw std::invalid_argument("register_op: empty op name");
  if (find_op(def.name)) throw std::invalid_argument("register_op: duplicate op '" + def.name + "'");
  if (!def.inputs || !def.outputs || !def.candidates || !def.heuristic || !def.plan || !def.reference)
    throw std::invalid_argument("register_op: op '" + def.name + "' lacks inputs/outputs/candidates/heuristic/plan/reference");
  if (def.family.empty()) def.family = registering_family();
  registry().push_back(std::move(def));
}

const OpDef* find_op(std::string_view name) {
  for (const auto& d : registry())
    if (d.name == name) return &d;
  return nullptr;
}

const std::vector<OpDef>& registered_ops() { return registry(); }

void register_all_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
#define KGEN_X(family)            \
  registering_family() = #family; \
  register_##family##_ops();
    KGEN_OP_FAMILIES(KGEN_X)
#undef KGEN_X
  });
}

const OpDef& op_for(const Problem& p) {
  const OpDef* d = find_op(p.op);
  if (!d) {
    std::string names;
    for (const auto& o : registered_ops()) names += (names.empty() ? "" : ", ") + o.name;
    throw std::invalid_argument("unknown op '" + p.op + "' (known: " + names + ")");
  }
  if (d->validate) {
    try {
      d->validate(p);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("op '" + p.op + "' (" + p.str() + "): " + e.what());
    }
  }
  return *d;
}

size_t elem_bytes(ir::Type t) { return size_t(t.bytes()); }

TensorSpec tensor(std::string name, ir::Type elem, std::vector<int64_t> shape, double lo, double hi) {
  size_t n = 1;
  for (int64_t d : shape) n *= size_t(d);
  return TensorSpec{std::move(name), elem, n * elem_bytes(elem), std::move(shape), lo, hi};
}

}  // namespace kgen::ops
