// CPU depthwise convolution (groups == C == OC) by output rows, over the
// pre-passed input xq (see ops/conv.h).
//
// A depthwise channel does KH·KW FMAs per output, so what the generic direct
// kernel spends around them decides its speed: its blocks run over virtual
// positions (rows of wq), and about a third of its lines cross an output
// row's end and are stored lane by lane; its weights and tap offsets are
// loaded per block. Here a work-item owns RB output rows of one channel:
// the T = KH·KW taps are unrolled with their weights (broadcast) and
// offsets held in registers, and each row goes in lines of 16 outputs that
// never cross its end (the last one ends at OW, rewriting some outputs of
// the one before with the same values). Two accumulators halve the FMA
// chain. Rows under 16 outputs compute one line and store its first OW
// lanes. Zen 5, 1×144×56², 3×3 pad 1, 1 thread (kgen op --profile): stride
// 1 the conv kernel 0.17 -> 0.112 ms, stride 2 0.083 -> 0.038 ms (3 or 4
// chains: no faster).
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

constexpr uint32_t kChains = 2;  // independent FMA chains per line

}  // namespace

ir::Kernel conv_depthwise_rows_kernel(int taps, int rb, bool bias, bool relu) {
  const uint32_t T = uint32_t(taps), RB = uint32_t(rb);
  const std::string name = "conv_depthwise_rows_t" + std::to_string(T) + "_rb" + std::to_string(RB) + (bias ? "_bias" : "") +
                           (relu ? "_relu" : "");
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
    // The 16 outputs of row r from column c0 on.
    auto line_at = [&](const Value& r, const Value& c0) {
      Value at = xbase + cast(u64, r * WQ + c0);
      std::vector<Value> acc;
      for (uint32_t t = 0; t < T; ++t) {
        Value x = load_line(xq, at + off[t]);
        if (t < kChains) acc.push_back(wv[t] * x);
        else acc[t % kChains] = fma(wv[t], x, acc[t % kChains]);
      }
      while (acc.size() > 1) {
        acc[0] = acc[0] + acc.back();
        acc.pop_back();
      }
      Value v = acc[0];
      if (bias) v = v + bv;
      if (relu) v = max(v, 0.0f);
      return v;
    };
    Value nlines = OW / 16u;
    for_range(r0, r1, [&](Value r) {
      Value yrow = ybase + cast(u64, r * OW);
      for_range(0u, nlines, [&](Value k) { store_line(y, yrow + cast(u64, k * 16u), line_at(r, k * 16u)); });
      if_(nlines > 0u && nlines * 16u < OW, [&] {
        store_line(y, yrow + cast(u64, OW - 16u), line_at(r, OW - 16u));
      }).else_([&] {
        if_(nlines == 0u, [&] {
          Value v = line_at(r, constant(u32, 0u));
          for (int i = 0; i < 16; ++i) if_(OW > uint32_t(i), [&] { y[yrow + uint64_t(i)] = v.lane(i); });
        });
      });
    });
  });
}

bool depthwise_rows_fit(const ConvShape& s) { return s.groups == s.c && s.groups == s.oc && s.taps() <= 49; }

void plan_conv_depthwise_rows(Plan& pl, size_t nio, const ConvShape& s, int rb) {
  // Rows under 16 outputs read a line past the row: up to 16 positions
  // beyond the last plane's virtual end, plus a row of taps.
  ConvPrep pr = plan_conv_prep(pl, nio, s, 0, s.wq() + 32);
  const int bslot = 2, yslot = s.bias ? 3 : 2;
  Step st;
  st.kernel = conv_depthwise_rows_kernel(int(s.taps()), rb, s.bias, s.relu);
  st.dims.grid = {groups_for(s.oh(), rb), uint32_t(s.c), uint32_t(s.n)};
  st.buffers = {pr.xq, pr.tab, 1};
  if (s.bias) st.buffers.push_back(bslot);
  st.buffers.push_back(yslot);
  st.scalars = {u(s.c), u(s.chan_stride()), u(s.oh()), u(s.ow()), u(s.wq())};
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
