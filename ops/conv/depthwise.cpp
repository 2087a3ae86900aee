// CPU depthwise convolution (groups == C == OC) by output rows, over the
// pre-passed input xq (see ops/conv/conv.h).
//
// A depthwise channel does KH·KW FMAs per output, so what the generic direct
// kernel spends around them decides its speed: its blocks run over virtual
// positions (rows of wq), and about a third of its lines cross an output
// row's end and are stored lane by lane; its weights and tap offsets are
// loaded per block. Here a work-item owns RB output rows of one channel:
// the T = KH·KW taps are unrolled with their weights (broadcast) and
// offsets held in registers, and each row goes in lines of 16 outputs that
// never cross its end (the last one ends at OW, rewriting some outputs of
// the one before with the same values); `rows` output rows go together,
// sharing the input lines they have in common (ops/conv/tap_sum.h sums the
// taps). Rows under 16 outputs compute one line and store its first OW
// lanes. This is the fallback where the kernels reading x directly do not
// apply (column strides over 2, rows under 16 inputs or outputs on planes
// over 256 outputs; ops/conv/depthwise_direct.cpp, ops/conv/depthwise_small.cpp).
// 1×144×56² 3×3 pad 1, 1 thread: 0.17 ms in the direct kernel, 0.073 here.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/tap_sum.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

}  // namespace

ir::Kernel conv_depthwise_rows_kernel(const DepthwiseTile& g, bool bias, bool relu) {
  const uint32_t KH = uint32_t(g.kh), KW = uint32_t(g.kw), T = KH * KW, RB = uint32_t(g.rb), R2 = uint32_t(g.rows);
  const std::string name = "conv_depthwise_rows_k" + std::to_string(KH) + "x" + std::to_string(KW) + "_sh" +
                           std::to_string(g.sh) + "_dh" + std::to_string(g.dh) + "_rb" + std::to_string(RB) + "_r" +
                           std::to_string(R2) + (bias ? "_bias" : "") + (relu ? "_relu" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", f32);
    auto tab = kb.input("tab", u32);
    auto w = kb.input("w", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", f32);
    auto C = kb.scalar("c", u32);
    auto CS = kb.scalar("chan_stride", u32);
    auto OH = kb.scalar("oh", u32);
    auto OW = kb.scalar("ow", u32);
    auto WQ = kb.scalar("wq", u32);
    kb.workgroup(1);
    Value c = group_id(1), n = group_id(2);
    Value r0 = group_id(0) * RB, r1 = min(r0 + RB, OH);
    Value xbase = cast(u64, n * C + c) * cast(u64, CS);
    Value ybase = cast(u64, n * C + c) * cast(u64, OH * OW);
    std::vector<Value> off, wv;
    for (uint32_t t = 0; t < T; ++t) {
      off.push_back(cast(u64, tab[t]));  // channel 0 of the group: the tap's shift alone
      wv.push_back(splat(w[cast(u64, c) * uint64_t(T) + uint64_t(t)], 16));
    }
    const Value bv = bias ? splat(b[c], 16) : Value();
    // The 16 outputs from column c0 on of rows r .. r + nr - 1. Output row
    // r + q reads tap (kh, kw) in phase-plane row r + q + kh·dh / sh of the
    // phases kh·dh % sh: taps of the rows that land on the same plane row
    // (at stride 1: kernel row kh of row q + 1 is kernel row kh + 1 of row
    // q) share one load, so 4 rows of a 3×3 take 18 loads, not 36.
    auto lines_at = [&](const Value& r, const Value& c0, uint32_t nr) {
      Value at = xbase + cast(u64, r * WQ + c0);
      std::map<std::tuple<uint32_t, uint32_t, uint32_t>, Value> loaded;
      std::vector<Value> out;
      for (uint32_t q = 0; q < nr; ++q) {
        TapSum sum;
        for (uint32_t kh = 0; kh < KH; ++kh) {
          const uint32_t vh = kh * uint32_t(g.dh);
          for (uint32_t kw = 0; kw < KW; ++kw) {
            const uint32_t t = kh * KW + kw;
            const auto key = std::make_tuple(vh % uint32_t(g.sh), q + vh / uint32_t(g.sh), kw);
            auto it = loaded.find(key);
            if (it == loaded.end()) it = loaded.emplace(key, load_line(xq, at + uint64_t(q) * cast(u64, WQ) + off[t])).first;
            sum.add(wv[t], it->second);
          }
        }
        out.push_back(sum.result(bv, relu));
      }
      return out;
    };
    Value nlines = OW / 16u;
    // Rows r .. r + nr - 1 in lines of 16 within each row.
    auto rows = [&](const Value& r, uint32_t nr) {
      auto put = [&](const Value& c0) {
        auto v = lines_at(r, c0, nr);
        for (uint32_t q = 0; q < nr; ++q) store_line(y, ybase + cast(u64, (r + q) * OW + c0), v[q]);
      };
      for_range(0u, nlines, [&](Value k) { put(k * 16u); });
      if_(nlines > 0u && nlines * 16u < OW, [&] { put(OW - 16u); }).else_([&] {
        if_(nlines == 0u, [&] {
          auto v = lines_at(r, constant(u32, 0u), nr);
          for (uint32_t q = 0; q < nr; ++q) {
            Value yrow = ybase + cast(u64, (r + q) * OW);
            for (int i = 0; i < 16; ++i) if_(OW > uint32_t(i), [&] { y[yrow + uint64_t(i)] = v[q].lane(i); });
          }
        });
      });
    };
    Value ngroups = (r1 - r0) / R2;
    for_range(0u, ngroups, [&](Value k) { rows(r0 + k * R2, R2); });
    if (R2 > 1) for_range(r0 + ngroups * R2, r1, [&](Value r) { rows(r, 1); });
  });
}

bool depthwise_rows_fit(const ConvShape& s) { return s.groups == s.c && s.groups == s.oc && s.taps() <= 49; }

void plan_conv_depthwise_rows(Plan& pl, size_t nio, const ConvShape& s, int rb, int rows) {
  // Rows under 16 outputs read a line past the row: up to 16 positions
  // beyond the last plane's virtual end, plus a row of taps.
  ConvPrep pr = plan_conv_prep(pl, nio, s, 0, s.wq() + 32);
  const int bslot = 2, yslot = s.bias ? 3 : 2;
  Step st;
  DepthwiseTile g;
  g.kh = int(s.kh), g.kw = int(s.kw), g.sh = int(s.sh), g.dh = int(s.dh), g.rb = rb, g.rows = rows;
  st.kernel = conv_depthwise_rows_kernel(g, s.bias, s.relu);
  st.dims.grid = {groups_for(s.oh(), rb), uint32_t(s.c), uint32_t(s.n)};
  st.buffers = {pr.xq, pr.tab, 1};
  if (s.bias) st.buffers.push_back(bslot);
  st.buffers.push_back(yslot);
  st.scalars = {u(s.c), u(s.chan_stride()), u(s.oh()), u(s.ow()), u(s.wq())};
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
