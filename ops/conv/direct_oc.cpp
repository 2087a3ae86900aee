// CPU direct convolution with lines along output channels, for small maps
// with many channels (ResNet's 14×14 and 7×7 layers).
//
// The direct kernel (ops/conv/direct.cpp) runs its lines along virtual
// positions: on a 7×7 map (rows of 9 with the padding) a plane is 63 of
// them, 4 lines, and the positions are what its register block runs out
// of. Here a work-item owns PB consecutive outputs of one output row and
// 16·NL output channels: per (input channel, tap) it broadcasts the PB
// inputs (consecutive in the pre-passed xq) and loads NL lines of packed
// weights (wp, 16·NL channels contiguous per entry), PB·NL FMAs. Outputs
// then go out as scalars, channel by channel: few against the Cg·KH·KW·PB·NL
// FMAs of a block. A row's last chunk ends at OW (rewriting
// outputs of the one before with the same values).
// It beats the direct kernel on 14² to 28² maps, not on 7×7: there 4 lines
// of channels stream the packed weights from beyond L2 (1.2 MB per block of
// 64 at 512 channels) and 2 lines × 7 outputs do too little per weight.
#include <algorithm>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/direct_args.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel conv_direct_oc_kernel(int pb, int nl, bool bias, bool relu, const EpilogueSpec* ep) {
  const uint32_t PB = uint32_t(pb), NL = uint32_t(nl), OCB = 16 * NL;
  const std::string name = "conv_direct_oc_pb" + std::to_string(PB) + "_nl" + std::to_string(NL) + (bias ? "_bias" : "") +
                           (relu ? "_relu" : "") + (ep ? ep->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    const auto em = emitter_of(ep);
    const DirectArgs d = declare_direct_args(kb, bias, em.get());
    const Array &xq = d.xq, &tab = d.tab, &wp = d.wp, &b = d.b, &y = d.y;
    const Value &J = d.J, &C = d.C, &CG = d.CG, &CS = d.CS, &OCG = d.OCG, &OB = d.OB, &OC = d.OC, &OH = d.OH, &OW = d.OW,
                &WQ = d.WQ;
    auto NC = kb.scalar("chunks", u32);  // chunks of PB outputs per row
    kb.workgroup(1);
    // Group x: (row, chunk) with chunks fastest; y: (group, OC block); z: n.
    Value gx = group_id(0), gy = group_id(1), n = group_id(2);
    Value r = gx / NC, k = gx - r * NC;
    Value c0 = min(k * PB, OW - PB);  // the last chunk ends at OW
    Value g = gy / OB, ob = gy - g * OB;
    Value oc0 = ob * OCB;  // within the group
    Value xbase = cast(u64, n * C + g * CG) * cast(u64, CS) + cast(u64, r * WQ + c0);
    Value wbase = cast(u64, gy * J) * uint64_t(OCB);
    std::vector<Var> acc;
    for (uint32_t i = 0; i < PB * NL; ++i) acc.push_back(var(splat(0.0f, 16)));
    for_range(0u, J, [&](Value j) {
      Value at = xbase + cast(u64, tab[j]);
      Value wj = wbase + cast(u64, j) * uint64_t(OCB);
      std::vector<Value> wl;
      for (uint32_t l = 0; l < NL; ++l) wl.push_back(load_line(wp, wj + uint64_t(16 * l)));
      for (uint32_t i = 0; i < PB; ++i) {
        Value xv = splat(xq[at + uint64_t(i)], 16);
        for (uint32_t l = 0; l < NL; ++l) acc[i * NL + l] = fma(xv, wl[l], acc[i * NL + l]);
      }
    });
    // Output (oc0 + e, r, c0 + i): channel planes OH·OW apart. The block goes
    // through a stack copy, channel by channel in a runtime loop: unrolled
    // over lanes, its PB·16·NL scalar stores took the kernel's compile to
    // 500 ms.
    Value plane = OH * OW;
    Value ybase = cast(u64, n * OC + g * OCG + oc0) * cast(u64, plane) + cast(u64, r * OW + c0);
    Array block = shared_array(f32, int64_t(PB) * OCB);
    for (uint32_t i = 0; i < PB; ++i)
      for (uint32_t l = 0; l < NL; ++l) store_line(block, constant(u32, (i * NL + l) * 16), acc[i * NL + l].get());
    for_range(0u, min(OCG - oc0, OCB), [&](Value e) {
      Value bias_e = bias ? Value(b[g * OCG + oc0 + e]) : Value();
      Value at = ybase + cast(u64, e) * cast(u64, plane);
      for (uint32_t i = 0; i < PB; ++i) {
        Value v = block[e + i * OCB];
        if (bias) v = v + bias_e;
        if (relu) v = max(v, 0.0f);
        y[at + uint64_t(i)] = em ? em->apply(v, n, g * OCG + oc0 + e, r * OW + c0 + i) : v;
      }
    });
  });
}

// PB outputs per chunk (at most OW) and NL lines of channels: PB·NL
// accumulators + NL weight lines within the register file (the broadcast
// folds into the FMA's memory operand).
int vector_registers(const TargetCaps& caps) { return caps.vector_bits >= 512 ? 32 : 16; }

// A row in equal chunks of at most 14 outputs (and what the registers
// hold): a last chunk overlapping the one before would repeat its work.
int direct_oc_chunk(const ConvShape& s, const TargetCaps& caps, int nl) {
  const int64_t most = std::min<int64_t>(14, (vector_registers(caps) - nl) / nl);
  const int64_t chunks = (s.ow() + most - 1) / most;
  return int((s.ow() + chunks - 1) / chunks);
}

DirectOcTile direct_oc_tile(const ConvShape& s, const TargetCaps& caps) {
  DirectOcTile t;
  t.nl = s.ocg() >= 32 ? 2 : 1;
  t.pb = direct_oc_chunk(s, caps, t.nl);
  return t;
}

bool direct_oc_fits(const ConvShape& s, const DirectOcTile& t, const TargetCaps& caps) {
  return t.nl >= 1 && t.nl <= 4 && t.pb >= 1 && t.pb <= s.ow() && t.pb * t.nl + t.nl <= vector_registers(caps);
}

void plan_conv_direct_oc(Plan& pl, size_t nio, const ConvShape& s, const DirectOcTile& t, const EpilogueUse* eu) {
  // Every read is inside a channel's phase planes: real positions only.
  ConvPrep pr = plan_conv_prep(pl, nio, s, 0, 16);
  const int64_t ocb = 16 * t.nl;
  const int64_t ob = (s.ocg() + ocb - 1) / ocb;
  // Weights given packed (w_layout=32, two lines) are read as they are.
  const bool prepacked = s.w_layout == kWeightsOc32 && ocb == kWeightsOc32;
  const int wp = prepacked ? 1 : plan_conv_pack_direct_weights(pl, nio, s, int(ocb));
  const int64_t chunks = (s.ow() + t.pb - 1) / t.pb;
  Step st;
  st.kernel = conv_direct_oc_kernel(t.pb, t.nl, s.bias, s.relu, eu ? eu->spec : nullptr);
  st.dims.grid = {uint32_t(s.oh() * chunks), uint32_t(s.groups * ob), uint32_t(s.n)};
  st.buffers = direct_buffers(s, pr, wp, eu);
  st.scalars = direct_scalars(s, ob, chunks);
  pl.steps.push_back(std::move(st));
}

}  // namespace kgen::ops
