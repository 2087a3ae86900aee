#include "graph/model_io.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/onnx/import.h"

namespace kgen::graph {

namespace {

// numpy .npy v1/v2/v3: little-endian, C order.
Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ModelError("cannot open '" + path + "'");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw ModelError(path + ": not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    uint16_t h;
    f.read(reinterpret_cast<char*>(&h), 2);
    hlen = h;
  } else {
    f.read(reinterpret_cast<char*>(&hlen), 4);
  }
  if (!f || hlen > (1u << 20)) throw ModelError(path + ": bad .npy header");
  std::string header(hlen, '\0');
  if (!f.read(header.data(), hlen)) throw ModelError(path + ": truncated .npy header");
  auto field = [&](const std::string& key) {
    auto p = header.find("'" + key + "'");
    if (p == std::string::npos) throw ModelError(path + ": .npy header without '" + key + "'");
    return header.substr(header.find(':', p) + 1);
  };
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) throw ModelError(path + ": Fortran order");
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  static const std::pair<const char*, ScalarKind> kinds[] = {
      {"<f4", ScalarKind::F32}, {"<f8", ScalarKind::F64}, {"<f2", ScalarKind::F16}, {"|u1", ScalarKind::U8},
      {"|i1", ScalarKind::I8},  {"<i4", ScalarKind::I32}, {"<i8", ScalarKind::I64}, {"|b1", ScalarKind::Bool},
      {"<u2", ScalarKind::U16}, {"<i2", ScalarKind::I16}, {"<u4", ScalarKind::U32}, {"<u8", ScalarKind::U64}};
  ScalarKind k = ScalarKind::Void;
  for (auto& [d, kk] : kinds)
    if (descr == d) k = kk;
  if (k == ScalarKind::Void) throw ModelError(path + ": .npy dtype '" + descr + "' is not supported");
  std::string s = field("shape");
  s = s.substr(s.find('(') + 1, s.find(')') - s.find('(') - 1);
  Shape shape;
  std::stringstream ss(s);
  double elems = 1;
  for (std::string tok; std::getline(ss, tok, ',');) {
    if (tok.find_first_of("0123456789") == std::string::npos) continue;
    int64_t d = -1;
    try {
      d = std::stoll(tok);
    } catch (const std::exception&) {
    }
    if (d < 0) throw ModelError(path + ": bad .npy shape (" + s + ")");
    shape.push_back(d);
    elems *= double(std::max<int64_t>(d, 1));
  }
  // The data must be there before a tensor of the declared size is allocated.
  const auto data_at = f.tellg();
  f.seekg(0, std::ios::end);
  const double avail = double(f.tellg() - data_at);
  f.seekg(data_at);
  if (elems > 0x1p62 || double(numel(shape)) * double(dtype_bytes(k)) > avail)
    throw ModelError(path + ": truncated (shape (" + s + ") of " + descr + " needs more than the " +
                     std::to_string(int64_t(avail)) + " bytes of data)");
  Tensor t(k, shape);
  if (!f.read(reinterpret_cast<char*>(t.mutable_data()), std::streamsize(t.bytes())))
    throw ModelError(path + ": truncated (" + std::to_string(t.bytes()) + " bytes of data expected)");
  return t;
}

std::vector<std::string> numbered(const std::string& dir, const std::string& stem) {
  std::vector<std::string> r;
  for (int i = 0;; ++i) {
    std::string p = dir + "/" + stem + std::to_string(i) + ".pb";
    if (!std::filesystem::exists(p)) break;
    r.push_back(p);
  }
  return r;
}

}  // namespace

Tensor load_tensor_file(const std::string& path) {
  if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") return load_npy(path);
  return load_tensor_pb(path);
}

TestData load_test_data(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw ModelError("test data folder '" + dir + "' does not exist");
  TestData d;
  for (const auto& p : numbered(dir, "input_")) {
    std::string name;
    d.inputs.push_back(load_tensor_pb(p, &name));
    d.input_names.push_back(name);
  }
  for (const auto& p : numbered(dir, "output_")) {
    std::string name;
    d.outputs.push_back(load_tensor_pb(p, &name));
    d.output_names.push_back(name);
  }
  if (d.inputs.empty() && d.outputs.empty()) throw ModelError(dir + ": no input_N.pb or output_N.pb files");
  return d;
}

Tensor fit_to_input(const Graph& g, size_t input, Tensor t) {
  const Value& v = g.values[size_t(g.inputs.at(input))];
  if (v.dims.empty() || t.shape.size() == v.dims.size()) return t;
  Shape declared;
  for (const Dim& d : v.dims) declared.push_back(d.known() ? d.size : 1);
  if (numel(declared) != t.numel()) return t;
  t.shape = declared;
  return t;
}

OutputCheck compare_tensors(const Tensor& got, const Tensor& want, double rtol, double atol) {
  OutputCheck c;
  if (got.shape != want.shape || got.dtype != want.dtype) {
    c.mismatches = std::max<int64_t>(1, want.numel());
    c.worst = "got " + std::string(ir::scalar_name(got.dtype)) + shape_str(got.shape) + ", expected " +
              std::string(ir::scalar_name(want.dtype)) + shape_str(want.shape);
    c.max_abs_err = c.max_rel_err = INFINITY;
    return c;
  }
  double worst_excess = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get(i), w = want.get(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double d = (std::isinf(w) && g == w) ? 0.0 : std::fabs(g - w);
    const double rel = d / std::max(std::fabs(w), 1e-30);
    c.max_abs_err = std::max(c.max_abs_err, std::isnan(d) ? INFINITY : d);
    c.max_rel_err = std::max(c.max_rel_err, std::isnan(rel) ? INFINITY : std::min(rel, 1e30));
    const double excess = std::isnan(d) ? INFINITY : d - (atol + rtol * std::fabs(w));
    if (excess > 0) {
      ++c.mismatches;
      if (excess > worst_excess) {
        worst_excess = excess;
        std::ostringstream os;
        os.precision(9);
        os << "element " << i << ": got " << g << ", expected " << w;
        c.worst = os.str();
      }
    }
  }
  return c;
}

}  // namespace kgen::graph
