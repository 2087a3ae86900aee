// A host tensor: element type, shape and bytes. Initializers, constants the
// graph folds, model inputs and outputs travel as Tensors. The bytes are
// shared (copies are cheap) and may live in memory the tensor does not own
// (a memory-mapped weight file): `owner` keeps that memory alive.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/type.h"

namespace kgen::graph {

using ir::ScalarKind;
using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
size_t dtype_bytes(ScalarKind k);
std::string shape_str(const Shape& s);  // "[1, 3, 224, 224]"

struct Tensor {
  ScalarKind dtype = ScalarKind::F32;
  Shape shape;

  Tensor() = default;
  // Zero-filled tensor of the given type and shape.
  Tensor(ScalarKind dtype, Shape shape);
  // Wraps `bytes` bytes at `data` kept alive by `owner` (no copy).
  static Tensor wrap(ScalarKind dtype, Shape shape, const void* data, std::shared_ptr<const void> owner);

  int64_t numel() const { return graph::numel(shape); }
  size_t bytes() const { return size_t(numel()) * dtype_bytes(dtype); }
  const uint8_t* data() const { return data_; }
  // Writable bytes: copies first when the memory is shared or not owned.
  uint8_t* mutable_data();

  // Element i converted (exact for every integer up to 2^53, f16/bf16 widened).
  double get(int64_t i) const;
  int64_t get_int(int64_t i) const;
  void set(int64_t i, double v);  // converted as a C++ cast would (bool: v != 0)
  std::vector<int64_t> ints() const;     // every element as int64
  std::vector<double> doubles() const;
  // The elements converted to f32 in one pass (host preparation of weights:
  // get() per element costs a dtype switch each).
  Tensor to_f32() const;

  static Tensor from_ints(ScalarKind dtype, Shape shape, const std::vector<int64_t>& v);
  static Tensor scalar(ScalarKind dtype, double v);

 private:
  std::shared_ptr<const void> owner_;
  uint8_t* data_ = nullptr;
  bool writable_ = false;
};

}  // namespace kgen::graph
