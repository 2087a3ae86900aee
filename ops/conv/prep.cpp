// The input pre-pass shared by the CPU conv paths (see ops/conv/conv.h): the
// zero-padded, stride-deinterleaved copy xq of x and the table of tap offsets
// into it. Both are O(input) and O(C·taps) against the O(input·OC·taps) conv,
// and they let the inner loops read contiguous, unguarded lines.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {
uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }
}  // namespace

ConvShape conv_shape(const Problem& p) {
  ConvShape s;
  s.n = p.dim(0), s.c = p.dim(1), s.h = p.dim(2), s.w = p.dim(3), s.oc = p.dim(4), s.kh = p.dim(5), s.kw = p.dim(6);
  s.sh = p.attr("stride_h", 1), s.sw = p.attr("stride_w", 1);
  s.pt = p.attr("pad_h", 0), s.pl = p.attr("pad_w", 0);
  s.pb = p.attr("pad_b", s.pt), s.pr = p.attr("pad_r", s.pl);
  s.dh = p.attr("dilation_h", 1), s.dw = p.attr("dilation_w", 1);
  s.groups = p.attr("groups", 1);
  s.bias = p.attr("bias", 0) != 0, s.relu = p.attr("relu", 0) != 0;
  s.w_layout = p.attr("w_layout", 0);
  return s;
}

int64_t conv_weights_oc32_size(const ConvShape& s) {
  return s.groups * ((s.ocg() + kWeightsOc32 - 1) / kWeightsOc32) * s.cg() * s.taps() * kWeightsOc32;
}

namespace {
// Calls f(packed index, OIHW index or -1 for a pad lane) for every packed entry.
template <class F>
void for_each_oc32(const ConvShape& s, F&& f) {
  const int64_t J = s.cg() * s.taps(), OB = (s.ocg() + kWeightsOc32 - 1) / kWeightsOc32;
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t ob = 0; ob < OB; ++ob)
      for (int64_t j = 0; j < J; ++j)
        for (int64_t o = 0; o < kWeightsOc32; ++o) {
          const int64_t oc = ob * kWeightsOc32 + o;
          f(((g * OB + ob) * J + j) * kWeightsOc32 + o, oc < s.ocg() ? (g * s.ocg() + oc) * J + j : -1);
        }
}
}  // namespace

void conv_pack_weights_oc32(const ConvShape& s, const float* w, float* packed) {
  for_each_oc32(s, [&](int64_t pi, int64_t wi) { packed[pi] = wi < 0 ? 0.0f : w[wi]; });
}

int64_t conv_weights_winograd_size(const ConvShape& s) { return s.groups * kWeightsWinograd * s.ocg() * s.cg(); }

namespace {
// Calls f(OIHW index of tap 0, U index of ξ = 0, U's ξ stride) per filter and channel.
template <class F>
void for_each_winograd(const ConvShape& s, F&& f) {
  const int64_t ocg = s.ocg(), cg = s.cg();
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t o = 0; o < ocg; ++o)
      for (int64_t k = 0; k < cg; ++k) f(((g * ocg + o) * cg + k) * 9, (g * kWeightsWinograd * ocg + o) * cg + k, ocg * cg);
}
}  // namespace

void conv_pack_weights_winograd(const ConvShape& s, const float* w, float* u) {
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for_each_winograd(s, [&](int64_t wi, int64_t ui, int64_t xs) {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double acc = 0;
        for (int a = 0; a < 3; ++a)
          for (int c = 0; c < 3; ++c) acc += G[i][a] * double(w[wi + 3 * a + c]) * G[j][c];
        u[ui + (4 * i + j) * xs] = float(acc);
      }
  });
}

void conv_unpack_weights_winograd(const ConvShape& s, const float* u, float* w) {
  static const double L[3][4] = {{1, 0, 0, 0}, {0, 1, -1, 0}, {0, 0, 0, 1}};
  for_each_winograd(s, [&](int64_t wi, int64_t ui, int64_t xs) {
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c) {
        double acc = 0;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) acc += L[a][i] * double(u[ui + (4 * i + j) * xs]) * L[c][j];
        w[wi + 3 * a + c] = float(acc);
      }
  });
}

void conv_unpack_weights_oc32(const ConvShape& s, const float* packed, float* w) {
  for_each_oc32(s, [&](int64_t pi, int64_t wi) {
    if (wi >= 0) w[wi] = packed[pi];
  });
}

// One work-item per phase plane (a channel's sh·sw planes of hq rows), rows
// in a loop: zeros left of the input, a copy (stride sw through x's row),
// zeros right of it; whole rows of zeros above/below. With the column stride
// baked in (sw_fixed 1 or 2; 0: a runtime stride) the copy goes in lines:
// stride 1 one load and store per 16, stride 2 two loads and a shuffle (the
// even elements of 31): a runtime stride copies element by element, and a
// work-item per row pays its set-up every 29-58 elements (1×144×56² at
// stride 2, 1 thread: 79% of the depthwise conv).
ir::Kernel conv_pad_phase_kernel(int sw_fixed) {
  return kernel("conv_pad_phase" + (sw_fixed ? "_sw" + std::to_string(sw_fixed) : std::string()), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto xq = kb.output("xq", f32);
    auto C = kb.scalar("c", u32);
    auto H = kb.scalar("h", i32);
    auto W = kb.scalar("w", i32);
    auto SH = kb.scalar("sh", u32);
    auto SWs = kb.scalar("sw", u32);
    auto PT = kb.scalar("pt", i32);
    auto PL = kb.scalar("pl", i32);
    auto HQ = kb.scalar("hq", u32);
    auto WQ = kb.scalar("wq", u32);
    auto total = kb.scalar("total", u32);  // N·C·chan_stride: where the slack starts
    auto slack = kb.scalar("slack", u32);
    kb.workgroup(1);
    const Value SW = sw_fixed ? Value(constant(u32, uint32_t(sw_fixed))) : Value(SWs);
    Value phase = group_id(0), c = group_id(1), n = group_id(2);
    Value ph = phase / SW, pw = phase - ph * SW;
    Value nc = cast(u64, n * C + c);
    Value plane = (nc * cast(u64, SH * SW) + cast(u64, phase)) * cast(u64, HQ * WQ);
    // Columns [jlo, jhi) of every row are inside x: j·sw >= a.
    Value a = PL - cast(i32, pw);
    Value swi = cast(i32, SW);
    Value jlo = min(cast(u32, select(a <= 0, constant(i32, 0), (a + swi - 1) / swi)), WQ);
    Value jhi = max(min(cast(u32, (W + a + swi - 1) / swi), WQ), jlo);
    Value ncopy = jhi - jlo, nlines = sw_fixed ? ncopy / 16u : constant(u32, 0u);
    Value edge_lines = WQ >= 16u && jlo <= 16u && WQ - jhi <= 16u;
    for_range(0u, HQ, [&](Value i) {
      Value ih = cast(i32, i * SH + ph) - PT;
      Value dst = plane + cast(u64, i * WQ);
      auto zeros = [&](const Value& j0, const Value& j1) {
        for_range(j0, j1, [&](Value j) { xq[dst + cast(u64, j)] = 0.0f; });
      };
      if_(ih >= 0 && ih < H, [&] {
        Value src = (nc * cast(u64, cast(u32, H)) + cast(u64, cast(u32, ih))) * cast(u64, cast(u32, W));
        // The padding columns: a zero line at each end of the row, which the
        // copy then overwrites inside (clang makes the loops memset calls:
        // one per row cost 20-30% of a stride-2 pre-pass).
        if (sw_fixed) {
          if_(edge_lines, [&] {
            store_line(xq, dst, splat(0.0f, 16));
            store_line(xq, dst + cast(u64, WQ - 16u), splat(0.0f, 16));
          }).else_([&] { zeros(constant(u32, 0u), jlo); });
        } else {
          zeros(constant(u32, 0u), jlo);
        }
        // x column j·sw - a >= 0 for j >= jlo.
        Value col0 = src + cast(u64, cast(u32, cast(i32, jlo * SW) - a));
        Value out0 = dst + cast(u64, jlo);
        // The 16 outputs from j0 on, as a line.
        auto chunk = [&](const Value& j0) {
          Value in = col0 + cast(u64, j0 * SW);
          Value v = load_line(x, in);
          if (sw_fixed == 2) {
            // Even elements of [in, in + 31): the second load one element
            // back, so nothing past the last one copied is read.
            Value hi = load_line(x, in + uint64_t(15));
            std::vector<Value> l;
            for (int e = 0; e < 16; ++e) l.push_back(e < 8 ? extract(v, 2 * e) : extract(hi, 2 * (e - 8) + 1));
            v = make_line(l);
          }
          store_line(xq, out0 + cast(u64, j0), v);
        };
        for_range(0u, nlines, [&](Value k) { chunk(k * 16u); });
        // The rest: one more line ending at the last output (rewriting some
        // of the one before), or element by element in rows under 16.
        Value rest = nlines * 16u;
        if_(nlines > 0u && rest < ncopy, [&] { chunk(ncopy - 16u); }).else_([&] {
          for_range(rest, ncopy, [&](Value j) { xq[out0 + cast(u64, j)] = x[col0 + cast(u64, j * SW)]; });
        });
        if (sw_fixed) if_(!edge_lines, [&] { zeros(jhi, WQ); });
        else zeros(jhi, WQ);
      }).else_([&] { zeros(constant(u32, 0u), WQ); });
    });
    if_(phase == 0u && c == 0u && n == 0u, [&] {
      for_range(0u, slack, [&](Value k) { xq[cast(u64, total) + cast(u64, k)] = 0.0f; });
    });
  });
}

constexpr int kTapChannels = 64;

ir::Kernel conv_tap_offsets_kernel() {
  return kernel("conv_tap_offsets", [&](KernelBuilder& kb) {
    auto off = kb.inout("off", u32);  // the later channels read the first one's entries back
    auto J = kb.scalar("count", u32);  // Cg·T
    auto T = kb.scalar("taps", u32);
    auto KW = kb.scalar("kw", u32);
    auto DH = kb.scalar("dh", u32);
    auto DW = kb.scalar("dw", u32);
    auto SH = kb.scalar("sh", u32);
    auto SW = kb.scalar("sw", u32);
    auto WQ = kb.scalar("wq", u32);
    auto PLANE = kb.scalar("plane", u32);
    auto CS = kb.scalar("chan_stride", u32);
    // One work-item per group: a CPU workgroup of 64 makes LLVM vectorise the
    // work-item loop, u32 divisions and all (47 ms of code generation for
    // C·T entries). A group takes kTapChannels channels: its first channel's
    // T entries by the divisions, the others' as those plus c·chan_stride
    // (rather than 6 divisions per entry).
    kb.workgroup(1);
    Value c0 = group_id(0) * uint32_t(kTapChannels);
    Value C = J / T, c1 = min(c0 + uint32_t(kTapChannels), C);
    Value first = c0 * T;
    for_range(0u, T, [&](Value t) {
      Value kh = t / KW, kw = t - kh * KW;
      Value vh = kh * DH, vw = kw * DW;
      Value ph = vh % SH, pw = vw % SW;
      off[first + t] = c0 * CS + (ph * SW + pw) * PLANE + (vh / SH) * WQ + vw / SW;
    });
    for_range(c0 + 1u, c1, [&](Value c) {
      Value step = (c - c0) * CS;
      for_range(0u, T, [&](Value t) { off[c * T + t] = off[first + t] + step; });
    });
  });
}

ConvPrep plan_conv_prep(Plan& pl, size_t nio, const ConvShape& s, int x_slot, int64_t slack, bool taps) {
  ConvPrep r;
  const int64_t total = s.n * s.c * s.chan_stride();
  r.xq = pl.add_temp(nio, size_t(total + slack) * 4);
  {
    Step st;
    st.kernel = conv_pad_phase_kernel(s.sw <= 2 ? int(s.sw) : 0);
    st.dims.grid = {uint32_t(s.sh * s.sw), uint32_t(s.c), uint32_t(s.n)};
    st.buffers = {x_slot, r.xq};
    st.scalars = {u(s.c),  u(s.h),  u(s.w),    u(s.sh),    u(s.sw),  u(s.pt), u(s.pl),
                  u(s.hq()), u(s.wq()), u(total), u(slack)};
    pl.steps.push_back(std::move(st));
  }
  if (!taps) return r;
  const int64_t J = s.cg() * s.taps();
  r.tab = pl.add_temp(nio, size_t(J) * 4);
  {
    Step st;
    st.kernel = conv_tap_offsets_kernel();
    st.dims.grid = {uint32_t((s.cg() + kTapChannels - 1) / kTapChannels), 1, 1};
    st.buffers = {r.tab};
    st.scalars = {u(J),    u(s.taps()), u(s.kw),      u(s.dh),           u(s.dw),
                  u(s.sh), u(s.sw),     u(s.wq()), u(s.plane()), u(s.chan_stride())};
    pl.steps.push_back(std::move(st));
  }
  return r;
}

}  // namespace kgen::ops
