#include "tools/file_kernel.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "dsl/registry.h"
#include "ir/half.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"
#include "translate/translate.h"

namespace kgen::tools {

namespace {
template <class T>
T from_slot(uint64_t slot) {
  T v;
  std::memcpy(&v, &slot, sizeof(T));
  return v;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

constexpr int64_t kDefaultN = 4096;
constexpr uint32_t kDefaultWorkgroup = 256;

bool is_size_name(const std::string& s) { return s == "n" || s == "N" || s == "count"; }

// Same buffers (element types, access) and scalars (types) in the same
// order, and the same workgroup: a registered workload then fits.
bool same_signature(const ir::Kernel& a, const ir::Kernel& b) {
  if (a.buffers.size() != b.buffers.size() || a.scalars.size() != b.scalars.size()) return false;
  if (a.workgroup_size != b.workgroup_size) return false;
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (a.buffers[i].elem != b.buffers[i].elem || a.buffers[i].access != b.buffers[i].access) return false;
  for (size_t i = 0; i < a.scalars.size(); ++i)
    if (a.scalars[i].type != b.scalars[i].type) return false;
  return true;
}

// The registered kernel `k` is a twin of: named k.name or k.name_VARIANT
// (matmul_tiled built with TILE=8 is matmul_tiled_t8), same signature.
const dsl::KernelEntry* registered_twin(const ir::Kernel& k) {
  samples::register_all();
  ops::register_all();
  for (const dsl::KernelEntry& e : dsl::registered_kernels()) {
    bool named = e.name == k.name || (e.name.size() > k.name.size() + 1 && e.name.starts_with(k.name + "_"));
    if (named && same_signature(k, e.build())) return &e;
  }
  return nullptr;
}

// The scalar slot of `text` read as type t.
uint64_t parse_slot(ir::Type t, const std::string& name, const std::string& text) {
  size_t used = 0;
  try {
    if (t.is_float()) {
      double v = std::stod(text, &used);
      if (used == text.size()) return samples::slot_as(t, v);
    } else if (t.is_bool()) {
      if (text == "true" || text == "1") return 1;
      if (text == "false" || text == "0") return 0;
    } else {
      int64_t v = std::stoll(text, &used, 0);
      if (used == text.size()) return ir::scalar_slot(v);  // the low bytes hold any narrower integer
    }
  } catch (const std::exception&) {
  }
  throw std::runtime_error("--scalar " + name + "=" + text + ": not a " + t.str() + " value");
}
}  // namespace

bool is_cpp_source(const std::string& arg) {
  std::string ext = std::filesystem::path(arg).extension().string();
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++";
}

ir::Workload default_workload(const ir::Kernel& k, int64_t n, const std::vector<std::string>& overrides) {
  ir::Workload w;
  uint32_t group = k.fixed_workgroup() ? k.workgroup_threads() : kDefaultWorkgroup;
  w.dims = samples::grid_1d(n, group);
  if (k.fixed_workgroup()) w.dims.workgroup = k.workgroup_size;
  w.tolerance = 0;
  for (const ir::BufferParam& b : k.buffers) {
    bool is_int = b.elem.is_int() || b.elem.is_bool();
    double lo = is_int ? 0 : -1, hi = is_int ? (b.elem.is_bool() ? 1 : 15) : 1;
    switch (b.access) {
      case ir::Access::Read: w.buffers.push_back(samples::input_spec(size_t(n), lo, hi)); break;
      case ir::Access::Write: w.buffers.push_back(samples::output_spec(size_t(n))); break;
      default: w.buffers.push_back(samples::inout_spec(size_t(n), lo, hi)); break;
    }
    w.bytes += double(n) * b.elem.bytes() * (b.access == ir::Access::ReadWrite ? 2 : 1);
    // Reductions may sum in another order than the interpreter: a little slack.
    if (b.elem.is_float()) w.tolerance = std::max(w.tolerance, std::max(1e-4, samples::elementwise_tolerance(b.elem.scalar())));
  }
  for (const ir::ScalarParam& s : k.scalars) {
    if (is_size_name(s.name)) w.scalars.push_back(samples::slot_as(s.type, double(n)));
    else w.scalars.push_back(samples::slot_as(s.type, s.type.is_float() ? 1.5 : 1.0));
  }
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--scalar '" + o + "': expected NAME=VALUE");
    std::string name = o.substr(0, eq);
    auto it = std::find_if(k.scalars.begin(), k.scalars.end(), [&](const ir::ScalarParam& s) { return s.name == name; });
    if (it == k.scalars.end()) {
      std::string known;
      for (const ir::ScalarParam& s : k.scalars) known += " " + s.name;
      throw std::runtime_error("--scalar: kernel '" + k.name + "' has no scalar '" + name + "'; its scalars:" +
                               (known.empty() ? " (none)" : known));
    }
    if (is_size_name(name))
      throw std::runtime_error("--scalar " + name + ": '" + name + "' is the problem size, which sizes the buffers too; set it with --n");
    w.scalars[size_t(it - k.scalars.begin())] = parse_slot(it->type, name, o.substr(eq + 1));
  }
  return w;
}

std::string describe_scalars(const ir::Kernel& k, const ir::Workload& w) {
  std::string s;
  for (size_t i = 0; i < k.scalars.size() && i < w.scalars.size(); ++i) {
    ir::Type t = k.scalars[i].type;
    uint64_t slot = w.scalars[i];
    std::string v;
    if (t.kind == ir::ScalarKind::F32) v = number(from_slot<float>(slot));
    else if (t.kind == ir::ScalarKind::F64) v = number(from_slot<double>(slot));
    else if (t.kind == ir::ScalarKind::F16) v = number(ir::f16_to_f32(uint16_t(slot)));
    else if (t.kind == ir::ScalarKind::BF16) v = number(ir::bf16_to_f32(uint16_t(slot)));
    else if (t.is_signed()) v = std::to_string(int64_t(slot << (64 - t.bits())) >> (64 - t.bits()));
    else v = std::to_string(t.bits() == 64 ? slot : slot & ((uint64_t(1) << t.bits()) - 1));
    if (!s.empty()) s += ", ";
    s += k.scalars[i].name + " = " + v;
  }
  return s;
}

FileKernel load_file_kernel(const std::string& path, const FileKernelOptions& opt) {
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error("'" + path + "': no such file");
  translate::Options topt;
  topt.include_dirs = opt.include_dirs;
  topt.defines = opt.defines;
  FileKernel fk;
  fk.kernel = translate::translate_kernel(path, opt.kernel, topt);
  if (const dsl::KernelEntry* e = registered_twin(fk.kernel)) {
    if (!opt.scalars.empty())
      throw std::runtime_error("--scalar: '" + fk.kernel.name + "' runs with the workload of registered kernel '" + e->name +
                               "', whose scalars follow --n");
    fk.n = opt.n > 0 ? opt.n : e->default_n;
    fk.workload = e->workload(fk.n);
    fk.workload_from = "the workload of registered kernel '" + e->name + "'";
    return fk;
  }
  fk.n = opt.n > 0 ? opt.n : kDefaultN;
  fk.workload = default_workload(fk.kernel, fk.n, opt.scalars);
  fk.workload_from = "the default workload (1-D grid, n-element buffers)";
  return fk;
}

}  // namespace kgen::tools
