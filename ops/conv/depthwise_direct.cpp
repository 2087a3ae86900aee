// CPU depthwise convolution straight from x (no pre-pass), for column
// strides 1 and 2 and rows of 16+ inputs and outputs: the MobileNet layers
// down to 28×28 (smaller planes: ops/conv/depthwise_small.cpp).
//
// The padded, phase-split copy xq that the other CPU paths read costs more
// than a depthwise conv itself (1×144×56² 3×3, 1 thread: the stride-2
// pre-pass 0.08 ms, the conv 0.028). Here a work-item owns RB output rows of
// one channel and reads x directly:
//  - columns: the row's lines of 16 outputs are laid out at build time (the
//    kernel is specialised to W, OW and the left padding). A line whose
//    taps stay inside the row reads each tap with one load (stride 1) or
//    two loads and a shuffle of the even elements (stride 2). A line that
//    touches the padding reads the row's 32 inputs nearest it (two loads;
//    in rows under 32 the whole row, as two overlapping lines) and builds
//    each tap with a constant shuffle, zeroing its padding lanes.
//  - rows: output rows whose taps are all inside x go `rows` at a time,
//    sharing the input lines they have in common (at stride 1 kernel row
//    kh + 1 of an output row is kernel row kh of the next); the rows that
//    touch the top or bottom padding go one at a time, skipping the kernel
//    rows outside x.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/tap_sum.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

// One line of 16 outputs of a row: first output c0; `window`: -1 when every
// tap of every lane is inside the row, else the first column of the first of
// the two lines of inputs its taps read, `second` the second's (window + 16;
// in rows under 32, 0 and W - 16: the whole row, nothing past it). Lanes
// outside the row are zero.
struct ColumnLine {
  int64_t c0, window, second;
};

// The lines of a row, or empty when some line cannot be built (its taps
// span more than 32 inputs).
std::vector<ColumnLine> column_lines(const ConvShape& s) {
  std::vector<ColumnLine> out;
  const int64_t ow = s.ow();
  if (s.w < 16 || ow < 16 || (s.sw != 1 && s.sw != 2)) return out;
  std::vector<int64_t> starts;
  for (int64_t c0 = 0; c0 + 16 <= ow; c0 += 16) starts.push_back(c0);
  if (ow % 16) starts.push_back(ow - 16);
  for (int64_t c0 : starts) {
    const int64_t lo = c0 * s.sw - s.pl, hi = (c0 + 15) * s.sw - s.pl + (s.kw - 1) * s.dw;
    if (lo >= 0 && hi < s.w) {
      out.push_back({c0, -1, -1});
      continue;
    }
    if (s.w < 32) {
      out.push_back({c0, 0, s.w - 16});
      continue;
    }
    const int64_t base = std::clamp<int64_t>(lo, 0, s.w - 32);
    // Every in-row column a tap reads must be in [base, base + 32).
    if (std::max<int64_t>(lo, 0) < base || std::min<int64_t>(hi, s.w - 1) >= base + 32) return {};
    out.push_back({c0, base, base + 16});
  }
  return out;
}

}  // namespace

bool depthwise_direct_fits(const ConvShape& s) {
  return s.groups == s.c && s.groups == s.oc && s.taps() <= 49 && !column_lines(s).empty();
}

ir::Kernel conv_depthwise_direct_kernel(const ConvShape& s, int rb, int rows, const EpilogueSpec* ep) {
  const std::vector<ColumnLine> cols = column_lines(s);
  if (cols.empty()) throw std::invalid_argument("conv_depthwise_direct_kernel: shape not supported");
  const uint32_t KH = uint32_t(s.kh), KW = uint32_t(s.kw), T = KH * KW, RB = uint32_t(rb), R2 = uint32_t(rows);
  const int64_t SW = s.sw, DW = s.dw, PL = s.pl, Wd = s.w;
  const bool bias = s.bias, relu = s.relu;
  const std::string name = "conv_depthwise_direct_k" + std::to_string(KH) + "x" + std::to_string(KW) + "_s" +
                           std::to_string(s.sh) + "x" + std::to_string(SW) + "_d" + std::to_string(s.dh) + "x" +
                           std::to_string(DW) + "_w" + std::to_string(Wd) + "_ow" + std::to_string(s.ow()) + "_pl" +
                           std::to_string(PL) + "_rb" + std::to_string(RB) + "_r" + std::to_string(R2) +
                           (bias ? "_bias" : "") + (relu ? "_relu" : "") + (ep ? ep->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    std::unique_ptr<EpilogueEmitter> em = ep ? std::make_unique<EpilogueEmitter>(*ep) : nullptr;
    auto x = kb.input("x", f32);
    auto w = kb.input("w", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", em ? ir::Type(em->out()) : f32);
    if (em) em->declare(kb);
    auto C = kb.scalar("c", u32);
    auto H = kb.scalar("h", i32);
    auto OH = kb.scalar("oh", u32);
    auto PT = kb.scalar("pt", i32);
    const uint32_t OW = uint32_t(s.ow()), SH = uint32_t(s.sh), DH = uint32_t(s.dh);
    if (em) em->sizes(C, OH * OW);
    kb.workgroup(1);
    Value c = group_id(1), n = group_id(2);
    Value r0 = group_id(0) * RB, r1 = min(r0 + RB, OH);
    Value xplane = cast(u64, n * C + c) * cast(u64, H) * uint64_t(Wd);
    Value yplane = cast(u64, n * C + c) * cast(u64, OH) * uint64_t(OW);
    std::vector<Value> wv;
    for (uint32_t t = 0; t < T; ++t) wv.push_back(splat(w[cast(u64, c) * uint64_t(T) + uint64_t(t)], 16));
    const Value bv = bias ? splat(b[c], 16) : Value();
    const Value lanes = lane_index(16), zero = splat(0.0f, 16);
    // Output line (r, c0 .. c0 + 15) of this plane, through the epilogue.
    auto store = [&](const Value& r, int64_t c0, const Value& v) {
      Value p = r * OW + uint32_t(c0);
      store_line(y, yplane + cast(u64, p), em ? em->apply(v, n, c, p) : v);
    };
    // Tap kw of column line `cl` from the input row starting at `row`;
    // `window` caches the row's two loads of an edge line.
    auto tap = [&](const ColumnLine& cl, const Value& row, uint32_t kw, std::pair<Value, Value>* window) {
      const int64_t first = cl.c0 * SW - PL + int64_t(kw) * DW;  // lane 0's column
      if (cl.window < 0) {
        Value a = load_line(x, row + uint64_t(first));
        if (SW == 1) return a;
        Value hi = load_line(x, row + uint64_t(first + 15));  // ends at lane 15's column
        std::vector<Value> l;
        for (int e = 0; e < 16; ++e) l.push_back(e < 8 ? extract(a, 2 * e) : extract(hi, 2 * (e - 8) + 1));
        return make_line(l);
      }
      if (!window->first.valid())
        *window = {load_line(x, row + uint64_t(cl.window)), load_line(x, row + uint64_t(cl.second))};
      std::vector<Value> l;
      int lo = 16, hi = -1;  // the lanes inside the row
      for (int i = 0; i < 16; ++i) {
        const int64_t col = first + i * SW;
        const bool in = col >= 0 && col < Wd;
        const int64_t e = in ? col - cl.window : 0;
        if (in) lo = std::min(lo, i), hi = std::max(hi, i);
        l.push_back(e < 16 ? extract(window->first, int(e)) : extract(window->second, int(col - cl.second)));
      }
      Value v = make_line(l);
      if (lo > 0 || hi < 15) v = select(lanes >= lo && lanes <= hi, v, zero);
      return v;
    };
    // Interior output rows r .. r + nr - 1 (every tap inside x): the lines
    // of each column line, input lines shared by input row and kw.
    auto interior_rows = [&](const Value& r, uint32_t nr) {
      Value ih0 = cast(i32, r * SH) - PT;  // input row of kernel row 0 of output row r
      for (const ColumnLine& cl : cols) {
        std::map<std::pair<uint32_t, uint32_t>, Value> loaded;  // (input row - ih0, kw)
        std::map<uint32_t, std::pair<Value, Value>> windows;
        for (uint32_t q = 0; q < nr; ++q) {
          TapSum sum;
          for (uint32_t kh = 0; kh < KH; ++kh) {
            const uint32_t dr = q * SH + kh * DH;
            Value row = xplane + cast(u64, ih0 + int32_t(dr)) * uint64_t(Wd);
            for (uint32_t kw = 0; kw < KW; ++kw) {
              auto it = loaded.find({dr, kw});
              if (it == loaded.end()) it = loaded.emplace(std::make_pair(dr, kw), tap(cl, row, kw, &windows[dr])).first;
              const uint32_t t = kh * KW + kw;
              sum.add(wv[t], it->second);
            }
          }
          store(r + q, cl.c0, sum.result(bv, relu));
        }
      }
    };
    // A row touching the top or bottom padding: the kernel rows inside x.
    auto border_row = [&](const Value& r) {
      Value ih0 = cast(i32, r * SH) - PT;
      for (const ColumnLine& cl : cols) {
        Var acc = var(zero);
        for (uint32_t kh = 0; kh < KH; ++kh) {
          Value ih = ih0 + int32_t(kh * DH);
          if_(ih >= 0 && ih < H, [&] {
            Value row = xplane + cast(u64, ih) * uint64_t(Wd);
            std::pair<Value, Value> window;
            for (uint32_t kw = 0; kw < KW; ++kw) acc = fma(wv[kh * KW + kw], tap(cl, row, kw, &window), acc.get());
          });
        }
        store(r, cl.c0, TapSum::epilogue(acc.get(), bv, relu));
      }
    };
    // Interior rows: [ilo, ihi) (ih0 >= 0 and ih0 + (KH - 1)·DH < H).
    const int32_t span = int32_t((KH - 1) * DH);
    Value ilo = cast(u32, (PT + int32_t(SH) - 1) / int32_t(SH));
    Value last = H - 1 - span + PT;  // the last interior row's r·SH
    Value ihi = select(last >= 0, cast(u32, last / int32_t(SH)) + 1u, constant(u32, 0u));
    Value a = min(max(r0, ilo), r1), z = max(min(r1, ihi), a);  // this work-item's interior rows [a, z)
    for_range(r0, a, [&](Value r) { border_row(r); });
    Value ngroups = (z - a) / R2;
    for_range(0u, ngroups, [&](Value k) { interior_rows(a + k * R2, R2); });
    if (R2 > 1) for_range(a + ngroups * R2, z, [&](Value r) { interior_rows(r, 1); });
    for_range(z, r1, [&](Value r) { border_row(r); });
  });
}

void plan_conv_depthwise_direct(Plan& pl, const ConvShape& s, int rb, int rows, const EpilogueUse* eu) {
  const int bslot = 2, yslot = s.bias ? 3 : 2;
  Step st;
  st.kernel = conv_depthwise_direct_kernel(s, rb, rows, eu ? eu->spec : nullptr);
  st.dims.grid = {groups_for(s.oh(), rb), uint32_t(s.c), uint32_t(s.n)};
  st.buffers = {0, 1};
  if (s.bias) st.buffers.push_back(bslot);
  st.buffers.push_back(yslot);
  if (eu) st.buffers.insert(st.buffers.end(), eu->slots.begin(), eu->slots.end());
  st.scalars = {u(s.c), u(s.h), u(s.oh()), u(s.pt)};
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
