#include "graph/onnx/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "graph/onnx/import.h"

namespace kgen::graph {

namespace {

struct DtypeName {
  int onnx;
  ScalarKind kind;
};
constexpr DtypeName kDtypes[] = {
    {1, ScalarKind::F32},  {2, ScalarKind::U8},   {3, ScalarKind::I8},   {4, ScalarKind::U16},
    {5, ScalarKind::I16},  {6, ScalarKind::I32},  {7, ScalarKind::I64},  {9, ScalarKind::Bool},
    {10, ScalarKind::F16}, {11, ScalarKind::F64}, {12, ScalarKind::U32}, {13, ScalarKind::U64},
    {16, ScalarKind::BF16},
};
const char* kOnnxTypeNames[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
                                "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128",
                                "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                "uint4", "int4", "float4e2m1"};

// An external_data value that must be a whole decimal integer.
int64_t external_int(const std::string& key, const std::string& value, const std::string& where) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size())
    throw ModelError(where + ": external data " + key + " '" + value + "' is not an integer");
  return v;
}

std::vector<uint8_t> read_external(const onnx::TensorProto& t, const std::string& dir, const std::string& where,
                                   size_t want) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = external_int(kv.key(), kv.value(), where);
    else if (kv.key() == "length") length = external_int(kv.key(), kv.value(), where);
  }
  if (dir.empty()) throw ModelError(where + ": external data is not allowed here");
  if (location.empty() || location.find("..") != std::string::npos || location[0] == '/')
    throw ModelError(where + ": external data location '" + location + "' must be a file beside the model");
  if (offset < 0) throw ModelError(where + ": external data offset " + std::to_string(offset) + " is negative");
  if (length < -1 || (length >= 0 && size_t(length) != want))
    throw ModelError(where + ": external data length " + std::to_string(length) + " does not match the shape (" +
                     std::to_string(want) + " bytes)");
  const std::string path = dir + "/" + location;
  std::error_code ec;
  std::ifstream f;
  if (std::filesystem::is_regular_file(path, ec)) f.open(path, std::ios::binary);
  if (!f.is_open()) throw ModelError(where + ": cannot open external data '" + path + "'");
  f.seekg(0, std::ios::end);
  const int64_t size = f.tellg();
  if (size < 0 || offset > size || int64_t(want) > size - offset)
    throw ModelError(where + ": external data '" + location + "' is " + std::to_string(size) + " bytes, needs " +
                     std::to_string(offset) + " + " + std::to_string(want));
  std::vector<uint8_t> bytes(want);
  f.seekg(offset);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(want)))
    throw ModelError(where + ": cannot read external data '" + location + "'");
  return bytes;
}

template <class Field>
void check_count(const Field& f, int64_t n, const std::string& where) {
  if (int64_t(f.size()) != n)
    throw ModelError(where + ": holds " + std::to_string(f.size()) + " values, its shape needs " + std::to_string(n));
}

}  // namespace

ScalarKind onnx_dtype(int elem_type, const std::string& where) {
  for (const auto& d : kDtypes)
    if (d.onnx == elem_type) return d.kind;
  std::string name = elem_type >= 0 && elem_type < int(std::size(kOnnxTypeNames)) ? kOnnxTypeNames[elem_type]
                                                                                  : std::to_string(elem_type);
  throw ModelError(where + ": element type " + name + " is not supported");
}

int onnx_elem_type(ScalarKind k) {
  for (const auto& d : kDtypes)
    if (d.kind == k) return d.onnx;
  return 0;
}

Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& dir, const std::string& where) {
  const ScalarKind k = onnx_dtype(t.data_type(), where);
  Shape shape;
  double total = 1, extent = 1;  // extent: zero dims as 1, so that numel() cannot overflow past a 0
  for (int64_t d : t.dims()) {
    if (d < 0) throw ModelError(where + ": negative dimension " + std::to_string(d));
    total *= double(d);
    extent *= double(std::max<int64_t>(d, 1));
    shape.push_back(d);
  }
  if (total * double(dtype_bytes(k)) > 64e9) throw ModelError(where + ": larger than 64 GB");
  if (extent > 0x1p62) throw ModelError(where + ": dimensions " + shape_str(shape) + " overflow");
  const int64_t n = numel(shape);
  const size_t bytes = size_t(n) * dtype_bytes(k);
  // Every stored size is checked against the shape before the tensor is allocated.
  std::vector<uint8_t> ext;
  const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
  if (external) {
    ext = read_external(t, dir, where, bytes);
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      throw ModelError(where + ": raw_data holds " + std::to_string(t.raw_data().size()) + " bytes, its shape " +
                       shape_str(shape) + " needs " + std::to_string(bytes));
  } else if (n == 0) {
    // empty tensor: nothing stored
  } else if (k == ScalarKind::F32) {
    check_count(t.float_data(), n, where);
  } else if (k == ScalarKind::F64) {
    check_count(t.double_data(), n, where);
  } else if (k == ScalarKind::I64) {
    check_count(t.int64_data(), n, where);
  } else if (k == ScalarKind::U32 || k == ScalarKind::U64) {
    check_count(t.uint64_data(), n, where);
  } else {
    check_count(t.int32_data(), n, where);
  }
  Tensor r(k, shape);
  uint8_t* out = r.mutable_data();
  if (external) {
    if (bytes) std::memcpy(out, ext.data(), bytes);
  } else if (t.has_raw_data()) {
    if (bytes) std::memcpy(out, t.raw_data().data(), bytes);
  } else if (n == 0) {
  } else if (k == ScalarKind::F32) {
    std::memcpy(out, t.float_data().data(), bytes);
  } else if (k == ScalarKind::F64) {
    std::memcpy(out, t.double_data().data(), bytes);
  } else if (k == ScalarKind::I64) {
    std::memcpy(out, t.int64_data().data(), bytes);
  } else if (k == ScalarKind::U64) {
    std::memcpy(out, t.uint64_data().data(), bytes);
  } else if (k == ScalarKind::U32) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t v = uint32_t(t.uint64_data(int(i)));  // the low 32 bits, as for int32_data below
      std::memcpy(out + size_t(i) * 4, &v, 4);
    }
  } else {
    // int32_data: int32, int16, int8, uint16, uint8, bool, and the bit patterns of f16/bf16.
    const size_t eb = dtype_bytes(k);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = t.int32_data(int(i));
      std::memcpy(out + size_t(i) * eb, &v, eb);  // little endian: the low bytes
    }
  }
  return r;
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto& out) {
  out.Clear();
  out.set_name(name);
  out.set_data_type(onnx_elem_type(t.dtype));
  for (int64_t d : t.shape) out.add_dims(d);
  out.set_raw_data(t.data(), t.bytes());
}

}  // namespace kgen::graph
