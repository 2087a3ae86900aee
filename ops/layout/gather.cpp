// Gather (ops/layout/data_movement.h): rows of `inner` elements, moved as
// the widest words (up to 4 bytes) that divide a row. Indices are read as
// u32 words on every target (an i64 index is its low and high word), so no
// kernel needs 64-bit integers for them.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/layout/data_movement.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

void validate(const Gather& g) {
  const std::string w = "Gather: ";
  if (g.elem_bytes != 1 && g.elem_bytes != 2 && g.elem_bytes != 4 && g.elem_bytes != 8)
    throw std::invalid_argument(w + "elem_bytes must be 1, 2, 4 or 8 (got " + std::to_string(g.elem_bytes) + ")");
  if (g.outer < 0 || g.axis_len < 0 || g.inner < 0 || g.n_indices < 0)
    throw std::invalid_argument(w + "outer, axis_len, inner and n_indices must be >= 0");
  if (g.axis_len >= (int64_t(1) << 31)) throw std::invalid_argument(w + "axis_len must be below 2^31");
  if (g.index_kind != ir::ScalarKind::I32 && g.index_kind != ir::ScalarKind::I64)
    throw std::invalid_argument(w + "index_kind must be I32 or I64");
  if (double(g.outer) * double(std::max(g.axis_len, g.n_indices)) * double(g.inner) * g.elem_bytes > 9e18)
    throw std::invalid_argument(w + "too large");
}

// The widest word (1, 2 or 4 bytes) a row of `inner` elements is made of.
int row_word(const Gather& g) {
  const int64_t bytes = g.inner * g.elem_bytes;
  return bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
}

Value as(ir::Type t, const Value& v) { return v.type() == t ? v : cast(t, v); }

// Index j's position on the axis (u32) and whether it is one: i32 values
// in [-L, 0) wrap onto [0, L) when L is added; an i64 one is in range when
// its high word is 0 (then lo < L) or all ones (then lo + L wraps below L).
std::pair<Value, Value> position(const Array& idx, const Value& j, bool i64, const Value& L) {
  if (!i64) {
    Value w = idx[j];
    Value i = select(w < L, w, w + L);
    return {i, i < L};
  }
  Value lo = idx[j * 2u], hi = idx[j * 2u + 1u];
  Value i = select(hi == 0u, lo, lo + L);
  Value ok = (hi == 0u && lo < L) || (hi == 0xffffffffu && lo + L < L);
  return {i, ok};
}

ir::Kernel gather_kernel(const Gather& g, ir::Type wt, ir::Type it, const MoveVariant& v) {
  const bool i64 = g.index_kind == ir::ScalarKind::I64;
  const std::string name = "gather_" + wt.str() + (i64 ? "_i64" : "_i32") + "_" + it.str() + (v.rows ? "_rows" : "_el");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("data", wt);
    auto idx = kb.input("indices", u32);
    auto y = kb.output("y", wt);
    move::Walk walk(kb, it, v);
    auto L = kb.scalar("axis_len", u32);
    auto n = kb.scalar("n_indices", it);
    auto outer = kb.scalar("outer", it);
    const Value& W = walk.inner();  // words per row
    // Output row (o, j): its source row (o, idx[j]) when the index is one.
    auto source = [&](const Value& o, const Value& j) {
      auto [i, ok] = position(idx, j, i64, L);
      return std::pair{(o * as(it, L) + as(it, i)) * W, ok};
    };
    if (!v.rows) {
      walk.for_element([&](const Value& row, const Value& col) {
        Value o = row / n;
        auto [src, ok] = source(o, row - o * n);
        Value dst = row * W + col;
        if_(ok, [&] { y[dst] = x[src + col]; }).else_([&] { y[dst] = constant(wt, 0); });
      });
      return;
    }
    walk.for_rows({outer, n}, [&](const std::vector<Value>& c, const Value& row, const Value& c0, const Value& c1) {
      auto [src, ok] = source(c[0], c[1]);
      Value dst = row * W;
      if_(ok, [&] { move::copy_run(x, src, y, dst, c0, c1); }).else_([&] {
        Value zero = constant(wt, 0);
        move::fill_run(y, dst, c0, c1, splat(zero, 16), [&](const Value&) { return zero; });
      });
    });
  });
}

}  // namespace

void plan_gather(Plan& pl, const Gather& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v) {
  validate(g);
  const int64_t rows = g.outer * g.n_indices;
  if (rows == 0 || g.inner == 0) return;
  const int wb = row_word(g);
  const int64_t W = g.inner * g.elem_bytes / wb;
  const ir::Type it = move::index_type(std::max({g.outer * g.axis_len * W, rows * W, 2 * g.n_indices}), v);
  Step s;
  s.kernel = gather_kernel(g, move::word_type(wb), it, v);
  s.buffers = {data_slot, idx_slot, out_slot};
  s.scalars = {ir::scalar_slot(uint32_t(g.axis_len)), move::index_slot(it, g.n_indices), move::index_slot(it, g.outer)};
  move::set_launch(s, v, it, rows, W);
  pl.steps.push_back(std::move(s));
}

void reference_gather(const Gather& g, const void* data, const void* idx, void* out) {
  validate(g);
  const size_t row = size_t(g.inner) * size_t(g.elem_bytes);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t j = 0; j < g.n_indices; ++j) {
      int64_t i = g.index_kind == ir::ScalarKind::I32 ? int64_t(static_cast<const int32_t*>(idx)[j])
                                                        : static_cast<const int64_t*>(idx)[j];
      if (i < 0) i += g.axis_len;
      auto* dst = static_cast<uint8_t*>(out) + size_t(o * g.n_indices + j) * row;
      if (i < 0 || i >= g.axis_len) std::memset(dst, 0, row);
      else std::memcpy(dst, static_cast<const uint8_t*>(data) + size_t(o * g.axis_len + i) * row, row);
    }
}

}  // namespace kgen::ops
