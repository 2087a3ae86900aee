#include "ops/layout/transpose_block.h"

#include <algorithm>
#include <vector>

#include "ops/common/widen.h"

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

namespace {

// The chain forms (gather_lanes): n - 1 shuffles a line, for any n.
std::vector<Value> deinterleave_chain(const std::vector<Value>& rows_major) {
  const int n = int(rows_major.size()), L = rows_major[0].type().lanes;
  std::vector<Value> out;
  for (int c = 0; c < n; ++c) {
    std::vector<std::pair<int, int>> lanes;
    for (int r = 0; r < L; ++r) lanes.push_back({(r * n + c) / L, (r * n + c) % L});
    out.push_back(gather_lanes(rows_major, lanes));
  }
  return out;
}
std::vector<Value> interleave_chain(const std::vector<Value>& columns) {
  const int n = int(columns.size()), L = columns[0].type().lanes;
  std::vector<Value> out;
  for (int l = 0; l < n; ++l) {
    std::vector<std::pair<int, int>> lanes;
    for (int i = 0; i < L; ++i) lanes.push_back({(L * l + i) % n, (L * l + i) / n});
    out.push_back(gather_lanes(columns, lanes));
  }
  return out;
}

// One line from lanes of a and b (lane i: b's when from_b(i), at index at(i)).
template <class FromB, class At>
Value two_source(const Value& a, const Value& b, int L, FromB from_b, At at) {
  std::vector<Value> v;
  for (int i = 0; i < L; ++i) v.push_back(extract(from_b(i) ? b : a, at(i)));
  return make_line(v);
}

int trailing_twos(int n) {
  int s = 0;
  while (n % 2 == 0) n /= 2, ++s;
  return s;
}
int bit_reverse(int x, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((x >> b) & 1) << (bits - 1 - b);
  return r;
}

}  // namespace

// n = 2^s · m: s stages that split each group of lines into its even and
// odd elements (2 shuffles per pair of lines: n a stage), then the chain
// within each of the 2^s groups of m lines: n·(s + m - 1) shuffles against
// the chain's n·(n - 1) (n = 8: 24 against 56; 16: 64 against 240). After
// stage k the groups are the columns by their low k bits, bit-reversed.
std::vector<Value> deinterleave_lines(const std::vector<Value>& rows_major) {
  const int n = int(rows_major.size()), L = rows_major[0].type().lanes, s = trailing_twos(n), m = n >> s;
  std::vector<std::vector<Value>> groups = {rows_major};
  for (int k = 0; k < s; ++k) {
    std::vector<std::vector<Value>> next;
    for (const auto& g : groups) {
      std::vector<Value> ev, od;
      for (size_t j = 0; j + 1 < g.size(); j += 2) {
        auto from_b = [&](int i) { return i >= L / 2; };
        ev.push_back(two_source(g[j], g[j + 1], L, from_b, [&](int i) { return 2 * (i % (L / 2)); }));
        od.push_back(two_source(g[j], g[j + 1], L, from_b, [&](int i) { return 2 * (i % (L / 2)) + 1; }));
      }
      next.push_back(ev);
      next.push_back(od);
    }
    groups = next;
  }
  std::vector<Value> out(static_cast<size_t>(n));
  for (int g = 0; g < (1 << s); ++g) {
    std::vector<Value> cols = m > 1 ? deinterleave_chain(groups[size_t(g)]) : groups[size_t(g)];
    const int c_low = bit_reverse(g, s);
    for (int t = 0; t < m; ++t) out[size_t(c_low + (t << s))] = cols[size_t(t)];
  }
  return out;
}

std::vector<Value> interleave_lines(const std::vector<Value>& columns) {
  const int n = int(columns.size()), L = columns[0].type().lanes, s = trailing_twos(n), m = n >> s;
  std::vector<std::vector<Value>> groups(size_t(1) << s);
  for (int g = 0; g < (1 << s); ++g) {
    std::vector<Value> cols;
    for (int t = 0; t < m; ++t) cols.push_back(columns[size_t(bit_reverse(g, s) + (t << s))]);
    groups[size_t(g)] = m > 1 ? interleave_chain(cols) : cols;
  }
  // The stages undone, last first: groups 2h (evens) and 2h + 1 (odds) zip
  // back into one group of twice the lines.
  for (int k = 0; k < s; ++k) {
    std::vector<std::vector<Value>> next;
    for (size_t h = 0; h < groups.size(); h += 2) {
      const auto &ev = groups[h], &od = groups[h + 1];
      std::vector<Value> g;
      for (size_t j = 0; j < ev.size(); ++j) {
        auto from_b = [](int i) { return i % 2 == 1; };
        g.push_back(two_source(ev[j], od[j], L, from_b, [](int i) { return i / 2; }));
        g.push_back(two_source(ev[j], od[j], L, from_b, [&](int i) { return L / 2 + i / 2; }));
      }
      next.push_back(g);
    }
    groups = next;
  }
  return groups[0];
}

void map_rows_in_lanes(const Array& x, const Value& xbase, uint32_t n, const Array& y, const Value& ybase, uint32_t m,
                       const Value& r0, const Value& r_end, const RowMap& f, int blocks) {
  auto half = [](ir::Type t) { return t.is_float() && t.bytes() == 2; };  // f16 / bf16 storage
  const bool wide_x = half(x.elem_type()), wide_y = half(y.elem_type());
  auto load = [&](const Value& v) { return wide_x ? cast(v.type().lanes > 1 ? line(f32, 16) : ir::Type(f32), v) : v; };
  auto store = [&](const Value& v) {
    return wide_y ? cast(v.type().lanes > 1 ? line(y.elem_type(), 16) : y.elem_type(), v) : v;
  };
  // Blocks starting at rows rb[0], rb[1], ...: all loaded and mapped, then all stored.
  auto step = [&](const std::vector<Value>& rb) {
    std::vector<std::vector<Value>> outs;
    for (const Value& r : rb) {
      std::vector<Value> in;
      for (uint32_t k = 0; k < n; ++k) in.push_back(load(load_line(x, xbase + cast(u64, r) * uint64_t(n) + uint64_t(16 * k))));
      outs.push_back(interleave_lines(f(deinterleave_lines(in), 16)));
    }
    for (size_t b = 0; b < rb.size(); ++b)
      for (uint32_t k = 0; k < m; ++k) store_line(y, ybase + cast(u64, rb[b]) * uint64_t(m) + uint64_t(16 * k), store(outs[b][k]));
  };
  Value full = (r_end - r0) / 16u;
  const uint32_t B = uint32_t(blocks);
  for_range(0u, full / B, [&](Value s) {
    std::vector<Value> rb;
    for (uint32_t b = 0; b < B; ++b) rb.push_back(r0 + (s * B + b) * 16u);
    step(rb);
  });
  for (uint32_t b = 1; b < B; ++b)  // the blocks past the last whole step, one at a time
    if_(full % B >= b, [&] { step({r0 + (full / B * B + b - 1u) * 16u}); });
  for_range(r0 + full * 16u, r_end, [&](Value r) {
    std::vector<Value> row;
    for (uint32_t c = 0; c < n; ++c) row.push_back(load(x[xbase + cast(u64, r) * uint64_t(n) + uint64_t(c)]));
    std::vector<Value> out = f(row, 1);
    for (uint32_t c = 0; c < m; ++c) y[ybase + cast(u64, r) * uint64_t(m) + uint64_t(c)] = store(out[c]);
  });
}

void store_transposed_block32(const Array& t, const Value& t_at, const Array& c, const Value& c_at, const Value& ldc,
                              const Value& rows, const Value& cols) {
  if_(rows == 32u && cols == 32u, [&] {
    for (uint32_t jb = 0; jb < 2; ++jb)
      for (uint32_t ib = 0; ib < 2; ++ib) {
        auto lines = transposed_block16(t, t_at + uint64_t(jb * 16 * 32 + ib * 16), constant(u64, uint64_t(32)));
        for (uint32_t i = 0; i < 16; ++i) store_line(c, c_at + uint64_t(ib * 16 + i) * ldc + uint64_t(jb * 16), lines[i]);
      }
  }).else_([&] {
    for_range(0u, cols, [&](Value i) {
      for_range(0u, rows, [&](Value j) { c[c_at + cast(u64, i) * ldc + cast(u64, j)] = t[t_at + cast(u64, j * 32u + i)]; });
    });
  });
}

}  // namespace kgen::ops
