// conv2d as GEMMs on the matmul family's packed macro-kernel (ops/matmul/matmul.h):
// one GEMM per (image, group), batched: C[b] (OCg × P) = Ap[b] (OCg × K) ·
// Bp[b] (K × P) with b = n·G + g, K = Cg·KH·KW.
//
// im2col: K rows (channel, tap) over the virtual positions P = OH·Wq of xq
// (ops/conv/conv.h). Row k of the column matrix starting at position p is the
// contiguous line xq[xbase + off[k] + p ..], so im2col writes matmul's packed
// B panels (NR-wide, f32x16 lines) directly with line copies, no index math
// per element. C then has Wq - OW dropped columns per output row; the
// epilogue compacts them away and adds bias / applies ReLU on the way.
// Pointwise (1×1, stride 1, no padding): B is x itself, packed by matmul's own
// pack_b, and C is y (epilogue only for bias / ReLU).
// A (the weights) is packed once per batch entry b: the macro-kernel indexes A
// by its batch; OC·K per image is small next to the image's K·P.
#include <memory>
#include <string>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Ap[b][panel][k][r] = w[(b % G)·OCg + panel·MR + r][k], 0 past OCg.
ir::Kernel conv_pack_gemm_weights_kernel(int mr) {
  const uint32_t MR = uint32_t(mr);
  return kernel("conv_pack_gemm_w_mr" + std::to_string(mr), [&](KernelBuilder& kb) {
    auto w = kb.input("w", f32);
    auto ap = kb.output("ap", f32);
    auto M = kb.scalar("ocg", u32);
    auto K = kb.scalar("k", u32);
    auto G = kb.scalar("groups", u32);
    kb.workgroup(1);
    Value panel = group_id(0), bz = group_id(2);
    Value g = bz % G;
    Value mp = (M + (MR - 1)) / MR;
    Value k0 = group_id(1) * uint32_t(kPackKChunk), k1 = min(k0 + uint32_t(kPackKChunk), K);
    Value row0 = panel * MR;
    Value src = (g * M + row0) * K;
    Value dst = (bz * mp + panel) * K * MR;
    for_range(k0, k1, [&](Value k) {
      for (uint32_t r = 0; r < MR; ++r) {
        auto out = ap[dst + k * MR + r];
        if_(row0 + r < M, [&] { out = w[src + r * K + k]; }).else_([&] { out = 0.0f; });
      }
    });
  });
}

// Bp[b][panel][k][l] = line of xq at xbase(b) + off[k] + panel·NR + 16·l, 0
// past P. Grid: x = panels, y = K chunks, z = N·G.
ir::Kernel conv_im2col_pack_kernel(int nl) {
  const uint32_t NL = uint32_t(nl), NR = 16 * NL;
  return kernel("conv_im2col_pack_nr" + std::to_string(NR), [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", f32);
    auto tab = kb.input("tab", u32);
    auto bp = kb.output("bp", line(f32, 16));
    auto K = kb.scalar("k", u32);
    auto P = kb.scalar("p", u32);
    auto C = kb.scalar("c", u32);
    auto CG = kb.scalar("cg", u32);
    auto G = kb.scalar("groups", u32);
    auto CS = kb.scalar("chan_stride", u32);
    kb.workgroup(1);
    Value panel = group_id(0), bz = group_id(2);
    Value n = bz / G, g = bz - n * G;
    Value np = (P + (NR - 1)) / NR;
    Value k0 = group_id(1) * uint32_t(kPackKChunk), k1 = min(k0 + uint32_t(kPackKChunk), K);
    Value col0 = panel * NR;
    Value xbase = cast(u64, n * C + g * CG) * cast(u64, CS) + cast(u64, col0);
    Value dst = (bz * np + panel) * K * NL;
    auto emit = [&](bool guarded) {
      for_range(k0, k1, [&](Value k) {
        Value at = xbase + cast(u64, tab[k]);
        for (uint32_t l = 0; l < NL; ++l) {
          Value a = at + uint64_t(16 * l);
          if (!guarded) {
            bp[dst + k * NL + l] = make_line({xq[a], xq[a + uint64_t(1)], xq[a + uint64_t(2)], xq[a + uint64_t(3)],
                                             xq[a + uint64_t(4)], xq[a + uint64_t(5)], xq[a + uint64_t(6)],
                                             xq[a + uint64_t(7)], xq[a + uint64_t(8)], xq[a + uint64_t(9)],
                                             xq[a + uint64_t(10)], xq[a + uint64_t(11)], xq[a + uint64_t(12)],
                                             xq[a + uint64_t(13)], xq[a + uint64_t(14)], xq[a + uint64_t(15)]});
            continue;
          }
          Var v = var(splat(0.0f, 16));
          for (int i = 0; i < 16; ++i)
            if_(col0 + uint32_t(16 * l + i) < P, [&] { v = insert(v, i, xq[a + uint64_t(i)]); });
          bp[dst + k * NL + l] = v.get();
        }
      });
    };
    if_(col0 + NR <= P, [&] { emit(false); }).else_([&] { emit(true); });
  });
}

// y[n][oc][oh][ow] = ep(relu(c[n·OC + oc][oh·wq + ow] + b[oc])). One
// work-item per output row.
ir::Kernel conv_gemm_epilogue_kernel(bool bias, bool relu, const EpilogueSpec* ep) {
  std::string name = std::string("conv_gemm_epilogue") + (bias ? "_bias" : "") + (relu ? "_relu" : "") + (ep ? ep->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    std::unique_ptr<EpilogueEmitter> em = ep ? std::make_unique<EpilogueEmitter>(*ep) : nullptr;
    auto c = kb.input("c", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", em ? ir::Type(em->out()) : f32);
    if (em) em->declare(kb);
    auto OH = kb.scalar("oh", u32);
    auto OW = kb.scalar("ow", u32);
    auto WQ = kb.scalar("wq", u32);
    auto OC = kb.scalar("oc", u32);
    if (em) em->sizes(OC, OH * OW);
    kb.workgroup(1);
    Value oh = group_id(0), oc = group_id(1), n = group_id(2);
    Value plane = cast(u64, n * OC + oc);
    Value src = plane * cast(u64, OH * WQ) + cast(u64, oh * WQ);
    Value dst = plane * cast(u64, OH * OW) + cast(u64, oh * OW);
    Value bv = bias ? Value(b[oc]) : constant(f32, 0.0f);
    for_range(0u, OW, [&](Value ow) {
      Value v = c[src + cast(u64, ow)];
      if (bias) v = v + bv;
      if (relu) v = max(v, 0.0f);
      y[dst + cast(u64, ow)] = em ? em->apply(v, n, oc, oh * OW + ow) : v;
    });
  });
}

// Returns the packed-A slot.
int plan_pack_weights(Plan& pl, size_t nio, const ConvShape& s, const GemmTile& t) {
  const int64_t K = s.cg() * s.taps(), batch = s.n * s.groups, mp = cdiv(s.ocg(), t.mr);
  int ap = pl.add_temp(nio, size_t(batch * mp * t.mr * K) * 4);
  Step st;
  st.kernel = conv_pack_gemm_weights_kernel(t.mr);
  st.dims.grid = {uint32_t(mp), uint32_t(cdiv(K, kPackKChunk)), uint32_t(batch)};
  st.buffers = {1, ap};
  st.scalars = {u(s.ocg()), u(K), u(s.groups)};
  pl.steps.push_back(std::move(st));
  return ap;
}

void plan_epilogue(Plan& pl, const ConvShape& s, int c, int64_t wq, const EpilogueUse* eu) {
  Step st;
  st.kernel = conv_gemm_epilogue_kernel(s.bias, s.relu, eu ? eu->spec : nullptr);
  st.dims.grid = {uint32_t(s.oh()), uint32_t(s.oc), uint32_t(s.n)};
  st.buffers = {c};
  if (s.bias) st.buffers.push_back(2);
  st.buffers.push_back(s.bias ? 3 : 2);
  if (eu) st.buffers.insert(st.buffers.end(), eu->slots.begin(), eu->slots.end());
  st.scalars = {u(s.oh()), u(s.ow()), u(wq), u(s.oc)};
  pl.steps.push_back(std::move(st));
}

}  // namespace

GemmTile conv_gemm_tile(const Variant& v, int64_t m, int64_t n, int64_t k, int ak, const TargetCaps& caps) {
  GemmTile t = default_cpu_tile(m, n, k, caps);
  Variant d = variant_of(t);
  for (const auto& [key, val] : v.params)
    if (d.params.count(key)) d.set(key, val);
  t = tile_of(d);
  t.ak = ak;
  t.apf = 0;  // (the A prefetch needs the line-chunk layout)
  if (t.mr < 1 || t.nl < 1 || t.mr * t.nl + t.nl > 32 || t.kc < 0 || t.mc < 1 || t.nc < 1)
    throw std::invalid_argument("conv2d: bad gemm tile " + v.str());
  return t;
}

Variant conv_gemm_variant(int64_t impl, int mr, int nl) {
  GemmTile t;
  t.mr = mr, t.nl = nl, t.kc = 0;
  return variant_of(t).set("impl", impl);
}

bool conv_is_pointwise(const ConvShape& s) {
  return s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 && s.pb == 0 && s.pr == 0;
}

void plan_conv_im2col_gemm(Plan& pl, size_t nio, const ConvShape& s, const Variant& v, const TargetCaps& caps,
                           const EpilogueUse* eu) {
  const int64_t P = s.virtual_positions(), K = s.cg() * s.taps(), batch = s.n * s.groups;
  const GemmTile t = conv_gemm_tile(v, s.ocg(), P, s.cg() * s.taps(), 0, caps);  // k-major A (conv_pack_gemm_weights_kernel)
  ConvPrep pr = plan_conv_prep(pl, nio, s, 0, s.wq() + 16);
  int ap = plan_pack_weights(pl, nio, s, t);
  const int64_t np = cdiv(P, t.nr());
  int bp = pl.add_temp(nio, size_t(batch * np * t.nr() * K) * 4);
  {
    Step st;
    st.kernel = conv_im2col_pack_kernel(t.nl);
    st.dims.grid = {uint32_t(np), uint32_t(cdiv(K, kPackKChunk)), uint32_t(batch)};
    st.buffers = {pr.xq, pr.tab, bp};
    st.scalars = {u(K), u(P), u(s.c), u(s.cg()), u(s.groups), u(s.chan_stride())};
    pl.steps.push_back(std::move(st));
  }
  int c = pl.add_temp(nio, size_t(batch * s.ocg() * P) * 4);
  plan_gemm_cpu(pl, t, ap, bp, c, batch, s.ocg(), P, K);
  plan_epilogue(pl, s, c, s.wq(), eu);
}

// The macro-kernel stores y itself through the epilogue: C's [batch, M, N]
// is y's [N, OC, OH·OW] with one group, it adds no bias nor ReLU, and a
// narrow y meets no K slices (which continue from an f32 C).
bool macro_kernel_epilogue(const ConvShape& s, const GemmTile& t, const EpilogueUse* eu) {
  if (!eu || s.groups != 1 || s.bias || s.relu) return false;
  const ir::ScalarKind o = eu->spec->out;
  if (o != ir::ScalarKind::F32 && o != ir::ScalarKind::F16 && o != ir::ScalarKind::BF16 && o != ir::ScalarKind::U8 &&
      o != ir::ScalarKind::I8 && o != ir::ScalarKind::I32)
    return false;
  return t.ks > 1 || t.kc == 0 || o == ir::ScalarKind::F32;
}

void plan_conv_1x1_gemm(Plan& pl, size_t nio, const ConvShape& s, const Variant& v, const TargetCaps& caps,
                        const EpilogueUse* eu) {
  if (!conv_is_pointwise(s)) throw std::invalid_argument("conv2d: impl gemm1x1 needs a 1x1 kernel, stride 1, no padding");
  const int64_t P = s.h * s.w, K = s.cg(), batch = s.n * s.groups;
  const GemmTile t = conv_gemm_tile(v, s.ocg(), P, s.cg() * s.taps(), 0, caps);  // k-major A (conv_pack_gemm_weights_kernel)
  int ap = plan_pack_weights(pl, nio, s, t);
  // x as batch·G matrices Cg × HW: exactly its NCHW layout.
  int bp = plan_pack_b(pl, nio, ir::Type(ir::ScalarKind::F32), false, 0, batch, P, K, t.nl);
  const int yslot = s.bias ? 3 : 2;
  if (macro_kernel_epilogue(s, t, eu)) {
    plan_gemm_cpu(pl, t, ap, bp, yslot, batch, s.ocg(), P, K, GemmEpilogue::Store, nio, {}, -1, 0, eu);
    return;
  }
  const bool epilogue = s.bias || s.relu || eu;
  int c = epilogue ? pl.add_temp(nio, size_t(batch * s.ocg() * P) * 4) : yslot;
  plan_gemm_cpu(pl, t, ap, bp, c, batch, s.ocg(), P, K);
  if (epilogue) plan_epilogue(pl, s, c, s.w, eu);
}

}  // namespace kgen::ops
