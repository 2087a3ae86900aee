#include "ops/transpose_block.h"

#include <algorithm>
#include <vector>

#include "ops/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;

std::array<Value, 16> transpose16(const std::array<Value, 16>& rows) {
  std::array<Value, 16> r = rows;
  // Lane pairs first, 256-bit halves last: with the halves first clang
  // folded each row's load into two shuffles (a 32-byte and a 64-byte load
  // of the same line; the stages commute, so only the instructions differ).
  for (int b = 1; b <= 8; b *= 2) {
    std::array<Value, 16> next;
    for (int i = 0; i < 16; ++i) {
      if (i & b) continue;
      // rows i (bit b clear) and i + b: lanes with bit b set move across.
      std::vector<Value> lo, hi;
      for (int c = 0; c < 16; ++c) {
        lo.push_back(c & b ? extract(r[size_t(i + b)], c - b) : extract(r[size_t(i)], c));
        hi.push_back(c & b ? extract(r[size_t(i + b)], c) : extract(r[size_t(i)], c + b));
      }
      next[size_t(i)] = make_line(lo);
      next[size_t(i + b)] = make_line(hi);
    }
    r = next;
  }
  return r;
}

std::array<Value, 16> transposed_block16(const Array& src, const Value& at, const Value& stride) {
  // Rows as lanes inserted one by one (clang merges the loads), not
  // load_line: with those vector loads the GEMM kernels that pack their own
  // Bᵀ panels (pb) spilled registers.
  // u32 elements (the GEMM's bf16 pair words) stay as they are.
  const bool words = src.elem_type() == u32;
  std::array<Value, 16> rows;
  for (int i = 0; i < 16; ++i) {
    Value row = at + stride * uint64_t(i);
    if (!words && src.elem_type() != f32) {
      // f16/bf16: one 32-byte line load widened as a line (element casts
      // inserted one by one made bf16 Dn's in-kernel packing cost the gated
      // MLP's down projection 34.7 ms against 26.2 for f32 Dn).
      rows[size_t(i)] = as_f32(load_line(src, row));
      continue;
    }
    Var v = var(words ? splat(constant(u32, 0u), 16) : splat(0.0f, 16));  // f32 or u32 rows, as they are
    for (int j = 0; j < 16; ++j) v = insert(v, j, src[row + uint64_t(j)]);
    rows[size_t(i)] = v.get();
  }
  return transpose16(rows);
}

Value gather_lanes(const std::vector<Value>& src, const std::vector<std::pair<int, int>>& lanes) {
  const size_t L = lanes.size();
  std::vector<int> order;
  for (auto [s, l] : lanes)
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  // Sources 0 and 1 of the order in one shuffle (lanes of later sources
  // hold source 0's lane 0 until they are merged).
  const int s0 = order[0], s1 = order.size() > 1 ? order[1] : order[0];
  std::vector<Value> v;
  for (size_t i = 0; i < L; ++i) {
    auto [si, li] = lanes[i];
    v.push_back(si == s1 ? extract(src[size_t(s1)], li) : extract(src[size_t(s0)], si == s0 ? li : 0));
  }
  Value line = make_line(v);
  for (size_t k = 2; k < order.size(); ++k) {
    std::vector<Value> w;
    for (size_t i = 0; i < L; ++i) {
      auto [si, li] = lanes[i];
      w.push_back(si == order[k] ? extract(src[size_t(si)], li) : extract(line, int(i)));
    }
    line = make_line(w);
  }
  return line;
}

std::vector<Value> deinterleave_lines(const std::vector<Value>& rows_major) {
  const int n = int(rows_major.size()), L = rows_major[0].type().lanes;
  std::vector<Value> out;
  for (int c = 0; c < n; ++c) {
    std::vector<std::pair<int, int>> lanes;
    for (int r = 0; r < L; ++r) lanes.push_back({(r * n + c) / L, (r * n + c) % L});
    out.push_back(gather_lanes(rows_major, lanes));
  }
  return out;
}

std::vector<Value> interleave_lines(const std::vector<Value>& columns) {
  const int n = int(columns.size()), L = columns[0].type().lanes;
  std::vector<Value> out;
  for (int l = 0; l < n; ++l) {
    std::vector<std::pair<int, int>> lanes;
    for (int i = 0; i < L; ++i) lanes.push_back({(L * l + i) % n, (L * l + i) / n});
    out.push_back(gather_lanes(columns, lanes));
  }
  return out;
}

}  // namespace kgen::ops
