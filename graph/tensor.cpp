#include "graph/tensor.h"

#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>

#include "ir/half.h"

namespace kgen::graph {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

size_t dtype_bytes(ScalarKind k) { return size_t(ir::Type(k).scalar_bytes()); }

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

Tensor::Tensor(ScalarKind dtype_, Shape shape_) : dtype(dtype_), shape(std::move(shape_)) {
  for (int64_t d : shape)
    if (d < 0) throw std::invalid_argument("tensor shape " + shape_str(shape) + " has a negative size");
  // 64-byte aligned: the CPU device uses constants in place, and its kernels
  // load whole 64-byte lines.
  const size_t n = (std::max<size_t>(bytes(), 1) + 63) / 64 * 64;
  auto* p = static_cast<uint8_t*>(::operator new[](n, std::align_val_t(64)));
  std::memset(p, 0, n);
  data_ = p;
  owner_ = std::shared_ptr<const void>(p, [](const void* q) { ::operator delete[](const_cast<void*>(q), std::align_val_t(64)); });
  writable_ = true;
}

Tensor Tensor::wrap(ScalarKind dtype, Shape shape, const void* data, std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data_ = static_cast<uint8_t*>(const_cast<void*>(data));
  t.owner_ = std::move(owner);
  t.writable_ = false;
  return t;
}

uint8_t* Tensor::mutable_data() {
  if (!writable_ || owner_.use_count() > 1) {
    Tensor copy(dtype, shape);
    if (bytes()) std::memcpy(copy.data_, data_, bytes());
    *this = copy;
  }
  return data_;
}

double Tensor::get(int64_t i) const {
  const uint8_t* p = data_ + size_t(i) * dtype_bytes(dtype);
  auto rd = [&](auto v) { std::memcpy(&v, p, sizeof v); return v; };
  switch (dtype) {
    case ScalarKind::Bool: return rd(uint8_t()) != 0;
    case ScalarKind::I8: return rd(int8_t());
    case ScalarKind::U8: return rd(uint8_t());
    case ScalarKind::I16: return rd(int16_t());
    case ScalarKind::U16: return rd(uint16_t());
    case ScalarKind::I32: return rd(int32_t());
    case ScalarKind::U32: return rd(uint32_t());
    case ScalarKind::I64: return double(rd(int64_t()));
    case ScalarKind::U64: return double(rd(uint64_t()));
    case ScalarKind::F16: return ir::f16_to_f32(rd(uint16_t()));
    case ScalarKind::BF16: return ir::bf16_to_f32(rd(uint16_t()));
    case ScalarKind::F32: return rd(float());
    case ScalarKind::F64: return rd(double());
    default: throw std::invalid_argument("tensor of type void");
  }
}

int64_t Tensor::get_int(int64_t i) const {
  const uint8_t* p = data_ + size_t(i) * dtype_bytes(dtype);
  if (dtype == ScalarKind::I64 || dtype == ScalarKind::U64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  double d = get(i);
  return std::isfinite(d) ? int64_t(d) : 0;
}

void Tensor::set(int64_t i, double v) {
  uint8_t* p = mutable_data() + size_t(i) * dtype_bytes(dtype);
  auto wr = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (dtype) {
    case ScalarKind::Bool: wr(uint8_t(v != 0)); break;
    case ScalarKind::I8: wr(int8_t(v)); break;
    case ScalarKind::U8: wr(uint8_t(v)); break;
    case ScalarKind::I16: wr(int16_t(v)); break;
    case ScalarKind::U16: wr(uint16_t(v)); break;
    case ScalarKind::I32: wr(int32_t(v)); break;
    case ScalarKind::U32: wr(uint32_t(v)); break;
    case ScalarKind::I64: wr(int64_t(v)); break;
    case ScalarKind::U64: wr(uint64_t(v)); break;
    case ScalarKind::F16: wr(ir::f32_to_f16(float(v))); break;
    case ScalarKind::BF16: wr(ir::f32_to_bf16(float(v))); break;
    case ScalarKind::F32: wr(float(v)); break;
    case ScalarKind::F64: wr(v); break;
    default: throw std::invalid_argument("tensor of type void");
  }
}

std::vector<int64_t> Tensor::ints() const {
  std::vector<int64_t> r(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) r[size_t(i)] = get_int(i);
  return r;
}

std::vector<double> Tensor::doubles() const {
  std::vector<double> r(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) r[size_t(i)] = get(i);
  return r;
}

namespace {
template <typename T, typename Conv>
void convert_all(const uint8_t* src, float* dst, int64_t n, Conv conv) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + size_t(i) * sizeof(T), sizeof(T));
    dst[i] = conv(v);
  }
}
}  // namespace

Tensor Tensor::to_f32() const {
  if (dtype == ScalarKind::F32) return *this;
  Tensor r(ScalarKind::F32, shape);
  auto* d = reinterpret_cast<float*>(r.data_);
  const int64_t n = numel();
  auto cast = [](auto v) { return float(v); };
  switch (dtype) {
    case ScalarKind::Bool: convert_all<uint8_t>(data_, d, n, [](uint8_t v) { return v ? 1.f : 0.f; }); break;
    case ScalarKind::I8: convert_all<int8_t>(data_, d, n, cast); break;
    case ScalarKind::U8: convert_all<uint8_t>(data_, d, n, cast); break;
    case ScalarKind::I16: convert_all<int16_t>(data_, d, n, cast); break;
    case ScalarKind::U16: convert_all<uint16_t>(data_, d, n, cast); break;
    case ScalarKind::I32: convert_all<int32_t>(data_, d, n, cast); break;
    case ScalarKind::U32: convert_all<uint32_t>(data_, d, n, cast); break;
    case ScalarKind::I64: convert_all<int64_t>(data_, d, n, cast); break;
    case ScalarKind::U64: convert_all<uint64_t>(data_, d, n, cast); break;
    case ScalarKind::F16: convert_all<uint16_t>(data_, d, n, [](uint16_t h) { return ir::f16_to_f32(h); }); break;
    case ScalarKind::BF16: convert_all<uint16_t>(data_, d, n, [](uint16_t h) { return ir::bf16_to_f32(h); }); break;
    case ScalarKind::F64: convert_all<double>(data_, d, n, cast); break;
    default: throw std::invalid_argument("tensor of type void");
  }
  return r;
}

Tensor Tensor::from_ints(ScalarKind dtype, Shape shape, const std::vector<int64_t>& v) {
  Tensor t(dtype, std::move(shape));
  if (size_t(t.numel()) != v.size()) throw std::invalid_argument("from_ints: value count does not match the shape");
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == ScalarKind::I64) std::memcpy(t.data_ + 8 * i, &v[i], 8);
    else t.set(int64_t(i), double(v[i]));
  }
  return t;
}

Tensor Tensor::scalar(ScalarKind dtype, double v) {
  Tensor t(dtype, {});
  t.set(0, v);
  return t;
}

}  // namespace kgen::graph
