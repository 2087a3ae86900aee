// Pooling ops, NCHW f32:
//   "maxpool2d", "avgpool2d": dims N C H W; attrs kernel_h kernel_w (default
//     2), stride_h stride_w (default: the kernel), pad_h pad_w (top, left:
//     at most half the kernel, as in PyTorch), pad_b pad_r (bottom, right:
//     default pad_h pad_w, below the kernel size; ONNX's asymmetric pads and
//     ceil_mode), count_include_pad (avg; 1 = divide by KH·KW, 0 = by the
//     in-bounds count). Padding never wins a max.
//   "global_avgpool": N C H W -> N C 1 1, the mean of each plane.
// Pooling is memory-bound: one work-item per output element (any target), on
// the CPU one work-item per output row with line accumulators (impl 1);
// global_avgpool on the CPU sums 16-lane lines per plane (impl 0), or 16
// planes of up to 256 values per work-item (impl 2), elsewhere one
// work-item per plane (impl 1) or, for planes of 256 or more, a workgroup
// per plane (impl 3, reduce's last-axis GPU form: ops/reduce/reduce.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/pool.h"
#include "ops/conv/strategy.h"
#include "ops/core/op.h"
#include "ops/reduce/reduce.h"

namespace kgen::ops {

using namespace kgen::dsl;

PoolShape pool_shape(const Problem& p) {
  PoolShape s;
  s.n = p.dim(0), s.c = p.dim(1), s.h = p.dim(2), s.w = p.dim(3);
  s.kh = p.attr("kernel_h", 2), s.kw = p.attr("kernel_w", 2);
  s.sh = p.attr("stride_h", s.kh), s.sw = p.attr("stride_w", s.kw);
  s.ph = p.attr("pad_h", 0), s.pw = p.attr("pad_w", 0);
  s.pb = p.attr("pad_b", s.ph), s.pr = p.attr("pad_r", s.pw);
  s.include_pad = p.attr("count_include_pad", 1) != 0;
  return s;
}

bool pool_rows_kernel_fits(const PoolShape& s) { return s.kh * s.kw <= 64 && s.sw <= 4 && s.pb == s.ph && s.pr == s.pw; }

bool global_avgpool_small_planes(const Problem& p) {
  const int64_t hw = p.dim(2) * p.dim(3);
  return hw >= 16 && hw <= 256;
}

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

void validate_nchw(const Problem& p) {
  if (p.dims.size() != 4) throw std::invalid_argument("expected 4 sizes N C H W");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("dtype must be f32");
  if (double(p.dim(0)) * double(p.dim(1)) * double(p.dim(2)) * double(p.dim(3)) >= 4.0e9)
    throw std::invalid_argument("too large for 32-bit indexing");
}

void validate_pool(const Problem& p, bool avg) {
  validate_nchw(p);
  for (const auto& [k, v] : p.attrs)
    if (k != "kernel_h" && k != "kernel_w" && k != "stride_h" && k != "stride_w" && k != "pad_h" && k != "pad_w" &&
        k != "pad_b" && k != "pad_r" && !(avg && k == "count_include_pad"))
      throw std::invalid_argument("unknown attribute '" + k + "'");
  const PoolShape s = pool_shape(p);
  if (s.kh < 1 || s.kw < 1 || s.sh < 1 || s.sw < 1) throw std::invalid_argument("kernel and stride must be >= 1");
  if (s.ph < 0 || s.pw < 0 || 2 * s.ph > s.kh || 2 * s.pw > s.kw)
    throw std::invalid_argument("padding must be between 0 and half the kernel");
  // Bottom/right padding (asymmetric windows, ONNX's ceil_mode as extra end
  // padding): every window must still overlap the input.
  if (s.pb < 0 || s.pr < 0 || s.pb >= s.kh || s.pr >= s.kw)
    throw std::invalid_argument("pad_b and pad_r must be between 0 and the kernel size - 1");
  if (s.h + s.ph + s.pb < s.kh || s.w + s.pw + s.pr < s.kw) throw std::invalid_argument("kernel larger than the padded input");
}

// The pooled value of the KH×KW window with top-left (h0, w0) (i32, possibly
// in the padding) of the plane starting at element `plane`, clipped to
// the H×W input: padding adds nothing to a max or a sum; an average divides by
// KH·KW (include_pad) or by the clipped window's size.
Value pooled_window(const Array& x, const Value& plane, const Value& h0, const Value& w0, const Value& KH,
                    const Value& KW, const Value& H, const Value& W, bool avg, bool include_pad) {
  const ir::Type it = plane.type();  // index type: u64 on the CPU, u32 where GPUs need it
  Value hlo = max(h0, 0), hhi = min(h0 + KH, H), wlo = max(w0, 0), whi = min(w0 + KW, W);
  Var acc = var(f32, avg ? 0.0f : -std::numeric_limits<float>::infinity());
  for_range(hlo, hhi, [&](Value ih) {
    Value row = plane + cast(it, ih) * cast(it, W);
    for_range(wlo, whi, [&](Value iw) {
      Value v = x[row + cast(it, iw)];
      if (avg) acc += v;
      else acc = max(acc.get(), v);
    });
  });
  Value r = acc.get();
  if (avg) r = r / cast(f32, include_pad ? KH * KW : (hhi - hlo) * (whi - wlo));
  return r;
}

// One work-item per output element; grid x = positions, y = C, z = N.
ir::Kernel pool_kernel(bool avg, bool include_pad, int wg) {
  std::string name = std::string(avg ? "avgpool2d" : "maxpool2d") + (avg && !include_pad ? "_excl" : "") + "_wg" +
                     std::to_string(wg);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto C = kb.scalar("c", u32);
    auto H = kb.scalar("h", i32);
    auto W = kb.scalar("w", i32);
    auto OH = kb.scalar("oh", u32);
    auto OW = kb.scalar("ow", u32);
    auto KH = kb.scalar("kh", i32);
    auto KW = kb.scalar("kw", i32);
    auto SH = kb.scalar("sh", i32);
    auto SW = kb.scalar("sw", i32);
    auto PH = kb.scalar("ph", i32);
    auto PW = kb.scalar("pw", i32);
    kb.workgroup(uint32_t(wg));
    Value p = global_id(0), plane = group_id(2) * C + group_id(1);
    if_(p < OH * OW, [&] {
      Value oh = p / OW, ow = p - oh * OW;
      Value h0 = cast(i32, oh) * SH - PH, w0 = cast(i32, ow) * SW - PW;
      Value xplane = plane * cast(u32, H) * cast(u32, W);
      y[plane * (OH * OW) + p] = pooled_window(x, xplane, h0, w0, KH, KW, H, W, avg, include_pad);
    });
  });
}

// CPU rows kernel: one work-item per rb output rows (grid x = ceil(OH/rb), y
// = C, z = N; rb > 1 at stride_h 1) with the window (KH×KW) and the column
// stride baked in. Chunks of 16 outputs whose windows lie inside the row
// take lines: per tap, the 16 inputs at a constant offset and stride from
// one base (SW = 1: one vector load; SW = 2: two loads and a shuffle),
// combined across each input row once, then down for each output row;
// padding rows count as the identity. The inside outputs past the last
// whole chunk take one more chunk ending at the last of them; the edges
// with a one-column padding (3×3) take a chunk each, other outputs whose
// windows touch the padding go one at a time.
// Prefetching pf output rows ahead (variant pf) helps, since the hardware
// prefetchers follow a work-item's KH interleaved input rows poorly.
ir::Kernel pool_rows_kernel(bool avg, bool include_pad, int kh_, int kw_, int sw_, int pf, int rb_) {
  const uint32_t KH = uint32_t(kh_), KW = uint32_t(kw_), SW = uint32_t(sw_), RB = uint32_t(rb_);
  std::string name = std::string(avg ? "avgpool2d" : "maxpool2d") + (avg && !include_pad ? "_excl" : "") + "_rows_k" +
                     std::to_string(KH) + "x" + std::to_string(KW) + "_sw" + std::to_string(SW) +
                     (pf ? "_pf" + std::to_string(pf) : "") + (RB > 1 ? "_rb" + std::to_string(RB) : "");
  const float init = avg ? 0.0f : -std::numeric_limits<float>::infinity();
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto C = kb.scalar("c", u32);
    auto H = kb.scalar("h", i32);
    auto W = kb.scalar("w", i32);
    auto OH = kb.scalar("oh", u32);
    auto OW = kb.scalar("ow", u32);
    auto SH = kb.scalar("sh", i32);
    auto PH = kb.scalar("ph", i32);
    auto PW = kb.scalar("pw", i32);
    kb.workgroup(1);
    // RB output rows oh .. oh + RB - 1 (RB > 1: stride 1 only): their
    // KH + RB - 1 input rows each pooled across once, then down.
    Value oh = group_id(0) * RB, plane = group_id(2) * C + group_id(1);
    Value h0 = cast(i32, oh) * SH - PH;
    Value xplane = cast(u64, plane) * cast(u64, H) * cast(u64, W);
    auto yrow = [&](uint32_t r) { return cast(u64, plane * OH + oh + r) * cast(u64, OW); };
    // st(r) for each of the RB output rows, those past OH skipped.
    auto each_row = [&](auto&& st) {
      for (uint32_t r = 0; r < RB; ++r)
        if (RB > 1) if_(oh + r < OH, [&] { st(r); });
        else st(r);
    };
    auto rows_in = [&](uint32_t r) {
      Value a = h0 + int32_t(r);
      return cast(f32, min(a + int32_t(KH), H) - max(a, 0));
    };
    if (pf) {
      // The SH·RB input rows that output rows oh + pf·RB .. add (past the
      // plane's end: the next plane's first rows, read soon too).
      Value at = xplane + cast(u64, h0 + int32_t(KH) + (int32_t(pf * RB) - 1) * SH) * cast(u64, W);
      for_range(0u, cast(u32, SH * W * int32_t(RB)), [&](Value i) { x[at + cast(u64, i)].prefetch(); }, 16u);
    }
    // Chunks [0, c1) of 16 outputs whose windows are inside the row: from the
    // first output with w0 >= 0 to the last with w0 + KW <= W.
    Value first = (PW + int32_t(SW - 1)) / int32_t(SW);                 // ow with ow·SW - PW >= 0
    Value last = (W + PW - int32_t(KW)) / int32_t(SW) + 1;              // one past ow with window inside
    Value lo = min(cast(u32, first), OW);
    Value hi = max(min(cast(u32, last), OW), lo);
    // A 16-output chunk's window: taps(row, fold) folds the KH×KW taps' lines
    // of one in-bounds input row (row: its first element), rows in the
    // padding being skipped.
    // A row's taps combine as a tree, then into the accumulator: a chain of
    // KH dependent adds or maxes instead of KH·KW (3×3/1 avg, 8×64×56²,
    // 1 thread, rotating inputs: 0.58 -> 0.55 ms).
    auto combine = [&](const Value& a, const Value& b) { return avg ? a + b : max(a, b); };
    auto tree = [&](std::vector<Value> t) {
      while (t.size() > 1) {
        std::vector<Value> pairs;
        for (size_t i = 0; i + 1 < t.size(); i += 2) pairs.push_back(combine(t[i], t[i + 1]));
        if (t.size() % 2) pairs.push_back(t.back());
        t = std::move(pairs);
      }
      return t[0];
    };
    // The chunk's pooled lines of the RB output rows: each input row's taps
    // (rows in the padding: the identity) combined across, then KH of them
    // down per output row.
    auto fold_rows = [&](auto&& taps) {
      std::vector<Value> across;
      for (uint32_t j = 0; j < KH + RB - 1; ++j) {
        Value ih = h0 + int32_t(j);
        Var a = var(splat(init, 16));
        if_(ih >= 0 && ih < H, [&] {
          std::vector<Value> t;
          taps(xplane + cast(u64, ih) * cast(u64, W), [&](const Value& v) { t.push_back(v); });
          a = tree(t);
        });
        across.push_back(a.get());
      }
      std::vector<Value> out;
      for (uint32_t r = 0; r < RB; ++r) out.push_back(tree(std::vector<Value>(across.begin() + r, across.begin() + r + KH)));
      return out;
    };
    // Stores the RB rows' lines at column ow0 (rows past OH dropped).
    auto store_rows = [&](const std::vector<Value>& v, const Value& ow0, const std::function<Value(uint32_t)>& divisor) {
      each_row([&](uint32_t r) { store_line(y, yrow(r) + cast(u64, ow0), avg ? v[r] / splat(divisor(r), 16) : v[r]); });
    };
    const std::function<Value(uint32_t)> full_window = [&](uint32_t) { return constant(f32, float(KH * KW)); };
    auto one = [&](const Value& ow) {
      Value w0 = cast(i32, ow) * int32_t(SW) - PW;
      each_row([&](uint32_t r) {
        y[yrow(r) + cast(u64, ow)] = pooled_window(x, xplane, h0 + int32_t(r), w0, constant(i32, int32_t(KH)),
                                                   constant(i32, int32_t(KW)), H, W, avg, include_pad);
      });
    };
    // The left edge with a 1-column padding (3×3 stride 1 or 2, pad 1: the
    // CNN stems): outputs 0..15 as one chunk from the row's first 32 inputs
    // (two line loads), the padding lanes (input column -1) taking the
    // identity: the clipped scalar window costs about 16% of a row's time
    // there (8×64×112² 3×3/2 max, 1 thread).
    const bool edge_form = SW <= 2 && KW <= (SW == 2 ? 3u : 17u) && (!avg || include_pad);
    Value edge = edge_form ? Value(PW == 1 && lo == 1u && hi >= 16u && W >= 32) : Value(constant(ir::types::Bool, false));
    auto edge_chunk = [&] {
      const Value lanes = lane_index(16), identity = splat(init, 16);
      auto r = fold_rows([&](const Value& row, auto&& fold) {
        const Value a = load_line(x, row), b = load_line(x, row + uint64_t(16));
        for (uint32_t kw = 0; kw < KW; ++kw) {
          std::vector<Value> l;
          bool pad = false;
          for (int i = 0; i < 16; ++i) {
            const int e = int(SW) * i - 1 + int(kw);  // input column of lane i
            pad = pad || e < 0;
            l.push_back(e < 0 ? extract(a, 0) : e < 16 ? extract(a, e) : extract(b, e - 16));
          }
          Value v = make_line(l);
          fold(pad ? select(lanes >= 1, v, identity) : v);  // only lane 0 (kw = 0) is padding
        }
      });
      store_rows(r, constant(u32, 0), full_window);
    };
    auto left_outputs = [&] { for_range(0u, lo, [&](Value ow) { one(ow); }); };
    if (edge_form) if_(edge, edge_chunk).else_(left_outputs);
    else left_outputs();
    // The right edge likewise for 3×3 stride 1, pad 1 (OW = W): outputs W-16
    // .. W-1 as one chunk from the row's last 32 inputs, lane 15's third tap
    // (input column W) the padding, instead of the clipped scalar window for
    // the last output and one more chunk for the inside outputs before it.
    const bool right_form = SW == 1 && KW == 3 && (!avg || include_pad);
    Value right = right_form ? Value(PW == 1 && OW == cast(u32, W) && W >= 32 && hi == OW - 1u)
                             : Value(constant(ir::types::Bool, false));
    auto right_chunk = [&] {
      const Value lanes = lane_index(16), identity = splat(init, 16);
      const Value w32 = cast(u64, W - 32);
      auto r = fold_rows([&](const Value& row, auto&& fold) {
        const Value a = load_line(x, row + w32), b = load_line(x, row + w32 + uint64_t(16));
        for (uint32_t kw = 0; kw < KW; ++kw) {
          std::vector<Value> l;
          bool pad = false;
          for (int i = 0; i < 16; ++i) {
            const int e = 15 + i + int(kw);  // input column of lane i, from W - 32
            pad = pad || e >= 32;
            l.push_back(e < 16 ? extract(a, e) : e < 32 ? extract(b, e - 16) : extract(b, 15));
          }
          Value v = make_line(l);
          fold(pad ? select(lanes <= 14, v, identity) : v);  // only lane 15 (kw = 2) is padding
        }
      });
      store_rows(r, OW - 16u, full_window);
    };
    const Value start = select(edge, 16u, lo);
    hi = select(right, OW - 16u, hi);
    Value nchunks = (hi - start) / 16u;
    auto chunk = [&](const Value& ow0) {
      Value w0 = cast(u64, cast(i32, ow0) * int32_t(SW) - PW);
      auto r = fold_rows([&](const Value& row, auto&& fold) {
        Value base = row + w0;
        for (uint32_t kw = 0; kw < KW; ++kw) {
          Value v;
          if (SW == 1) {
            v = load_line(x, base + uint64_t(kw));
          } else if (SW == 2) {
            // The even elements of [kw, kw + 31): two line loads (the
            // second one element back, so nothing past the window's last
            // input is read) and one two-line shuffle: 16 scalar loads and
            // inserts would make the kernel compute-bound.
            Value a = load_line(x, base + uint64_t(kw)), b = load_line(x, base + uint64_t(kw + 15));
            std::vector<Value> l;
            for (int i = 0; i < 16; ++i) l.push_back(i < 8 ? extract(a, 2 * i) : extract(b, 2 * (i - 8) + 1));
            v = make_line(l);
          } else {
            Var t = var(splat(0.0f, 16));
            for (uint32_t i = 0; i < 16; ++i) t = insert(t, int(i), x[base + uint64_t(i * SW + kw)]);
            v = t.get();
          }
          fold(v);
        }
      });
      store_rows(r, ow0, include_pad ? full_window : std::function<Value(uint32_t)>([&](uint32_t q) { return rows_in(q) * float(KW); }));
    };
    for_range(0u, nchunks, [&](Value ch) { chunk(start + ch * 16u); });
    // The inside outputs past the last whole chunk: one more chunk ending at
    // hi (it recomputes, and rewrites with the same values, some outputs of
    // the chunk before), else one at a time.
    Value rest = start + nchunks * 16u;
    if_(nchunks > 0u && rest < hi, [&] { chunk(hi - 16u); }).else_([&] { for_range(rest, hi, [&](Value ow) { one(ow); }); });
    if (right_form) if_(right, right_chunk).else_([&] { for_range(hi, OW, [&](Value ow) { one(ow); }); });
    else for_range(hi, OW, [&](Value ow) { one(ow); });
  });
}

// Mean of each plane in 16-lane lines (CPU): one work-item per plane.
ir::Kernel global_avgpool_lines_kernel() {
  return kernel("global_avgpool_lines", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto HW = kb.scalar("hw", u32);
    kb.workgroup(1);
    Value plane = group_id(0);
    Value base = cast(u64, plane) * cast(u64, HW);
    Value full = HW / 16u * 16u;
    std::vector<Var> acc;
    for (int i = 0; i < 4; ++i) acc.push_back(var(splat(0.0f, 16)));
    // Four independent line sums hide the add latency.
    Value full4 = HW / 64u * 64u;
    for_range(0u, full4, [&](Value i) {
      for (int a = 0; a < 4; ++a) {
        Value at = base + cast(u64, i) + uint64_t(16 * a);
        Value ln = make_line({x[at], x[at + uint64_t(1)], x[at + uint64_t(2)], x[at + uint64_t(3)], x[at + uint64_t(4)],
                              x[at + uint64_t(5)], x[at + uint64_t(6)], x[at + uint64_t(7)], x[at + uint64_t(8)],
                              x[at + uint64_t(9)], x[at + uint64_t(10)], x[at + uint64_t(11)], x[at + uint64_t(12)],
                              x[at + uint64_t(13)], x[at + uint64_t(14)], x[at + uint64_t(15)]});
        acc[a] += ln;
      }
    }, 64u);
    for_range(full4, full, [&](Value i) {
      Value at = base + cast(u64, i);
      Value ln = make_line({x[at], x[at + uint64_t(1)], x[at + uint64_t(2)], x[at + uint64_t(3)], x[at + uint64_t(4)],
                            x[at + uint64_t(5)], x[at + uint64_t(6)], x[at + uint64_t(7)], x[at + uint64_t(8)],
                            x[at + uint64_t(9)], x[at + uint64_t(10)], x[at + uint64_t(11)], x[at + uint64_t(12)],
                            x[at + uint64_t(13)], x[at + uint64_t(14)], x[at + uint64_t(15)]});
      acc[0] += ln;
    }, 16u);
    Var s = var(reduce_add((acc[0].get() + acc[1].get()) + (acc[2].get() + acc[3].get())));
    for_range(full, HW, [&](Value i) { s += x[base + cast(u64, i)]; });
    y[plane] = s.get() / cast(f32, HW);
  });
}

// Means of 16 planes of HW <= 256 values (baked) per work-item (CPU): each
// plane's values as lines (the last one ending at the plane's end, its lanes
// before that masked off), their sum, then the 16 planes' sums reduced
// together (tree_add_lanes: lane i of the result is plane i's sum) and
// stored as one line: the lines kernel's per-plane horizontal sum and tail
// loop cost small planes ~15 cycles each (8×512×7², 1 thread: 0.0153 ->
// 0.0086 ms). Planes past the last re-read it and are not stored.
ir::Kernel global_avgpool_planes16_kernel(int hw_) {
  const int64_t HW = hw_, lines = (HW + 15) / 16;
  return kernel("global_avgpool_planes16_hw" + std::to_string(HW), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto NP = kb.scalar("planes", u32);
    kb.workgroup(1);
    Value p0 = group_id(0) * 16u;
    const Value lanes = lane_index(16);
    std::vector<Value> sums;
    for (uint32_t q = 0; q < 16; ++q) {
      Value base = cast(u64, min(p0 + q, NP - 1u)) * uint64_t(HW);
      Value acc;
      for (int64_t l = 0; l < lines; ++l) {
        const int64_t start = std::min<int64_t>(16 * l, HW - 16);
        Value v = load_line(x, base + uint64_t(start));
        const int64_t keep = 16 * l - start;  // lanes already counted by the line before
        if (keep > 0) v = select(lanes >= int32_t(keep), v, splat(0.0f, 16));
        acc = l == 0 ? v : acc + v;
      }
      sums.push_back(acc);
    }
    Value mean = tree_add_lanes(sums) / splat(constant(f32, float(HW)), 16);
    if_(p0 + 16u <= NP, [&] { store_line(y, cast(u64, p0), mean); }).else_([&] {
      for (int i = 0; i < 16; ++i) if_(p0 + uint32_t(i) < NP, [&] { y[cast(u64, p0) + uint64_t(i)] = mean.lane(i); });
    });
  });
}

// One work-item per plane, scalar sum (GPU targets).
ir::Kernel global_avgpool_scalar_kernel(int wg) {
  return kernel("global_avgpool_wg" + std::to_string(wg), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto HW = kb.scalar("hw", u32);
    auto NP = kb.scalar("planes", u32);
    kb.workgroup(uint32_t(wg));
    Value plane = global_id(0);
    if_(plane < NP, [&] {
      Var s = var(f32, 0.0f);
      for_range(0u, HW, [&](Value i) { s += x[plane * HW + i]; });
      y[plane] = s.get() / cast(f32, HW);
    });
  });
}

void pool_reference(const Problem& p, bool avg, const float* x, float* y) {
  const PoolShape s = pool_shape(p);
  const int64_t OH = s.oh(), OW = s.ow();
  for (int64_t pl = 0; pl < s.n * s.c; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = avg ? 0.0 : -INFINITY;
        int64_t cnt = 0;
        for (int64_t kh = 0; kh < s.kh; ++kh)
          for (int64_t kw = 0; kw < s.kw; ++kw) {
            const int64_t ih = oh * s.sh - s.ph + kh, iw = ow * s.sw - s.pw + kw;
            if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
            const double v = x[(pl * s.h + ih) * s.w + iw];
            acc = avg ? acc + v : std::max(acc, v);
            ++cnt;
          }
        if (avg) acc /= double(s.include_pad ? s.kh * s.kw : cnt);
        y[(pl * OH + oh) * OW + ow] = float(acc);
      }
}

Problem pool(std::string op, int64_t n, int64_t c, int64_t h, int64_t w, std::map<std::string, int64_t> attrs = {}) {
  Problem p;
  p.op = std::move(op);
  p.dims = {n, c, h, w};
  p.attrs = std::move(attrs);
  return p;
}

void register_window_pool(bool avg) {
  OpDef d;
  d.name = avg ? "avgpool2d" : "maxpool2d";
  d.attr_defaults = {{"kernel_h", 2}, {"kernel_w", 2}, {"pad_h", 0}, {"pad_w", 0}};
  if (avg) d.attr_defaults["count_include_pad"] = 1;
  d.description = std::string(avg ? "average" : "max") + " pooling over KH×KW windows, NCHW f32";
  d.dims_help = "N C H W";
  d.attrs_help = std::string("kernel_h=2 kernel_w=2 stride_h=kernel_h stride_w=kernel_w pad_h=0 pad_w=0 pad_b=pad_h pad_r=pad_w") +
                 (avg ? " count_include_pad=1" : "");
  d.validate = [avg](const Problem& p) { validate_pool(p, avg); };
  d.inputs = [](const Problem& p) {
    return std::vector<TensorSpec>{tensor("x", ir::Type(ir::ScalarKind::F32), {p.dim(0), p.dim(1), p.dim(2), p.dim(3)})};
  };
  d.outputs = [](const Problem& p) {
    const PoolShape s = pool_shape(p);
    return std::vector<TensorSpec>{tensor("y", ir::Type(ir::ScalarKind::F32), {s.n, s.c, s.oh(), s.ow()})};
  };
  // impl 0: one work-item per output (any target); impl 1: the CPU rows kernel,
  // prefetching pf output rows ahead (0: none).
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    std::vector<Variant> out;
    if (is_cpu(caps) && pool_rows_kernel_fits(pool_shape(p)))
      for (int pf : {0, 2, 4, 8, 16, 32}) {
        out.push_back(Variant{}.set("impl", 1).set("pf", pf));
        if (pool_shape(p).sh == 1 && pf <= 8)  // output rows sharing input rows in one work-item
          for (int rb : {2, 4}) out.push_back(Variant{}.set("impl", 1).set("pf", pf).set("rb", rb));
      }
    for (int wg : {16, 64}) out.push_back(Variant{}.set("impl", 0).set("wg", wg));
    return out;
  };
  d.heuristic = window_pool_strategy;
  d.variant_keys = {
      key_set("impl", "implementation", {0, 1}, "0 a work-item per output (any target), 1 CPU rows of line accumulators"),
      key_range("pf", "prefetch_rows", 0, 64, "CPU rows: output rows ahead whose input is prefetched (0: none)"),
      key_set("rb", "rows_per_item", {1, 2, 4}, "CPU rows: output rows per work-item (2 or 4 at stride_h 1)"),
      key_range("wg", "workgroup", 1, 1024, "a work-item per output: work-items per workgroup"),
  };
  d.plan = [avg](const Problem& p, const Variant& v, const TargetCaps& caps) {
    const PoolShape s = pool_shape(p);
    const std::string op = avg ? "avgpool2d" : "maxpool2d";
    Plan pl;
    Step st;
    if (v.get("impl", 0) == 1) {
      if (!is_cpu(caps)) throw std::invalid_argument(op + ": impl=1 (rows) is for the cpu target");
      if (!pool_rows_kernel_fits(s)) throw std::invalid_argument(op + ": impl=1 needs kernel_h·kernel_w <= 64 and stride_w <= 4");
      const int pf = int(v.get("pf", 0)), rb = int(v.get("rb", 1));
      if (pf < 0 || pf > 64) throw std::invalid_argument(op + ": pf must be 0..64");
      if (rb != 1 && (s.sh != 1 || (rb != 2 && rb != 4)))
        throw std::invalid_argument(op + ": rb (output rows per work-item) 2 or 4 needs stride_h 1: " + v.str());
      st.kernel = pool_rows_kernel(avg, s.include_pad, int(s.kh), int(s.kw), int(s.sw), pf, rb);
      st.dims.grid = {uint32_t((s.oh() + rb - 1) / rb), uint32_t(s.c), uint32_t(s.n)};
      st.buffers = {0, 1};
      st.scalars = {u(s.c), u(s.h), u(s.w), u(s.oh()), u(s.ow()), u(s.sh), u(s.ph), u(s.pw)};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    const int wg = int(v.get("wg", 64));
    if (wg < 1 || wg > 1024) throw std::invalid_argument(op + ": bad wg");
    st.kernel = pool_kernel(avg, s.include_pad, wg);
    st.dims.grid = {groups_for(s.oh() * s.ow(), wg), uint32_t(s.c), uint32_t(s.n)};
    st.dims.workgroup = {uint32_t(wg), 1, 1};
    st.buffers = {0, 1};
    st.scalars = {u(s.c), u(s.h), u(s.w), u(s.oh()), u(s.ow()), u(s.kh), u(s.kw), u(s.sh), u(s.sw), u(s.ph), u(s.pw)};
    pl.steps.push_back(std::move(st));
    return pl;
  };
  d.reference = [avg](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    pool_reference(p, avg, static_cast<const float*>(in[0]), static_cast<float*>(out[0]));
  };
  d.tolerance = [avg](const Problem& p) {
    const PoolShape s = pool_shape(p);
    return avg ? 2e-7 * (4.0 + double(s.kh * s.kw)) : 0.0;
  };
  d.flops = [](const Problem& p) {
    const PoolShape s = pool_shape(p);
    return double(s.n * s.c * s.oh() * s.ow() * s.kh * s.kw);
  };
  d.bytes = [](const Problem& p) {
    const PoolShape s = pool_shape(p);
    return 4.0 * double(s.n * s.c * (s.h * s.w + s.oh() * s.ow()));
  };
  d.memory_bound = true;
  const std::string op = d.name;
  d.test_problems = {pool(op, 1, 1, 1, 1, {{"kernel_h", 1}, {"kernel_w", 1}}),
                     pool(op, 2, 3, 7, 9),
                     pool(op, 1, 5, 13, 11, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
                     pool(op, 3, 2, 17, 19, {{"kernel_h", 3}, {"kernel_w", 2}, {"stride_h", 1}, {"stride_w", 3}, {"pad_h", 1}}),
                     pool(op, 1, 4, 8, 8, {{"kernel_h", 4}, {"kernel_w", 4}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 2}, {"pad_w", 2}}),
                     // Rows long enough for whole 16-output chunks between the padded edges.
                     pool(op, 2, 3, 9, 70, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
                     pool(op, 1, 2, 5, 41, {{"kernel_h", 2}, {"kernel_w", 3}, {"stride_h", 1}, {"stride_w", 1}, {"pad_w", 1}}),
                     // Stride 2 without padding: chunks up to the input's last element, a chunk overlapping the one before.
                     pool(op, 1, 1, 3, 66, {{"kernel_h", 2}, {"kernel_w", 2}}),
                     // Pad 1 at stride 1 with rows of 32+ (the left- and right-edge chunks, outputs
                     // between them one at a time, whole chunks and an overlapping one; exactly 32).
                     pool(op, 1, 2, 6, 35, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"pad_w", 1}}),
                     pool(op, 1, 2, 4, 70, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"pad_w", 1}}),
                     pool(op, 2, 1, 3, 32, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"pad_w", 1}})};
  // Asymmetric padding (ONNX pads, ceil_mode as extra end padding): the generic kernel.
  d.test_problems.push_back(pool(op, 1, 3, 10, 13, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 0},
                                                    {"pad_w", 1}, {"pad_b", 2}, {"pad_r", 0}}));
  d.test_problems.push_back(pool(op, 2, 2, 7, 8, {{"kernel_h", 2}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_b", 1}, {"pad_r", 2}}));
  if (avg)
    d.test_problems.push_back(pool(op, 2, 3, 11, 7,
                                   {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1},
                                    {"count_include_pad", 0}}));
  d.bench_problems = {pool(op, 8, 64, 112, 112, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}})};
  register_op(std::move(d));
}

void register_global_avgpool() {
  OpDef d;
  d.name = "global_avgpool";
  d.description = "mean of each H×W plane, NCHW f32 (N×C×H×W -> N×C×1×1)";
  d.dims_help = "N C H W";
  d.validate = [](const Problem& p) {
    validate_nchw(p);
    if (!p.attrs.empty()) throw std::invalid_argument("global_avgpool takes no attributes");
  };
  d.inputs = [](const Problem& p) {
    return std::vector<TensorSpec>{tensor("x", ir::Type(ir::ScalarKind::F32), {p.dim(0), p.dim(1), p.dim(2), p.dim(3)})};
  };
  d.outputs = [](const Problem& p) {
    return std::vector<TensorSpec>{tensor("y", ir::Type(ir::ScalarKind::F32), {p.dim(0), p.dim(1), 1, 1})};
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    std::vector<Variant> out;
    if (is_cpu(caps)) out.push_back(Variant{}.set("impl", 0));
    if (is_cpu(caps) && global_avgpool_small_planes(p)) out.push_back(Variant{}.set("impl", 2));
    out.push_back(Variant{}.set("impl", 1).set("wg", 64));
    for (int wg : {64, 256})
      if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads) out.push_back(Variant{}.set("impl", 3).set("wg", wg));
    return out;
  };
  d.heuristic = global_avgpool_strategy;
  d.variant_keys = {
      key_set("impl", "implementation", {0, 1, 2, 3},
              "0 CPU lines per plane, 1 a work-item per plane, 2 CPU 16 small planes per work-item, 3 GPU workgroup per plane"),
      key_range("wg", "workgroup", 1, 1024, "impl 1 and 3: work-items per workgroup"),
  };
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps& caps) {
    const int64_t planes = p.dim(0) * p.dim(1), hw = p.dim(2) * p.dim(3);
    Plan pl;
    Step st;
    st.buffers = {0, 1};
    if (v.get("impl", 0) == 2) {
      if (!is_cpu(caps) || !global_avgpool_small_planes(p)) throw std::invalid_argument("global_avgpool: impl=2 (16 planes) is for the cpu target and planes of 16..256");
      st.kernel = global_avgpool_planes16_kernel(int(hw));
      st.dims.grid = {groups_for(planes, 16), 1, 1};
      st.scalars = {u(planes)};
    } else if (v.get("impl", 0) == 0) {
      if (!is_cpu(caps)) throw std::invalid_argument("global_avgpool: impl=0 (lines) is for the cpu target");
      st.kernel = global_avgpool_lines_kernel();
      st.dims.grid = {uint32_t(planes), 1, 1};
      st.scalars = {u(hw)};
    } else if (v.get("impl", 0) == 3) {
      st = reduce_rows_group_step(planes, hw, 3 /* mean */, int(v.get("wg", 256)), caps.subgroups);
    } else {
      const int wg = int(v.get("wg", 64));
      st.kernel = global_avgpool_scalar_kernel(wg);
      st.dims.grid = {groups_for(planes, wg), 1, 1};
      st.dims.workgroup = {uint32_t(wg), 1, 1};
      st.scalars = {u(hw), u(planes)};
    }
    pl.steps.push_back(std::move(st));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    const int64_t planes = p.dim(0) * p.dim(1), hw = p.dim(2) * p.dim(3);
    const float* x = static_cast<const float*>(in[0]);
    float* y = static_cast<float*>(out[0]);
    for (int64_t i = 0; i < planes; ++i) {
      double s = 0;
      for (int64_t j = 0; j < hw; ++j) s += x[i * hw + j];
      y[i] = float(s / double(hw));
    }
  };
  d.tolerance = [](const Problem& p) { return 5e-7 * (4.0 + std::sqrt(double(p.dim(2) * p.dim(3)))); };
  d.flops = [](const Problem& p) { return double(p.dim(0) * p.dim(1) * p.dim(2) * p.dim(3)); };
  d.bytes = [](const Problem& p) { return 4.0 * double(p.dim(0) * p.dim(1) * (p.dim(2) * p.dim(3) + 1)); };
  d.memory_bound = true;
  d.test_problems = {pool("global_avgpool", 1, 1, 1, 1), pool("global_avgpool", 2, 3, 7, 9), pool("global_avgpool", 3, 11, 5, 6),
                     pool("global_avgpool", 3, 5, 13, 11), pool("global_avgpool", 1, 4, 16, 8),
                     pool("global_avgpool", 2, 2, 37, 41), pool("global_avgpool", 1, 3, 300, 301)};
  d.bench_problems = {pool("global_avgpool", 8, 512, 7, 7), pool("global_avgpool", 8, 64, 56, 56)};
  register_op(std::move(d));
}

}  // namespace

void register_pool_ops() {
  register_window_pool(false);
  register_window_pool(true);
  register_global_avgpool();
}

}  // namespace kgen::ops
