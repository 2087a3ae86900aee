// CPU direct convolution over the pre-passed input xq (see ops/conv/conv.h).
//
// A single-work-item workgroup owns OCB output channels of one group and PB
// blocks of 16·L consecutive virtual positions. Per block:
//   acc[OCB][L] = 0
//   for j in [0, Cg·T):                    (channel × tap, one runtime loop)
//     L lines  xq[xbase + p0 + off[j] + 16·l ..]   (contiguous, unaligned)
//     OCB broadcasts wp[j][o]                      (contiguous per j)
//     acc[o][l] += w · line
//   y = relu(acc + bias), dropping positions past OW/OH
// Lines are built from 16 scalar loads at consecutive u64 indices: the u64
// arithmetic cannot wrap, so clang proves them adjacent and emits one vmovups
// (with u32 indices it must assume wrap-around and gathers).
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/layout/transpose_block.h"
#include "ops/conv/direct_args.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

}  // namespace

// One work-item per (chunk of kPackChunk j's, oc block, group): per j, the
// OCB weights are read from OCB rows of w (clamped: a missing channel reads a
// real row and stores 0) and stored as one contiguous run.
constexpr int kPackChunk = 64;

ir::Kernel conv_pack_direct_weights_kernel(int ocb) {
  const uint32_t OCB = uint32_t(ocb);
  return kernel("conv_pack_direct_w_ocb" + std::to_string(ocb), [&](KernelBuilder& kb) {
    auto w = kb.input("w", f32);
    auto wp = kb.output("wp", f32);
    auto J = kb.scalar("count", u32);  // Cg·T
    auto OCG = kb.scalar("ocg", u32);
    auto OB = kb.scalar("oblocks", u32);
    kb.workgroup(1);
    Value j0 = group_id(0) * uint32_t(kPackChunk), j1 = min(j0 + uint32_t(kPackChunk), J);
    Value ob = group_id(1), g = group_id(2);
    Value dst = cast(u64, (g * OB + ob) * J) * uint64_t(OCB);
    std::vector<Value> src, ok;
    for (uint32_t o = 0; o < OCB; ++o) {
      Value oc = ob * OCB + o;
      src.push_back(cast(u64, (g * OCG + min(oc, OCG - 1u)) * J));
      ok.push_back(oc < OCG);
    }
    Value jt = j0;  // where the element-wise loop starts
    if (OCB % 16 == 0) {
      // Whole blocks of 16 j: per 16 channels, 16 row lines transposed in
      // registers into 16 lines of channels (element by element, the strided
      // reads bound it: 1×256×14², 32 channels, 0.147 ms of 1.05).
      Value nfull = (j1 - j0) / 16u;
      const Value lanes = lane_index(16);
      for_range(0u, nfull, [&](Value blk) {
        Value jb = cast(u64, j0 + blk * 16u);
        for (uint32_t q = 0; q < OCB; q += 16) {
          std::array<Value, 16> rows;
          for (uint32_t r = 0; r < 16; ++r) rows[r] = load_line(w, src[q + r] + jb);
          const auto cols = transpose16(rows);
          Value valid = lanes < splat(cast(i32, min(OCG - min(ob * OCB + q, OCG), 16u)), 16);  // channels inside OCG
          for (uint32_t e = 0; e < 16; ++e)
            store_line(wp, dst + (jb + uint64_t(e)) * uint64_t(OCB) + uint64_t(q), select(valid, cols[e], splat(0.0f, 16)));
        }
      });
      jt = j0 + nfull * 16u;
    }
    for_range(jt, j1, [&](Value j) {
      Value jj = cast(u64, j);
      std::vector<Value> l;
      for (uint32_t o = 0; o < OCB; ++o) l.push_back(select(ok[o], w[src[o] + jj], constant(f32, 0.0f)));
      // A line where OCB is a line width: element stores made LLVM vectorise
      // the loop into interleaved-store shuffles (60 ms of code generation
      // at OCB = 8).
      if (OCB == 2 || OCB == 4 || OCB == 8 || OCB == 16) {
        store_line(wp, dst + jj * uint64_t(OCB), make_line(l));
      } else if (OCB % 16 == 0) {  // lines of 16
        for (uint32_t q = 0; q < OCB; q += 16)
          store_line(wp, dst + jj * uint64_t(OCB) + uint64_t(q), make_line(std::vector<Value>(l.begin() + q, l.begin() + q + 16)));
      } else {
        for (uint32_t o = 0; o < OCB; ++o) wp[dst + jj * uint64_t(OCB) + uint64_t(o)] = l[o];
      }
    });
  });
}

ir::Kernel conv_direct_kernel(const DirectTile& t, bool bias, bool relu, const EpilogueSpec* ep) {
  const uint32_t OCB = uint32_t(t.ocb), L = uint32_t(t.lines), PB = uint32_t(t.pb), BW = 16 * L;
  std::string name = "conv_direct_ocb" + std::to_string(t.ocb) + "_l" + std::to_string(t.lines) + "_pb" +
                     std::to_string(t.pb) + (t.oc_fast ? "_ocf" : "") + (t.w_direct ? "_wd" : "") + (bias ? "_bias" : "") +
                     (relu ? "_relu" : "") + (ep ? ep->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    const auto em = emitter_of(ep);
    const DirectArgs d = declare_direct_args(kb, bias, em.get());
    const Array &xq = d.xq, &tab = d.tab, &wp = d.wp, &b = d.b, &y = d.y;
    const Value &J = d.J, &C = d.C, &CG = d.CG, &CS = d.CS, &OCG = d.OCG, &OB = d.OB, &OC = d.OC, &OH = d.OH, &OW = d.OW,
                &WQ = d.WQ;
    auto NB = kb.scalar("nblocks", u32);  // blocks of BW virtual positions
    kb.workgroup(1);
    // oc_fast: consecutive workgroups (one thread's run) share a position
    // chunk, whose input rows then stay in L1/L2 while the weights (all OC)
    // stream from L2; otherwise they share an OC block (weights in L1) and
    // sweep the image.
    Value gy = group_id(t.oc_fast ? 0 : 1), gpos = group_id(t.oc_fast ? 1 : 0), n = group_id(2);
    Value g = gy / OB, ob = gy - g * OB;
    Value oc0 = ob * OCB;  // first output channel of the block, within the group
    Value xbase = cast(u64, n * C + g * CG) * cast(u64, CS);
    Value wbase = cast(u64, gy * J) * uint64_t(OCB);  // u64: broadcasts address wp directly
    Value blk0 = gpos * PB, blk1 = min(blk0 + PB, NB);
    // Per output channel of the block: y's plane, bias, whether it exists.
    std::vector<Value> ybase, bv, ok, wrow, ocs;
    for (uint32_t o = 0; o < OCB; ++o) {
      Value oc = min(g * OCG + oc0 + o, OC - 1u);  // clamped: edge blocks read a real bias
      ocs.push_back(oc);
      if (t.w_direct) wrow.push_back(cast(u64, g * OCG + min(oc0 + o, OCG - 1u)) * cast(u64, J));
      ybase.push_back(cast(u64, n * OC + oc) * cast(u64, OH * OW));
      if (bias) bv.push_back(splat(b[oc], 16));
      ok.push_back(oc0 + o < OCG);
    }
    for_range(blk0, blk1, [&](Value blk) {
      Value p0 = blk * BW;
      std::vector<Var> acc;
      for (uint32_t i = 0; i < OCB * L; ++i) acc.push_back(var(splat(0.0f, 16)));
      Value pbase = xbase + cast(u64, p0);
      for_range(0u, J, [&](Value j) {
        Value at = pbase + cast(u64, tab[j]);
        std::vector<Value> xl;
        for (uint32_t l = 0; l < L; ++l) xl.push_back(load_line(xq, at + uint64_t(16 * l)));
        Value wj = wbase + cast(u64, j) * uint64_t(OCB);
        for (uint32_t o = 0; o < OCB; ++o) {
          Value wv = splat(t.w_direct ? wp[wrow[o] + cast(u64, j)] : wp[wj + uint64_t(o)], 16);
          for (uint32_t l = 0; l < L; ++l) acc[o * L + l] = fma(wv, xl[l], acc[o * L + l]);
        }
      });
      for (uint32_t l = 0; l < L; ++l) {
        std::vector<Value> v;
        for (uint32_t o = 0; o < OCB; ++o) {
          Value a = acc[o * L + l].get();
          if (bias) a = a + bv[o];
          if (relu) a = max(a, 0.0f);
          v.push_back(a);
        }
        Value p = p0 + 16u * l;
        Value r0 = p / WQ, c0 = p - r0 * WQ;
        // Whole line inside one output row, or inside the plane where there
        // are no virtual columns (wq == ow: 1×1 maps, rows under 16 wide):
        // 16 adjacent stores (one vmovups).
        if_((c0 + 16u <= OW && r0 < OH) || (WQ == OW && p + 16u <= OH * OW), [&] {
          Value at = cast(u64, r0 * OW + c0);
          for (uint32_t o = 0; o < OCB; ++o)
            if_(ok[o], [&] {
              if (em) return store_line(y, ybase[o] + at, em->apply(v[o], n, ocs[o], r0 * OW + c0));
              for (int i = 0; i < 16; ++i) y[ybase[o] + at + uint64_t(i)] = v[o].lane(i);
            });
        }).else_([&] {
          // Lane by lane, walking (row, column) across row ends (wq may be < 16).
          Var r = var(r0), c = var(c0);
          for (int i = 0; i < 16; ++i) {
            if_(c.get() < OW && r.get() < OH, [&] {
              Value p = r.get() * OW + c.get(), at = cast(u64, p);
              for (uint32_t o = 0; o < OCB; ++o)
                if_(ok[o], [&] { y[ybase[o] + at] = em ? em->apply(v[o].lane(i), n, ocs[o], p) : v[o].lane(i); });
            });
            c += 1u;
            if_(c.get() == WQ, [&] {
              c = 0u;
              r += 1u;
            });
          }
        });
      }
    });
  });
}

int plan_conv_pack_direct_weights(Plan& pl, size_t nio, const ConvShape& s, int ocb) {
  const int64_t J = s.cg() * s.taps(), ob = (s.ocg() + ocb - 1) / ocb;
  const int wp = pl.add_temp(nio, size_t(s.groups * ob * J * ocb) * 4);
  Step st;
  st.kernel = conv_pack_direct_weights_kernel(ocb);
  st.dims.grid = {groups_for(J, kPackChunk), uint32_t(ob), uint32_t(s.groups)};
  st.buffers = {1, wp};  // w, wp
  st.scalars = {u(J), u(s.ocg()), u(ob)};
  pl.steps.push_back(std::move(st));
  return wp;
}

void plan_conv_direct(Plan& pl, size_t nio, const ConvShape& s, const DirectTile& t, const EpilogueUse* eu) {
  const int64_t BW = 16 * t.lines;
  const int64_t nblocks = (s.virtual_positions() + BW - 1) / BW;
  // Virtual positions past the last plane read up to one row + one block beyond.
  ConvPrep pr = plan_conv_prep(pl, nio, s, 0, s.wq() + BW + 16);
  const int64_t ob = (s.ocg() + t.ocb - 1) / t.ocb;
  const int wp = t.w_direct ? 1 : plan_conv_pack_direct_weights(pl, nio, s, t.ocb);
  Step st;
  st.kernel = conv_direct_kernel(t, s.bias, s.relu, eu ? eu->spec : nullptr);
  st.dims.grid = {groups_for(nblocks, t.pb), uint32_t(s.groups * ob), uint32_t(s.n)};
  if (t.oc_fast) std::swap(st.dims.grid[0], st.dims.grid[1]);
  st.buffers = direct_buffers(s, pr, wp, eu);
  st.scalars = direct_scalars(s, ob, nblocks);
  pl.steps.push_back(std::move(st));
}

bool conv_direct_block_fits(int ocb, int lines, const TargetCaps& caps) { return codegen::lines_fit(caps, ocb * lines + lines, 1); }

Variant conv_direct_variant(int ocb, int lines, int pb) {
  return Variant{}.set("impl", conv_impl::kDirect).set("ocb", ocb).set("lines", lines).set("pb", pb);
}

}  // namespace kgen::ops
