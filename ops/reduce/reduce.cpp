// The "reduce" op: sum / max / min / mean / argmax of an f32 tensor over one
// axis. dims = the shape (rank 1..6); attrs axis (default: the last), kind
// 0 sum | 1 max | 2 min | 3 mean | 4 argmax, idx (argmax output) 0 i32 | 1 i64.
//
// The shape collapses to (outer, n, inner) around the axis. Kernels:
//  - rows (inner == 1, CPU): a workgroup of one work-item per row walks it
//    in 16-lane lines (built from consecutive elements, so any n and any row
//    alignment: clang emits unaligned vector loads) with per-lane
//    accumulators, then a scalar tail, then a horizontal fold.
//  - columns (inner > 1, CPU): a work-item owns cl lines of contiguous inner
//    elements (up to 8 KiB of each step of the reduced axis) with their
//    accumulators in an L1 array, taking rb steps per pass (sums), or (rb =
//    0) up to 16 lines with accumulators in registers (max, min, argmax);
//    the last group takes the leftover lines and the < 16 element tail.
//  - GPU: one work-item per output element looping over the axis (simple);
//    for the last axis (inner == 1) also a workgroup per row (group): its
//    work-items read the row's consecutive elements in turn (coalesced) and
//    combine their partials through the subgroup where the device has one,
//    else a shared-memory tree (ops/common/gpu_reduce.h). With one work-item per
//    row, a few long rows kept a few work-items busy, each looping over the
//    whole row (and llvmpipe stops any loop past 65535 iterations).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "ops/reduce/reduce.h"
#include "ops/reduce/strategy.h"

#include "dsl/dsl.h"
#include "ops/elementwise/broadcast.h"
#include "ops/common/gpu_reduce.h"
#include "ops/layout/transpose_block.h"
#include "ops/common/wrapped_group.h"
#include "runtimes/check.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace kgen::ops::reduce_op;

namespace {

// Rows per work-item of the narrow rows kernel.
constexpr uint32_t kNarrowRows = 256;

Shape shape_of(const Problem& p) {
  if (p.dims.empty() || p.dims.size() > 6) throw std::invalid_argument("dims: the shape, rank 1..6");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("only f32 for now");
  const int R = int(p.dims.size());
  int64_t axis = p.attr("axis", R - 1);
  if (axis < 0) axis += R;
  if (axis < 0 || axis >= R) throw std::invalid_argument("axis out of range");
  Shape s;
  for (int a = 0; a < R; ++a) {
    if (p.dims[size_t(a)] < 1) throw std::invalid_argument("sizes must be >= 1");
    (a < axis ? s.outer : a == axis ? s.n : s.inner) *= p.dims[size_t(a)];
  }
  s.kind = int(p.attr("kind"));
  if (s.kind < 0 || s.kind > kArgmax) throw std::invalid_argument("kind must be 0..4 (sum max min mean argmax)");
  s.i64 = p.attr("idx") != 0;
  if (double(s.outer) * double(s.n) * double(s.inner) >= 2e9) throw std::invalid_argument("too large: 32-bit indices");
  return s;
}

ir::Type out_type(const Shape& s) { return s.kind == kArgmax ? (s.i64 ? ir::Type(i64) : ir::Type(i32)) : ir::Type(f32); }

const char* kind_name(int k) {
  static const char* n[] = {"sum", "max", "min", "mean", "argmax"};
  return n[k];
}

// Running state of a reduction on scalars or lines: the value (and for
// argmax the index of its first occurrence).
struct Acc {
  int kind, lanes;
  Var v, idx;
  static Acc make(int kind, int lanes) {
    auto T = [&](ir::Type t) { return lanes == 1 ? t : line(t, lanes); };
    float init = kind == kMax || kind == kArgmax ? -INFINITY : kind == kMin ? INFINITY : 0.0f;
    Value c = constant(f32, init);
    Var v = var(lanes == 1 ? c : splat(c, lanes));
    Var idx = var(lanes == 1 ? constant(i32, 0) : splat(constant(i32, 0), lanes));
    (void)T;
    return Acc{kind, lanes, v, idx};
  }
  void add(const Value& x, const Value& i /* i32 of the same lanes */) {
    switch (kind) {
      case kSum: case kMean: v = v.get() + x; break;
      // v < x ? x : v, the reference's std::max(v, x): one vmaxps (x86's
      // maxps(x, v) is exactly that), where max() (IEEE maxNum) adds a NaN
      // compare and blend per line. A NaN x is skipped either way; v is never
      // NaN.
      case kMax: v = select(x > v.get(), x, v.get()); break;
      case kMin: v = select(x < v.get(), x, v.get()); break;
      default: {
        Value gt = x > v.get();  // strict: the first occurrence wins within a lane
        idx = select(gt, i, idx.get());
        v = select(gt, x, v.get());
      }
    }
  }
};

// Folds a line accumulator into scalars (value, index).
std::pair<Value, Value> fold(const Acc& a) {
  if (a.lanes == 1) return {a.v.get(), a.idx.get()};
  Value v = a.v.get();
  switch (a.kind) {
    case kSum: case kMean: return {reduce_add(v), Value()};
    // Trees: log2(16) dependent steps rather than 15 (max/min exact either
    // way), which short rows feel.
    case kMax: return {tree_max(v), Value()};
    case kMin: return {tree_min(v), Value()};
    default: break;
  }
  // argmax: the largest value, ties to the smallest index, as two trees
  // (the max, then the least index among the lanes holding it) where a
  // chain of 15 compares and selects per row made short rows slow. The lanes
  // never hold a NaN (the strict > of add() never takes one), so the max is
  // exact.
  Value iv = a.idx.get();
  Value m = tree_max(v);
  Value bi = tree_min(select(v == splat(m, a.lanes), iv, splat(constant(i32, INT32_MAX), a.lanes)));
  return {m, bi};
}

void store_result(const Array& y, const Value& at, int kind, bool i64out, const Value& v, const Value& i, const Value& n) {
  if (kind == kArgmax) y[at] = i64out ? cast(i64, i) : i;
  else if (kind == kMean) y[at] = v / cast(f32, n);
  else y[at] = v;
}

std::string kname(const char* impl, const Shape& s) {
  return std::string("reduce_") + impl + "_" + kind_name(s.kind) + (s.kind == kArgmax && s.i64 ? "_i64" : "");
}

// Rows: grid = outer rows, one work-item each.
ir::Kernel rows_kernel(const Shape& s) {
  return kernel(kname("rows", s), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    Value r = group_id(0);
    Value base = r * n;
    Acc lines = Acc::make(s.kind, 16);
    Value full = n / 16u * 16u;
    Value lane_ids = make_line(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for_range(0u, full, [&](Value j) { lines.add(load_line(x, base + j), splat(cast(i32, j), 16) + lane_ids); }, 16u);
    auto [lv, li] = fold(lines);
    Acc tail = Acc::make(s.kind, 1);
    tail.v = lv;
    if (s.kind == kArgmax) tail.idx = li;
    for_range(full, n, [&](Value j) { tail.add(x[base + j], cast(i32, j)); });
    store_result(y, r, s.kind, s.i64, tail.v.get(), tail.idx.get(), n);
  });
}

// Narrow rows (the last axis, n = 2..32, CPU): 16 rows at a time with a
// row per lane. The n lines holding 16 rows become n column lines
// (ops/layout/transpose_block.h: deinterleave_lines), which fold lane-wise in column
// order (argmax: strictly greater, so the first occurrence wins), where the
// row walk spends a horizontal fold and a scalar tail on every row. grid =
// ceil(outer / kNarrowRows); the last rows (under 16) one at a time.
ir::Kernel narrow_rows_kernel(const Shape& s) {
  const uint32_t N = uint32_t(s.n);
  return kernel(kname("narrow", s) + std::to_string(N), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto rows = kb.scalar("rows", u32);
    kb.workgroup(1);
    Value r0 = group_id(0) * kNarrowRows, r_end = min(r0 + kNarrowRows, rows);
    Value full = (r_end - r0) / 16u;
    for_range(0u, full, [&](Value b) {
      Value rb = r0 + b * 16u;
      std::vector<Value> in;
      for (uint32_t k = 0; k < N; ++k) in.push_back(load_line(x, rb * N + k * 16u));
      std::vector<Value> cols = deinterleave_lines(in);
      Acc a = Acc::make(s.kind, 16);
      for (uint32_t c = 0; c < N; ++c) a.add(cols[c], splat(constant(i32, int32_t(c)), 16));
      if (s.kind == kArgmax && !s.i64) {
        store_line(y, rb, a.idx.get());
      } else if (s.kind == kArgmax) {
        for (int q = 0; q < 16; ++q) y[cast(u64, rb) + uint64_t(q)] = cast(i64, extract(a.idx.get(), q));
      } else {
        store_line(y, rb, s.kind == kMean ? a.v.get() / splat(constant(f32, float(N)), 16) : a.v.get());
      }
    });
    for_range(r0 + full * 16u, r_end, [&](Value r) {
      Acc a = Acc::make(s.kind, 1);
      for (uint32_t c = 0; c < N; ++c) a.add(x[r * N + c], constant(i32, int32_t(c)));
      store_result(y, r, s.kind, s.i64, a.v.get(), a.idx.get(), constant(u32, N));
    });
  });
}

// Short columns (inner = P of 2..15, CPU; sum, mean, max, min): the reduced
// axis and the inner one are one contiguous run of n·P values per outer
// index, read as lines; line j's lane e belongs to column (16j + e) % P, so
// Q = P / gcd(P, 16) accumulator lines take the lines in turn and fold into
// the P columns at the end. A work-item takes a chunk of `rows` steps of
// the axis (grid: chunks, outer) and writes its P partial results (mean:
// the partial sums / n) to part[outer][chunk][P]; a second step reduces the
// chunks. (The columns kernels walk each of the P columns alone with a
// stride of P.)
ir::Kernel periodic_cols_kernel(const Shape& s) {
  const uint32_t P = uint32_t(s.inner), Q = P / std::gcd(P, 16u);
  return kernel(kname("periodic", s) + std::to_string(P), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto part = kb.output("part", f32);
    auto n = kb.scalar("n", u32);
    auto rows = kb.scalar("rows", u32);  // steps of the axis per chunk
    kb.workgroup(1);
    Value c = group_id(0), o = group_id(1), nchunks = num_groups(0);
    Value r0 = c * rows, r1 = min(r0 + rows, n);
    Value base = cast(u64, o * n + r0) * uint64_t(P), count = (r1 - r0) * P;
    std::vector<Acc> acc;
    for (uint32_t q = 0; q < Q; ++q) acc.push_back(Acc::make(s.kind, 16));
    Value lane0 = splat(constant(i32, 0), 16);
    Value full = count / (16u * Q);
    for_range(0u, full, [&](Value j) {
      for (uint32_t q = 0; q < Q; ++q) acc[q].add(load_line(x, base + cast(u64, j * (16u * Q) + 16u * q)), lane0);
    });
    // The columns from the lines, then the rest (under 16·Q values) one by one.
    std::vector<Acc> col;
    for (uint32_t k = 0; k < P; ++k) col.push_back(Acc::make(s.kind, 1));
    for (uint32_t q = 0; q < Q; ++q)
      for (uint32_t e = 0; e < 16; ++e) col[(16 * q + e) % P].add(extract(acc[q].v.get(), int(e)), constant(i32, 0));
    Value done = full * (16u * Q);
    for_range(done, count, [&](Value k) {
      Value v = x[base + cast(u64, k)];
      for (uint32_t m = 0; m < P; ++m)
        if_(k % P == m, [&] { col[m].add(v, constant(i32, 0)); });
    });
    for (uint32_t k = 0; k < P; ++k) {
      Value v = col[k].v.get();
      part[(o * nchunks + c) * P + k] = s.kind == kMean ? v / cast(f32, n) : v;
    }
  });
}

// The columns kernels' shared pieces: a line accumulator's 16 results at
// output `at` (the mean divided, argmax's indices), and the < 16 columns past
// the last whole line, one scalar accumulator each.
void store_line_results(const Array& y, const Shape& s, const Value& n, const Value& at, const Value& v, const Value& idx) {
  Value r = s.kind == kMean ? v / splat(cast(f32, n), 16) : v;
  for (int q = 0; q < 16; ++q) {
    Value o = cast(u64, at) + uint64_t(q);
    if (s.kind == kArgmax) y[o] = s.i64 ? cast(i64, extract(idx, q)) : extract(idx, q);
    else y[o] = extract(r, q);
  }
}
void store_column_tail(const Array& x, const Array& y, const Shape& s, const Value& n, const Value& inner,
                       const Value& xbase, const Value& obase) {
  for_range(inner / 16u * 16u, inner, [&](Value q) {
    Acc a = Acc::make(s.kind, 1);
    for_range(0u, n, [&](Value r) { a.add(x[xbase + r * inner + q], cast(i32, r)); });
    store_result(y, obase + q, s.kind, s.i64, a.v.get(), a.idx.get(), n);
  });
}

// Columns: grid = (ceil(inner / (16·W)), outer). A work-item owns W lines
// (16·W contiguous inner elements) with their accumulators in an array (L1),
// and walks the reduced axis R steps at a time: each line's accumulator is
// loaded, takes R steps' lines in registers, and is stored back. Along a
// step it reads 64·W contiguous bytes, so with W = 128 (8 KiB) the reads
// are as sequential as a row reduction's; accumulators in registers (8
// lines, 512 bytes per step 16 KiB apart) kept the prefetchers short, and
// W = 128 R = 4 sums a 4096² axis 0 as fast as a row reduction. R = 1 (load,
// add, store per step) runs at half that. The order of
// each element's steps is unchanged (0, 1, ..., n - 1). The last group takes
// the leftover lines (a runtime count up to W) and the < 16 element tail.
ir::Kernel cols_kernel(const Shape& s, int lines_per_item, int steps_per_pass) {
  const uint32_t W = uint32_t(lines_per_item), R = uint32_t(steps_per_pass);
  return kernel(kname("cols", s) + "_w" + std::to_string(W) + "_r" + std::to_string(R), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto n = kb.scalar("n", u32);
    auto inner = kb.scalar("inner", u32);
    kb.workgroup(1);
    const bool arg = s.kind == kArgmax;
    Array vals = shared_array(line(f32, 16), W);
    Array idxs = arg ? shared_array(line(i32, 16), W) : Array();
    Value o = group_id(1), g = group_id(0);
    Value nfull = inner / 16u;
    Value l0 = g * W;
    Value nl = select(l0 < nfull, min(nfull - l0, W), 0u);
    Value obase = o * inner;
    Value xbase = o * n * inner;
    for_range(0u, nl, [&](Value l) {
      Acc a = Acc::make(s.kind, 16);
      vals[l] = a.v.get();
      if (arg) idxs[l] = a.idx.get();
    });
    // Steps [r0, r0 + count) into each line's accumulator.
    auto pass = [&](const Value& r0, uint32_t count) {
      // 64-bit offsets: per step a base outside the line loop, so clang
      // strength-reduces the loads' addresses (u32 arithmetic must wrap
      // before it is widened, which keeps each load's add and extend).
      std::vector<Value> step_at;
      for (uint32_t q = 0; q < count; ++q) step_at.push_back(cast(u64, xbase + (r0 + q) * inner + l0 * 16u));
      for_range(0u, nl, [&](Value l) {
        Acc a{s.kind, 16, var(Value(vals[l])), var(arg ? Value(idxs[l]) : splat(constant(i32, 0), 16))};
        Value off = cast(u64, l) * uint64_t(16);
        for (uint32_t q = 0; q < count; ++q) a.add(load_line(x, step_at[q] + off), splat(cast(i32, r0 + q), 16));
        vals[l] = a.v.get();
        if (arg) idxs[l] = a.idx.get();
      });
    };
    Value nr = n / R * R;
    for_range(0u, nr, [&](Value r0) { pass(r0, R); }, R);
    for_range(nr, n, [&](Value r) { pass(r, 1); });
    for_range(0u, nl, [&](Value l) {
      store_line_results(y, s, n, obase + (l0 + l) * 16u, Value(vals[l]), arg ? Value(idxs[l]) : Value());
    });
    // The < 16 element tail, by the last group.
    if_(l0 + W >= nfull && nfull * 16u < inner, [&] { store_column_tail(x, y, s, n, inner, xbase, obase); });
  });
}

// Columns in registers (rb = 0): grid = (ceil(inner / (16·W)), outer). A
// work-item owns W lines (W ≤ 16) with W accumulators in registers and
// walks every step of the reduced axis; the last group takes the remaining
// whole lines one by one and the < 16 element tail.
ir::Kernel cols_registers_kernel(const Shape& s, int lines_per_item) {
  const int kColLines = lines_per_item;
  return kernel(kname("cols", s) + "_reg" + std::to_string(kColLines), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto n = kb.scalar("n", u32);
    auto inner = kb.scalar("inner", u32);
    kb.workgroup(1);
    Value o = group_id(1), g = group_id(0);
    Value nfull = inner / 16u;
    Value l0 = g * uint32_t(kColLines);
    Value obase = o * inner;
    Value xbase = o * n * inner;
    auto store_line = [&](const Acc& a, const Value& j0) { store_line_results(y, s, n, obase + j0, a.v.get(), a.idx.get()); };
    if_(l0 + uint32_t(kColLines) <= nfull, [&] {
      std::vector<Acc> acc;
      for (int q = 0; q < kColLines; ++q) acc.push_back(Acc::make(s.kind, 16));
      for_range(0u, n, [&](Value r) {
        Value row = xbase + r * inner + l0 * 16u;
        Value rv = splat(cast(i32, r), 16);
        for (int q = 0; q < kColLines; ++q) acc[size_t(q)].add(load_line(x, row + uint32_t(16 * q)), rv);
      });
      for (int q = 0; q < kColLines; ++q) store_line(acc[size_t(q)], l0 * 16u + uint32_t(16 * q));
    }).else_([&] {
      for_range(l0, nfull, [&](Value li) {
        Acc a = Acc::make(s.kind, 16);
        for_range(0u, n, [&](Value r) { a.add(load_line(x, xbase + r * inner + li * 16u), splat(cast(i32, r), 16)); });
        store_line(a, li * 16u);
      });
      store_column_tail(x, y, s, n, inner, xbase, obase);
    });
  });
}

// GPU: one work-item per output element (outer * inner of them).
ir::Kernel simple_kernel(const Shape& s, int wg) {
  return kernel(kname("simple", s) + "_wg" + std::to_string(wg), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto n = kb.scalar("n", u32);
    auto inner = kb.scalar("inner", u32);
    auto total = kb.scalar("total", u32);
    kb.workgroup(uint32_t(wg));
    Value e = wrapped_group_id() * uint32_t(wg) + local_id(0);
    if_(e < total, [&] {
      Value o = e / inner, q = e - o * inner;
      Value base = o * n * inner + q;
      Acc a = Acc::make(s.kind, 1);
      for_range(0u, n, [&](Value r) { a.add(x[base + r * inner], cast(i32, r)); });
      store_result(y, e, s.kind, s.i64, a.v.get(), a.idx.get(), n);
    });
  });
}

// GPU, the last axis: a workgroup of wg (a power of two) per row. Work-item
// t takes elements t, t + wg, ...; group_argmax keeps argmax's first
// occurrence (ties go to the smaller index). Rows past `rows` (the wrapped
// grid's last groups) run the barriers and store nothing.
ir::Kernel group_kernel(const Shape& s, int wg, bool subgroups) {
  if (wg < 2 || (wg & (wg - 1))) throw std::invalid_argument("reduce: impl=3 wg must be a power of two >= 2");
  const uint32_t WG = uint32_t(wg);
  return kernel(kname("group", s) + (subgroups ? "_sg" : "") + "_wg" + std::to_string(wg), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", out_type(s));
    auto n = kb.scalar("n", u32);
    auto rows = kb.scalar("rows", u32);
    kb.workgroup(WG);
    auto sv = shared_array(f32, WG);
    Value row = wrapped_group_id(), t = local_id(0);
    Value base = row * n, end = select(row < rows, n, constant(u32, 0u));
    Acc a = Acc::make(s.kind, 1);
    for_range(t, end, [&](Value r) { a.add(x[base + r], cast(i32, r)); }, WG);
    // Rows past the wrapped grid's end take part in the barriers, store nothing.
    if (s.kind == kArgmax) {
      auto si = shared_array(i32, WG);
      auto [v, i] = group_argmax(a.v.get(), a.idx.get(), sv, si, WG, subgroups);
      if_(t == 0u && row < rows, [&] { store_result(y, row, s.kind, s.i64, v, i, n); });
      return;
    }
    const GroupCombine c = s.kind == kMax ? GroupCombine::Max : s.kind == kMin ? GroupCombine::Min : GroupCombine::Sum;
    Value v = group_reduce(a.v.get(), c, sv, WG, subgroups);
    if_(t == 0u && row < rows, [&] { store_result(y, row, s.kind, s.i64, v, Value(), n); });
  });
}

Step group_step(const Shape& s, int wg, bool subgroups) {
  Step st;
  st.kernel = group_kernel(s, wg, subgroups);
  st.dims.grid = wrapped_grid(s.outer);
  st.dims.workgroup = {uint32_t(wg), 1, 1};
  st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.outer))};
  st.buffers = {0, 1};
  return st;
}

// i32 values as the little-endian words of i64 ones (the low word, then the
// sign), for targets without 64-bit integers (WGSL).
ir::Kernel i64_words_kernel() {
  return kernel("i32_as_i64_words", [&](KernelBuilder& kb) {
    auto x = kb.input("x", i32);
    auto y = kb.output("y", u32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(256);
    Value i = wrapped_group_id() * 256u + local_id(0);
    if_(i < n, [&] {
      Value w = x[i];
      y[i * 2u] = bitcast(u32, w);
      y[i * 2u + 1u] = select(w < 0, constant(u32, 0xffffffffu), constant(u32, 0u));
    });
  });
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  Shape s = shape_of(p);
  Plan pl;
  if (s.kind == kArgmax && s.i64 && !caps.i64) {
    // The i32 argmax into a temporary, then its indices as i64 words.
    Problem q = p;
    q.attrs["idx"] = 0;
    const int64_t n = s.outer * s.inner;
    const int t = pl.add_temp(2, size_t(n) * 4);
    pl.append(2, plan(q, v, caps), 2, {0, t});
    Step w;
    w.kernel = i64_words_kernel();
    w.dims.grid = wrapped_grid(groups_for(n, 256));
    w.dims.workgroup = {256, 1, 1};
    w.buffers = {t, 1};
    w.scalars = {ir::scalar_slot(uint32_t(n))};
    pl.steps.push_back(std::move(w));
    return pl;
  }
  Step st;
  st.buffers = {0, 1};
  int impl = int(v.get("impl"));
  if (impl == kGroup) {
    if (s.inner != 1) throw std::invalid_argument("reduce: impl=3 (a workgroup per row) reduces the last axis (or one followed by size-1 axes)");
    const bool sg = v.get("sg", caps.subgroups ? 1 : 0) != 0;
    if (sg && !caps.subgroups) throw std::invalid_argument("reduce: sg=1 needs a device with subgroups");
    pl.steps.push_back(group_step(s, int(v.get("wg", 256)), sg));
    return pl;
  }
  if (impl == kNarrow) {
    if (!is_cpu(caps) || s.inner != 1 || s.n < 2 || s.n > 32)
      throw std::invalid_argument("reduce: impl=4 (16 rows in lanes) is for the CPU and a last axis of 2..32 values");
    st.kernel = narrow_rows_kernel(s);
    st.dims.grid = {groups_for(s.outer, kNarrowRows), 1, 1};
    st.scalars = {ir::scalar_slot(uint32_t(s.outer))};
    pl.steps.push_back(std::move(st));
    return pl;
  }
  if (impl == kPeriodic) {
    if (!is_cpu(caps) || s.inner < 2 || s.inner > 15 || s.kind == kArgmax)
      throw std::invalid_argument("reduce: impl=5 (short columns) is a CPU sum/mean/max/min with 2..15 values inside the axis");
    // Chunks of about 64 KiB of the axis.
    const int64_t rows = std::max<int64_t>(1, 16384 / s.inner), nchunks = (s.n + rows - 1) / rows;
    const int part = pl.add_temp(2, size_t(s.outer * nchunks * s.inner) * 4);
    Step a;
    a.kernel = periodic_cols_kernel(s);
    a.dims.grid = {uint32_t(nchunks), uint32_t(s.outer), 1};
    a.buffers = {0, part};
    a.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(rows))};
    pl.steps.push_back(std::move(a));
    // The chunks' partial results (means already divided by n: summed).
    Shape s2 = s;
    s2.n = nchunks;
    if (s2.kind == kMean) s2.kind = kSum;
    Step b;
    b.kernel = cols_registers_kernel(s2, 1);
    b.dims.grid = {1, uint32_t(s.outer), 1};
    b.buffers = {part, 1};
    b.scalars = {ir::scalar_slot(uint32_t(s2.n)), ir::scalar_slot(uint32_t(s2.inner))};
    pl.steps.push_back(std::move(b));
    return pl;
  }
  if (impl == kRows && s.inner != 1) impl = kCols;
  if (impl == kCols && s.inner == 1) impl = kRows;
  if (impl == kRows) {
    st.kernel = rows_kernel(s);
    st.dims.grid = {uint32_t(s.outer), 1, 1};
    st.scalars = {ir::scalar_slot(uint32_t(s.n))};
  } else if (impl == kCols) {
    // Unset parameters as the heuristic would set them.
    const int r = int(v.get("rb", column_steps(s)));
    const int w = int(v.get("cl", column_lines(s, r, caps)));
    if (w < 1 || w > 256 || r < 0 || r > 16 || (r == 0 && w > 16))
      throw std::invalid_argument("reduce: cl (lines per work-item) 1..256 (1..16 with rb = 0), rb (steps per pass; 0: accumulators in registers) 0..16");
    st.kernel = r ? cols_kernel(s, w, r) : cols_registers_kernel(s, w);
    st.dims.grid = {groups_for(s.inner, 16 * w), uint32_t(s.outer), 1};
    st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.inner))};
  } else {
    int wg = int(v.get("wg", 64));
    int64_t total = s.outer * s.inner;
    st.kernel = simple_kernel(s, wg);
    st.dims.grid = wrapped_grid(groups_for(total, wg));
    st.dims.workgroup = {uint32_t(wg), 1, 1};
    st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.inner)), ir::scalar_slot(uint32_t(total))};
  }
  pl.steps.push_back(std::move(st));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Shape s = shape_of(p);
  const float* x = static_cast<const float*>(in[0]);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t q = 0; q < s.inner; ++q) {
      double acc = s.kind == kMax || s.kind == kArgmax ? -INFINITY : s.kind == kMin ? INFINITY : 0.0;
      int64_t best = 0;
      for (int64_t r = 0; r < s.n; ++r) {
        double v = x[(o * s.n + r) * s.inner + q];
        if (s.kind == kSum || s.kind == kMean) acc += v;
        else if (s.kind == kMax) acc = std::max(acc, v);
        else if (s.kind == kMin) acc = std::min(acc, v);
        else if (v > acc) acc = v, best = r;
      }
      int64_t at = o * s.inner + q;
      if (s.kind == kArgmax) {
        if (s.i64) static_cast<int64_t*>(out[0])[at] = best;
        else static_cast<int32_t*>(out[0])[at] = int32_t(best);
      } else {
        static_cast<float*>(out[0])[at] = float(s.kind == kMean ? acc / double(s.n) : acc);
      }
    }
}

Problem prob(std::vector<int64_t> dims, int axis, int kind, int idx = 0) {
  Problem p;
  p.op = "reduce";
  p.dims = std::move(dims);
  p.attrs = {{"axis", axis}, {"kind", kind}};
  if (idx) p.attrs["idx"] = idx;
  return p;
}

}  // namespace

Step reduce_rows_group_step(int64_t rows, int64_t n, int kind, int wg, bool subgroups) {
  if (kind < kSum || kind > kArgmax) throw std::invalid_argument("reduce_rows_group_step: kind must be 0..4");
  Shape s;
  s.outer = rows, s.n = n, s.kind = kind;
  return group_step(s, wg, subgroups);
}

namespace {

// Every key the candidates, the heuristic and the plan read.
std::vector<VariantKey> reduce_variant_keys() {
  return {key_set("impl", "implementation", {kRows, kCols, kSimple, kGroup, kNarrow, kPeriodic},
                  "0 row walk, 1 columns, 2 a work-item per output (GPU), 3 a workgroup per row (GPU), "
                  "4 16 rows in lanes, 5 short columns as periodic lines"),
          key_range("cl", "column_lines", 1, 256, "16-lane lines per work-item of the columns kernel (1..16 with rb 0)"),
          key_range("rb", "column_steps", 0, 16, "steps of the axis per pass over the L1 accumulators (0: accumulators in registers)"),
          key_range("wg", "workgroup", 1, 1024, "work-items per workgroup (impl 2; impl 3: a power of two)"),
          key_set("sg", "subgroups", {0, 1}, "1: the workgroup combines through subgroup reductions (impl 3)")};
}

}  // namespace

void register_reduce_ops() {
  OpDef d;
  d.name = "reduce";
  d.attr_defaults = {{"kind", 0}, {"idx", 0}};
  d.description = "sum/max/min/mean/argmax of an f32 tensor over one axis";
  d.dims_help = "shape (rank 1..6)";
  d.attrs_help = "axis=<i> (default last) kind=0 sum|1 max|2 min|3 mean|4 argmax idx=0 i32|1 i64 (argmax output)";
  d.validate = [](const Problem& p) { shape_of(p); };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("x", ir::Type(f32), p.dims)}; };
  d.outputs = [](const Problem& p) {
    Shape s = shape_of(p);
    std::vector<int64_t> os;
    int64_t axis = p.attr("axis", int64_t(p.dims.size()) - 1);
    if (axis < 0) axis += int64_t(p.dims.size());
    for (size_t a = 0; a < p.dims.size(); ++a)
      if (int64_t(a) != axis) os.push_back(p.dims[a]);
    if (os.empty()) os = {1};
    return std::vector<TensorSpec>{tensor("y", out_type(s), os)};
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    Shape s = shape_of(p);
    std::vector<Variant> v;
    if (is_cpu(caps)) {
      if (s.inner == 1) v.push_back(Variant{}.set("impl", kRows));
      if (s.inner == 1 && s.n >= 2 && s.n <= 32) v.push_back(Variant{}.set("impl", kNarrow));
      if (s.inner >= 2 && s.inner <= 15 && s.kind != kArgmax) v.push_back(Variant{}.set("impl", kPeriodic));
      if (s.inner != 1)
        for (auto [w, r] : {std::pair{16, 4}, {32, 4}, {64, 4}, {128, 4}, {32, 8}, {128, 2}, {8, 0}, {16, 0}})
          v.push_back(Variant{}.set("impl", kCols).set("cl", w).set("rb", r));
    }
    for (int wg : {64, 256})
      if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads) {
        v.push_back(Variant{}.set("impl", kSimple).set("wg", wg));
        if (s.inner == 1)
          for (int sg = 0; sg <= (caps.subgroups ? 1 : 0); ++sg) v.push_back(Variant{}.set("impl", kGroup).set("wg", wg).set("sg", sg));
      }
    return v;
  };
  d.heuristic = [](const Problem& p, const TargetCaps& caps) { return reduce_op::heuristic(shape_of(p), caps); };
  d.variant_keys = reduce_variant_keys();
  // argmax draws whole numbers in [-16, 16]: ties in every longer row, so
  // the checks exercise "the first occurrence" (lanes, work-items and
  // workgroup trees each break ties by index); the others uniform [-1, 1].
  d.make_input = [](const Problem& p, int, std::vector<uint8_t>& bytes, uint64_t seed) {
    const bool ties = shape_of(p).kind == kArgmax;
    ir::BufferSpec spec;
    spec.elems = bytes.size() / sizeof(float);
    spec.lo = ties ? -16.0 : -1.0, spec.hi = ties ? 16.0 : 1.0;
    std::mt19937_64 rng(seed);
    rt::fill_random(ir::Type(f32), spec, bytes, rng);
    if (!ties) return;
    for (size_t i = 0; i < spec.elems; ++i) {
      float v;
      std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
      v = std::round(v);
      std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    }
  };
  d.plan = plan;
  d.reference = reference;
  // Sums: per-lane partial sums in f32, error ~ eps * sqrt(n) of the rms
  // result for random signs; 16x margin. max/min/argmax are exact.
  d.tolerance = [](const Problem& p) {
    Shape s = shape_of(p);
    return s.kind == kSum || s.kind == kMean ? 16 * 1.2e-7 * std::sqrt(double(s.n)) + 1e-6 : 0.0;
  };
  // sqrt(Σx²) over a reduction (÷ n for the mean), from the whole input's
  // mean square: the size of a random-sign sum, which the tolerance above is
  // relative to, also where a result happens to cancel to near zero.
  d.error_scale = [](const Problem& p, const std::vector<std::vector<uint8_t>>& in) {
    Shape s = shape_of(p);
    if (s.kind != kSum && s.kind != kMean) return 0.0;
    const float* x = reinterpret_cast<const float*>(in[0].data());
    const size_t count = in[0].size() / sizeof(float);
    double ss = 0;
    for (size_t i = 0; i < count; ++i) ss += double(x[i]) * double(x[i]);
    const double per_sum = std::sqrt(ss / double(std::max<size_t>(count, 1)) * double(s.n));
    return s.kind == kMean ? per_sum / double(s.n) : per_sum;
  };
  d.flops = [](const Problem& p) {
    Shape s = shape_of(p);
    return double(s.outer * s.n * s.inner);
  };
  d.bytes = [](const Problem& p) {
    Shape s = shape_of(p);
    return 4.0 * double(s.outer * s.n * s.inner) + double(out_type(s).bytes()) * double(s.outer * s.inner);
  };
  d.memory_bound = true;
  // Every kind on every axis of an odd 3-D and 4-D shape.
  for (int kind = 0; kind <= kArgmax; ++kind) {
    for (int axis = 0; axis < 3; ++axis) d.test_problems.push_back(prob({5, 37, 19}, axis, kind));
    for (int axis = 0; axis < 4; ++axis) d.test_problems.push_back(prob({3, 4, 5, 33}, axis, kind));
  }
  d.test_problems.push_back(prob({7, 1000}, 1, kArgmax, 1));
  d.test_problems.push_back(prob({1}, 0, kSum));
  d.test_problems.push_back(prob({4097}, 0, kMean));
  d.test_problems.push_back(prob({3, 64, 48}, 1, kMax));
  for (int kind : {kSum, kMin, kMean, kArgmax}) d.test_problems.push_back(prob({3, 5, 300}, 1, kind));  // 8-line blocks
  d.test_problems.push_back(prob({9, 256}, 0, kMax));
  // Column groups with leftover lines (70 and 130 lines: 64- and 128-line
  // groups end short) and a 5-element tail; step counts not a multiple of
  // the passes' 2, 4 or 8.
  for (int kind : {kSum, kArgmax}) d.test_problems.push_back(prob({37, 16 * 70 + 5}, 0, kind));
  d.test_problems.push_back(prob({2, 11, 16 * 130}, 1, kMin));
  // GPU: a workgroup per row (impl=3 from 256 elements), rows of a
  // partial last pass; argmax of a row longer than llvmpipe lets one
  // work-item loop (65535), which the work-item-per-row kernel could not.
  for (int kind : {kSum, kMax, kArgmax}) d.test_problems.push_back(prob({3, 1000}, 1, kind));
  d.test_problems.push_back(prob({2, 70001}, 1, kArgmax));
  // Narrow rows (16 in lanes, impl=4): remainder rows, a second group of 256, ties (argmax), i64 indices.
  for (int kind : {kSum, kMax, kMin, kMean, kArgmax}) d.test_problems.push_back(prob({300, 10}, 1, kind));
  d.test_problems.push_back(prob({37, 3}, 1, kArgmax, 1));
  d.test_problems.push_back(prob({600, 24}, 1, kSum));
  d.test_problems.push_back(prob({2, 20, 2}, 2, kMin));
  // Short columns (impl=5): chunks of the axis with a remainder (sum, max), several chunks (mean), outer > 1.
  d.test_problems.push_back(prob({300, 3}, 0, kSum));
  d.test_problems.push_back(prob({2, 5000, 5}, 1, kMax));
  d.test_problems.push_back(prob({60000, 7}, 0, kMean));  // (under llvmpipe's 65535-iteration loop limit)
  d.test_problems.push_back(prob({37, 15}, 0, kMin));
  d.bench_problems.push_back(prob({4096, 4096}, 1, kSum));
  d.bench_problems.push_back(prob({4096, 4096}, 0, kSum));
  d.bench_problems.push_back(prob({4096, 4096}, 1, kArgmax));
  register_op(std::move(d));
}

}  // namespace kgen::ops
