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
// stores. Zen 5, 1 thread (kgen op), 3×3 pad 1, against the pre-pass + rows
// kernel (impl=3): 1×576×14² 0.063 -> 0.031 ms, 1×960×7² 0.064 -> 0.0075;
// stride 2: 1×96×28² 0.048 -> 0.0074, 1×384×14² 0.071 -> 0.0092. Cold
// compile 40 ms (7²) to 100 ms (14²).
#include <algorithm>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv.h"
#include "ops/conv_tap_sum.h"

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

ir::Kernel conv_depthwise_small_kernel(const ConvShape& s) {
  if (!depthwise_small_fits(s)) throw std::invalid_argument("conv_depthwise_small_kernel: shape not supported");
  const int64_t H = s.h, W = s.w, OH = s.oh(), OW = s.ow(), KH = s.kh, KW = s.kw, T = KH * KW;
  const int64_t nin = H * W, nout = OH * OW, in_lines = (nin + 15) / 16, out_lines = (nout + 15) / 16;
  const bool bias = s.bias, relu = s.relu;
  std::string name = "conv_depthwise_small";
  for (int64_t v : {H, W, KH, KW, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl, s.pb, s.pr}) name += "_" + std::to_string(v);
  name += std::string(bias ? "_bias" : "") + (relu ? "_relu" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto w = kb.input("w", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", f32);
    auto C = kb.scalar("c", u32);
    kb.workgroup(1);
    Value c = group_id(0), n = group_id(1);
    Value plane = cast(u64, n * C + c);
    Value xbase = plane * uint64_t(nin), ybase = plane * uint64_t(nout);
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
    for (int64_t m = 0; m < out_lines; ++m) {
      const int64_t o0 = line_start(m, nout);
      TapSum sum;
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          // Per lane: the input line and lane it reads (line -1: padding).
          std::vector<LineLane> src(16, LineLane{-1, -1});
          std::vector<int64_t> used;
          for (int i = 0; i < 16; ++i) {
            const int64_t o = o0 + i, r = o / OW, q = o % OW;
            const int64_t ih = r * s.sh - s.pt + kh * s.dh, iw = q * s.sw - s.pl + kw * s.dw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            src[size_t(i)] = line_lane(ih * W + iw, nin);
            if (std::find(used.begin(), used.end(), src[size_t(i)].line) == used.end()) used.push_back(src[size_t(i)].line);
          }
          if (used.empty()) continue;  // every lane in the padding
          // A shuffle per two source lines, merged by lane masks.
          Value v;
          for (size_t k = 0; k < used.size(); k += 2) {
            const int64_t la = used[k], lb = k + 1 < used.size() ? used[k + 1] : la;
            auto mine = [&](int i) { return src[size_t(i)].line == la || src[size_t(i)].line == lb; };
            std::vector<Value> l;
            for (int i = 0; i < 16; ++i)
              l.push_back(mine(i) ? extract(in[size_t(src[size_t(i)].line)], int(src[size_t(i)].lane)) : extract(in[size_t(la)], 0));
            Value part = make_line(l);
            v = k == 0 ? part : select(mask(mine), part, v);
          }
          if (std::any_of(src.begin(), src.end(), [](const LineLane& ll) { return ll.line < 0; }))
            v = select(mask([&](int i) { return src[size_t(i)].line >= 0; }), v, zero);
          sum.add(wv[size_t(kh * KW + kw)], v);
        }
      store_line(y, ybase + uint64_t(o0), sum.result(bv, relu));
    }
  });
}

void plan_conv_depthwise_small(Plan& pl, const ConvShape& s) {
  const int bslot = 2, yslot = s.bias ? 3 : 2;
  Step st;
  st.kernel = conv_depthwise_small_kernel(s);
  st.dims.grid = {uint32_t(s.c), uint32_t(s.n), 1};
  st.buffers = {0, 1};
  if (s.bias) st.buffers.push_back(bslot);
  st.buffers.push_back(yslot);
  st.scalars = {u(s.c)};
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
