// GatherElements and GatherND (ops/layout/index_moves.h): one work-item per
// output word. GatherElements moves elements (8-byte ones as u32 pairs),
// GatherND whole slices as the widest words that divide one.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/layout/index_moves.h"
#include "ops/layout/index_read.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

using namespace kgen::dsl;
using index_read::as;
using index_read::position;
using move::numel;

namespace {

// A zero word where the index is out of range, else the source word.
void move_word(const Array& x, const Value& src, const Array& y, const Value& dst, const Value& ok, ir::Type wt) {
  if_(ok, [&] { y[dst] = x[src]; }).else_([&] { y[dst] = constant(wt, 0); });
}

// ---- GatherElements ----

void validate(const GatherElements& g) {
  const std::string w = "GatherElements: ";
  index_read::check_elem_bytes(g.elem_bytes, w);
  index_read::check_index_kind(g.index_kind, w);
  index_read::check_shape(g.data_shape, 1, 8, w + "data: ");
  index_read::check_shape(g.index_shape, 1, 8, w + "indices: ");
  const size_t R = g.data_shape.size();
  if (g.index_shape.size() != R) throw std::invalid_argument(w + "indices must have the data's rank");
  if (g.axis < 0 || g.axis >= int64_t(R)) throw std::invalid_argument(w + "axis out of range");
  for (size_t k = 0; k < R; ++k)
    if (int64_t(k) != g.axis && g.index_shape[k] > g.data_shape[k])
      throw std::invalid_argument(w + "indices larger than the data on axis " + std::to_string(k));
}

ir::Kernel gather_elements_kernel(size_t R, int64_t axis, ir::Type wt, ir::Type it, bool i64, const MoveVariant& v) {
  const std::string name = "gather_elements_r" + std::to_string(R) + "_a" + std::to_string(axis) + "_" + wt.str() +
                           (i64 ? "_i64_" : "_i32_") + it.str();
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("data", wt);
    auto idx = kb.input("indices", u32);
    auto y = kb.output("y", wt);
    move::Walk walk(kb, it, v);
    auto L = kb.scalar("axis_len", u32);
    std::vector<Value> dims, strides;
    for (size_t k = 0; k < R; ++k) {
      dims.push_back(kb.scalar("dim" + std::to_string(k), it));
      strides.push_back(kb.scalar("data_stride" + std::to_string(k), it));
    }
    const Value& W = walk.inner();  // words per element
    walk.for_element([&](const Value& e, const Value& col) {
      const std::vector<Value> c = move::unflatten(e, dims);
      auto [i, ok] = position(idx, e, i64, L);
      Value src = as(it, i) * strides[size_t(axis)];
      for (size_t k = 0; k < R; ++k)
        if (int64_t(k) != axis) src = src + c[k] * strides[k];
      move_word(x, src * W + col, y, e * W + col, ok, wt);
    });
  });
}

// ---- GatherND ----

struct NdLayout {
  int64_t batches, tuples, k, inner, slab;  // tuples per batch, slices per batch's slab
  std::vector<int64_t> lens, strides;        // per tuple component, strides in slices
};

NdLayout nd_layout(const std::vector<int64_t>& data, const std::vector<int64_t>& index, int64_t b) {
  NdLayout l;
  l.k = index.back();
  l.batches = numel(data, 0, size_t(b));
  l.tuples = numel(index, size_t(b), index.size() - 1);
  l.inner = numel(data, size_t(b + l.k));
  l.slab = numel(data, size_t(b), size_t(b + l.k));
  for (int64_t j = 0; j < l.k; ++j) {
    l.lens.push_back(data[size_t(b + j)]);
    l.strides.push_back(numel(data, size_t(b + j + 1), size_t(b + l.k)));
  }
  return l;
}

void validate(const GatherND& g) {
  const std::string w = "GatherND: ";
  index_read::check_elem_bytes(g.elem_bytes, w);
  index_read::check_index_kind(g.index_kind, w);
  index_read::check_shape(g.data_shape, 1, 8, w + "data: ");
  index_read::check_shape(g.index_shape, 1, 8, w + "indices: ");
  const int64_t r = int64_t(g.data_shape.size()), q = int64_t(g.index_shape.size());
  if (g.batch_dims < 0 || g.batch_dims >= std::min(r, q)) throw std::invalid_argument(w + "batch_dims out of range");
  const int64_t k = g.index_shape.back();
  if (k < 1 || k > r - g.batch_dims) throw std::invalid_argument(w + "index tuples of " + std::to_string(k) + " for " +
                                                                  std::to_string(r - g.batch_dims) + " axes after the batch");
  for (int64_t a = 0; a < g.batch_dims; ++a)
    if (g.data_shape[size_t(a)] != g.index_shape[size_t(a)]) throw std::invalid_argument(w + "batch axes differ");
}

ir::Kernel gather_nd_kernel(int64_t k, ir::Type wt, ir::Type it, bool i64, const MoveVariant& v) {
  const std::string name = "gather_nd_k" + std::to_string(k) + "_" + wt.str() + (i64 ? "_i64_" : "_i32_") + it.str();
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("data", wt);
    auto idx = kb.input("indices", u32);
    auto y = kb.output("y", wt);
    move::Walk walk(kb, it, v);
    auto tuples = kb.scalar("tuples", it);
    auto slab = kb.scalar("slab", it);
    std::vector<Value> lens, strides;
    for (int64_t j = 0; j < k; ++j) {
      lens.push_back(kb.scalar("len" + std::to_string(j), u32));
      strides.push_back(kb.scalar("stride" + std::to_string(j), it));
    }
    const Value& W = walk.inner();  // words per slice
    walk.for_element([&](const Value& row, const Value& col) {
      Value slice = row / tuples * slab, ok;
      for (int64_t j = 0; j < k; ++j) {
        auto [i, in_range] = position(idx, row * uint32_t(k) + uint32_t(j), i64, lens[size_t(j)]);
        slice = slice + as(it, i) * strides[size_t(j)];
        ok = j == 0 ? in_range : (ok && in_range);
      }
      move_word(x, slice * W + col, y, row * W + col, ok, wt);
    });
  });
}

}  // namespace

std::vector<int64_t> gather_elements_out_shape(const GatherElements& g) {
  validate(g);
  return g.index_shape;
}

void plan_gather_elements(Plan& pl, const GatherElements& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v) {
  validate(g);
  const int64_t n = numel(g.index_shape);
  if (n == 0) return;
  const int wb = index_read::word_bytes(g.elem_bytes);
  const int64_t W = g.elem_bytes / wb;
  const ir::Type it = move::index_type(std::max({numel(g.data_shape) * W, n * W, 2 * n}));
  MoveVariant ev = v;
  ev.rows = false;  // the element form: one index per output element
  Step s;
  s.kernel = gather_elements_kernel(g.data_shape.size(), g.axis, move::word_type(wb), it, g.index_kind == ir::ScalarKind::I64, ev);
  s.buffers = {data_slot, idx_slot, out_slot};
  s.scalars = {ir::scalar_slot(uint32_t(g.data_shape[size_t(g.axis)]))};
  const std::vector<int64_t> st = move::contiguous_strides(g.data_shape);
  for (size_t k = 0; k < g.data_shape.size(); ++k)
    for (int64_t val : {g.index_shape[k], st[k]}) s.scalars.push_back(move::index_slot(it, val));
  move::set_launch(s, ev, it, n, W);
  pl.steps.push_back(std::move(s));
}

void reference_gather_elements(const GatherElements& g, const void* data, const void* idx, void* out) {
  validate(g);
  const size_t R = g.data_shape.size(), eb = size_t(g.elem_bytes);
  const std::vector<int64_t> st = move::contiguous_strides(g.data_shape);
  const int64_t n = numel(g.index_shape);
  std::vector<int64_t> c(R, 0);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t p = index_read::host_position(g.index_kind, idx, e, g.data_shape[size_t(g.axis)]);
    auto* dst = static_cast<uint8_t*>(out) + size_t(e) * eb;
    if (p < 0) {
      std::memset(dst, 0, eb);
    } else {
      int64_t src = p * st[size_t(g.axis)];
      for (size_t k = 0; k < R; ++k)
        if (int64_t(k) != g.axis) src += c[k] * st[k];
      std::memcpy(dst, static_cast<const uint8_t*>(data) + size_t(src) * eb, eb);
    }
    for (size_t a = R; a-- > 0;) {
      if (++c[a] < g.index_shape[a]) break;
      c[a] = 0;
    }
  }
}

std::vector<int64_t> gather_nd_out_shape(const GatherND& g) {
  validate(g);
  std::vector<int64_t> s(g.index_shape.begin(), g.index_shape.end() - 1);
  s.insert(s.end(), g.data_shape.begin() + g.batch_dims + g.index_shape.back(), g.data_shape.end());
  return s;
}

void plan_gather_nd(Plan& pl, const GatherND& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v) {
  validate(g);
  const NdLayout l = nd_layout(g.data_shape, g.index_shape, g.batch_dims);
  const int64_t rows = l.batches * l.tuples;
  if (rows == 0 || l.inner == 0) return;
  const int wb = index_read::word_bytes(l.inner * g.elem_bytes);
  const int64_t W = l.inner * g.elem_bytes / wb;
  const ir::Type it = move::index_type(std::max({numel(g.data_shape) * g.elem_bytes / wb, rows * W, 2 * rows * l.k}));
  MoveVariant ev = v;
  ev.rows = false;
  Step s;
  s.kernel = gather_nd_kernel(l.k, move::word_type(wb), it, g.index_kind == ir::ScalarKind::I64, ev);
  s.buffers = {data_slot, idx_slot, out_slot};
  s.scalars = {move::index_slot(it, l.tuples), move::index_slot(it, l.slab)};
  for (int64_t j = 0; j < l.k; ++j) {
    s.scalars.push_back(ir::scalar_slot(uint32_t(l.lens[size_t(j)])));
    s.scalars.push_back(move::index_slot(it, l.strides[size_t(j)]));
  }
  move::set_launch(s, ev, it, rows, W);
  pl.steps.push_back(std::move(s));
}

void reference_gather_nd(const GatherND& g, const void* data, const void* idx, void* out) {
  validate(g);
  const NdLayout l = nd_layout(g.data_shape, g.index_shape, g.batch_dims);
  const size_t bytes = size_t(l.inner) * size_t(g.elem_bytes);
  for (int64_t row = 0; row < l.batches * l.tuples; ++row) {
    int64_t slice = row / std::max<int64_t>(l.tuples, 1) * l.slab;
    for (int64_t j = 0; j < l.k && slice >= 0; ++j) {
      const int64_t p = index_read::host_position(g.index_kind, idx, row * l.k + j, l.lens[size_t(j)]);
      slice = p < 0 ? -1 : slice + p * l.strides[size_t(j)];
    }
    auto* dst = static_cast<uint8_t*>(out) + size_t(row) * bytes;
    if (slice < 0) std::memset(dst, 0, bytes);
    else std::memcpy(dst, static_cast<const uint8_t*>(data) + size_t(slice) * bytes, bytes);
  }
}

}  // namespace kgen::ops
