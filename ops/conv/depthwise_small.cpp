// CPU depthwise convolution of small planes (at most 256 outputs and 1024
// inputs, both at least 16: MobileNet's 14×14 and 7×7 layers, with the most
// channels), one plane per work-item, fully unrolled.
//
// Rows of 7 or 14 outputs leave most of a 16-lane line idle, or cost scalar
// stores, when lines run along a row. Here lines run along the flattened
// plane: output line m holds outputs 16m .. 16m + 15 (the last one ends at
// the plane's end, rewriting some outputs of the one before), over several
// rows. The plane's inputs are loaded as lines of the flattened input
// (the last one also ending at the end: nothing past the plane is read), and
// for every output line and tap the kernel, specialised to the whole
// geometry, builds the tap's inputs with constant shuffles of the input
// lines they come from, padding lanes zeroed: no pre-pass, no scalar
// stores. With `padded` (variant vp=1) the zero-padded plane, split by the
// stride into phase planes as the pre-pass would, is built in registers
// once and each tap is a window of a phase plane at a constant offset (see
// the kernel). Against the pre-pass + rows kernel (impl=3), 1 thread:
// 1×960×7² 3×3 pad 1 0.064 -> 0.0075 ms.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/tap_sum.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

// The line of a plane of n elements (lines of 16, the last ending at n) that
// holds element j, and j's lane in it.
struct LineLane {
  int64_t line, lane;
};
LineLane line_lane(int64_t j, int64_t n) {
  const int64_t lines = (n + 15) / 16;
  const int64_t last_start = n - 16;
  if (j >= 16 * (lines - 1)) return {lines - 1, j - last_start};
  return {j / 16, j % 16};
}
int64_t line_start(int64_t line, int64_t n) { return std::min(16 * line, n - 16); }

}  // namespace

bool depthwise_small_fits(const ConvShape& s) {
  const int64_t outs = s.oh() * s.ow(), ins = s.h * s.w;
  return s.groups == s.c && s.groups == s.oc && s.taps() <= 49 && outs >= 16 && outs <= 256 && ins >= 16 &&
         ins <= 1024;
}

ir::Kernel conv_depthwise_small_kernel(const ConvShape& s, bool padded, const EpilogueSpec* ep) {
  if (!depthwise_small_fits(s)) throw std::invalid_argument("conv_depthwise_small_kernel: shape not supported");
  const int64_t H = s.h, W = s.w, OH = s.oh(), OW = s.ow(), KH = s.kh, KW = s.kw, T = KH * KW;
  const int64_t nin = H * W, nout = OH * OW, in_lines = (nin + 15) / 16, out_lines = (nout + 15) / 16;
  const bool bias = s.bias, relu = s.relu;
  std::string name = "conv_depthwise_small";
  for (int64_t v : {H, W, KH, KW, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl, s.pb, s.pr}) name += "_" + std::to_string(v);
  name += std::string(padded ? "_padded" : "") + (bias ? "_bias" : "") + (relu ? "_relu" : "") + (ep ? ep->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    std::unique_ptr<EpilogueEmitter> em = ep ? std::make_unique<EpilogueEmitter>(*ep) : nullptr;
    auto x = kb.input("x", f32);
    auto w = kb.input("w", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", em ? ir::Type(em->out()) : f32);
    if (em) em->declare(kb);
    auto C = kb.scalar("c", u32);
    if (em) em->sizes(C, constant(u32, uint32_t(nout)));
    kb.workgroup(1);
    Value c = group_id(0), n = group_id(1);
    Value plane = cast(u64, n * C + c);
    Value xbase = plane * uint64_t(nin), ybase = plane * uint64_t(nout);
    // Output line o0 .. o0 + 15 of this plane, through the epilogue.
    auto store = [&](int64_t o0, const Value& v) {
      store_line(y, ybase + uint64_t(o0), em ? em->apply(v, n, c, constant(u32, uint32_t(o0))) : v);
    };
    std::vector<Value> in;
    for (int64_t l = 0; l < in_lines; ++l) in.push_back(load_line(x, xbase + uint64_t(line_start(l, nin))));
    std::vector<Value> wv;
    for (int64_t t = 0; t < T; ++t) wv.push_back(splat(w[cast(u64, c) * uint64_t(T) + uint64_t(t)], 16));
    const Value zero = splat(0.0f, 16);
    const Value bv = bias ? splat(b[c], 16) : Value();
    // A constant lane mask: lanes where keep(i).
    auto mask = [&](auto&& keep) {
      std::vector<Value> l;
      for (int i = 0; i < 16; ++i) l.push_back(constant(i32, keep(i) ? 1 : 0));
      return make_line(l) != 0;
    };
    // The line whose lane i is lane src[i].lane of lines[src[i].line], or 0
    // where src[i].line < 0: a shuffle per two source lines, merged by lane
    // masks. Empty when every lane is 0.
    auto gather = [&](const std::vector<Value>& lines, const std::vector<LineLane>& src) {
      std::vector<int64_t> used;
      for (const LineLane& ll : src)
        if (ll.line >= 0 && std::find(used.begin(), used.end(), ll.line) == used.end()) used.push_back(ll.line);
      Value v;
      if (used.empty()) return v;
      for (size_t k = 0; k < used.size(); k += 2) {
        const int64_t la = used[k], lb = k + 1 < used.size() ? used[k + 1] : la;
        auto mine = [&](int i) { return src[size_t(i)].line == la || src[size_t(i)].line == lb; };
        std::vector<Value> l;
        for (int i = 0; i < 16; ++i)
          l.push_back(mine(i) ? extract(lines[size_t(src[size_t(i)].line)], int(src[size_t(i)].lane)) : extract(lines[size_t(la)], 0));
        Value part = make_line(l);
        v = k == 0 ? part : select(mask(mine), part, v);
      }
      if (std::any_of(src.begin(), src.end(), [](const LineLane& ll) { return ll.line < 0; }))
        v = select(mask([&](int i) { return src[size_t(i)].line >= 0; }), v, zero);
      return v;
    };
    // Input element (ih, iw) as a line and lane of `in`, or none outside x.
    auto input_at = [&](int64_t ih, int64_t iw) {
      return ih < 0 || ih >= H || iw < 0 || iw >= W ? LineLane{-1, -1} : line_lane(ih * W + iw, nin);
    };
    if (padded) {
      // The zero-padded plane P (HP × WP) split by stride into SH·SW phase
      // planes of HQ × WQ (as the pre-pass lays out xq), as lines in
      // registers, built once. Output (r, c) reads tap (kh, kw) in phase
      // (kh·dh % sh, kw·dw % sw) at (r + kh·dh / sh, c + kw·dw / sw), so
      // over "virtual" outputs v = r·WQ + c each tap is a phase plane's
      // lines at a constant offset: one two-line shuffle (none where the
      // offset is a multiple of 16), no masks. The virtual lines' outputs
      // are then gathered into the flattened output's lines (the WQ - OW
      // virtual columns per row dropped).
      const int64_t SH = s.sh, SW = s.sw;
      const int64_t WP = W + s.pl + s.pr, HP = H + s.pt + s.pb;
      const int64_t HQ = (HP + SH - 1) / SH, WQ = (WP + SW - 1) / SW;
      const int64_t vlines = (OH * WQ + 15) / 16;
      const int64_t off_max = (KH - 1) * s.dh / SH * WQ + (KW - 1) * s.dw / SW;
      const int64_t plines = std::max((HQ * WQ + 15) / 16, (16 * vlines + off_max + 15) / 16 + 1);
      std::vector<std::vector<Value>> phase(size_t(SH * SW));
      for (int64_t ph = 0; ph < SH; ++ph)
        for (int64_t pw = 0; pw < SW; ++pw)
          for (int64_t p = 0; p < plines; ++p) {
            std::vector<LineLane> src;
            for (int i = 0; i < 16; ++i) {
              const int64_t e = 16 * p + i, pr = e / WQ * SH + ph, pc = e % WQ * SW + pw;  // P's row and column
              src.push_back(e >= HQ * WQ || pr >= HP || pc >= WP ? LineLane{-1, -1} : input_at(pr - s.pt, pc - s.pl));
            }
            Value v = gather(in, src);
            phase[size_t(ph * SW + pw)].push_back(v.valid() ? v : zero);
          }
      std::map<std::pair<int64_t, int64_t>, Value> windows;  // (phase, e): the phase plane from e on
      auto window = [&](int64_t ph, int64_t e) {
        auto it = windows.find({ph, e});
        if (it != windows.end()) return it->second;
        const std::vector<Value>& P = phase[size_t(ph)];
        Value v;
        if (e % 16 == 0) {
          v = P[size_t(e / 16)];
        } else {
          std::vector<Value> l;
          for (int i = 0; i < 16; ++i) l.push_back(extract(P[size_t((e + i) / 16)], int((e + i) % 16)));
          v = make_line(l);
        }
        return windows.emplace(std::make_pair(ph, e), v).first->second;
      };
      std::vector<Value> vout;
      for (int64_t m = 0; m < vlines; ++m) {
        TapSum sum;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t vh = kh * s.dh, vw = kw * s.dw;
            sum.add(wv[size_t(kh * KW + kw)], window(vh % SH * SW + vw % SW, 16 * m + vh / SH * WQ + vw / SW));
          }
        vout.push_back(sum.result(bv, relu));
      }
      for (int64_t m = 0; m < out_lines; ++m) {
        const int64_t o0 = line_start(m, nout);
        std::vector<LineLane> src;
        for (int i = 0; i < 16; ++i) {
          const int64_t v = (o0 + i) / OW * WQ + (o0 + i) % OW;
          src.push_back({v / 16, v % 16});
        }
        store(o0, gather(vout, src));
      }
      return;
    }
    // Other strides: per output line and tap, the inputs each lane reads.
    for (int64_t m = 0; m < out_lines; ++m) {
      const int64_t o0 = line_start(m, nout);
      TapSum sum;
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          std::vector<LineLane> src;
          for (int i = 0; i < 16; ++i) {
            const int64_t o = o0 + i, r = o / OW, q = o % OW;
            src.push_back(input_at(r * s.sh - s.pt + kh * s.dh, q * s.sw - s.pl + kw * s.dw));
          }
          Value v = gather(in, src);
          if (v.valid()) sum.add(wv[size_t(kh * KW + kw)], v);  // else every lane in the padding
        }
      store(o0, sum.result(bv, relu));
    }
  });
}

void plan_conv_depthwise_small(Plan& pl, const ConvShape& s, bool padded, const EpilogueUse* eu) {
  const int bslot = 2, yslot = s.bias ? 3 : 2;
  Step st;
  st.kernel = conv_depthwise_small_kernel(s, padded, eu ? eu->spec : nullptr);
  st.dims.grid = {uint32_t(s.c), uint32_t(s.n), 1};
  st.buffers = {0, 1};
  if (s.bias) st.buffers.push_back(bslot);
  st.buffers.push_back(yslot);
  if (eu) st.buffers.insert(st.buffers.end(), eu->slots.begin(), eu->slots.end());
  st.scalars = {u(s.c)};
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
