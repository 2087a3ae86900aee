// conv2d on GPU targets, two forms with bounds-checked reads of x (no
// pre-pass; any stride / padding / dilation / groups; u32/i32 arithmetic
// only, WGSL has no 64-bit integers): one work-item per output position and
// OCB output channels of one group (the x value loaded once feeds OCB
// accumulators), and an implicit GEMM on the f32x4-line tiles.
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/matmul/k_split.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/plan.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {
uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

// Both GPU kernels' buffers (x, w, [b], y) and scalars, in this order; the
// sixth scalar is each kernel's own (`extra`: channel blocks, or positions).
struct ConvParams {
  Array x, w, b, y;
  Value C, H, W, CG, OCG, extra, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW;
};
ConvParams conv_params(KernelBuilder& kb, bool bias, const char* extra) {
  ConvParams p;
  p.x = kb.input("x", f32);
  p.w = kb.input("w", f32);
  if (bias) p.b = kb.input("b", f32);
  p.y = kb.output("y", f32);
  p.C = kb.scalar("c", u32);
  p.H = kb.scalar("height", i32);
  p.W = kb.scalar("width", i32);
  p.CG = kb.scalar("cg", u32);
  p.OCG = kb.scalar("ocg", u32);
  p.extra = kb.scalar(extra, u32);
  p.OH = kb.scalar("oh", u32);
  p.OW = kb.scalar("ow", u32);
  p.KH = kb.scalar("kh", u32);
  p.KW = kb.scalar("kw", u32);
  p.SH = kb.scalar("sh", i32);
  p.SW = kb.scalar("sw", i32);
  p.PT = kb.scalar("pt", i32);
  p.PL = kb.scalar("pl", i32);
  p.DH = kb.scalar("dh", i32);
  p.DW = kb.scalar("dw", i32);
  return p;
}

// The step of either kernel: its buffers and conv_params' scalars.
Step conv_step(ir::Kernel k, const ConvShape& s, int64_t extra) {
  Step st;
  st.kernel = std::move(k);
  st.buffers = {0, 1};
  if (s.bias) st.buffers.push_back(2);
  st.buffers.push_back(s.bias ? 3 : 2);
  st.scalars = {u(s.c),  u(s.h),  u(s.w),  u(s.cg()), u(s.ocg()), u(extra), u(s.oh()), u(s.ow()),
                u(s.kh), u(s.kw), u(s.sh), u(s.sw),   u(s.pt),    u(s.pl),  u(s.dh),   u(s.dw)};
  return st;
}
}  // namespace

ir::Kernel conv_gpu_kernel(int wg, int ocb, bool bias, bool relu) {
  const uint32_t OCB = uint32_t(ocb);
  std::string name = "conv_gpu_wg" + std::to_string(wg) + "_ocb" + std::to_string(ocb) + (bias ? "_bias" : "") +
                     (relu ? "_relu" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto [x, w, b, y, C, H, W, CG, OCG, OB, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW] = conv_params(kb, bias, "oblocks");
    kb.workgroup(uint32_t(wg));
    Value p = global_id(0), gy = group_id(1), n = group_id(2);
    Value g = gy / OB, oc0 = (gy - g * OB) * OCB;
    Value OC = OCG * (C / CG);
    if_(p < OH * OW, [&] {
      Value oh = p / OW, ow = p - oh * OW;
      Value ih0 = cast(i32, oh) * SH - PT, iw0 = cast(i32, ow) * SW - PL;
      std::vector<Var> acc;
      for (uint32_t o = 0; o < OCB; ++o) acc.push_back(var(f32, 0.0f));
      // Clamped channel for the weight reads of a partial block (not stored).
      std::vector<Value> wrow;
      for (uint32_t o = 0; o < OCB; ++o) wrow.push_back((g * OCG + min(oc0 + o, OCG - 1u)) * CG);
      for_range(0u, CG, [&](Value c) {
        Value xplane = (n * C + g * CG + c) * cast(u32, H);
        for_range(0u, KH, [&](Value kh) {
          Value ih = ih0 + cast(i32, kh) * DH;
          if_(ih >= 0 && ih < H, [&] {
            Value xrow = (xplane + cast(u32, ih)) * cast(u32, W);
            for_range(0u, KW, [&](Value kw) {
              Value iw = iw0 + cast(i32, kw) * DW;
              if_(iw >= 0 && iw < W, [&] {
                Value xv = x[xrow + cast(u32, iw)];
                for (uint32_t o = 0; o < OCB; ++o) acc[o] = fma(w[((wrow[o] + c) * KH + kh) * KW + kw], xv, acc[o].get());
              });
            });
          });
        });
      });
      for (uint32_t o = 0; o < OCB; ++o) {
        Value oc = oc0 + o;
        if_(oc < OCG, [&] {
          Value goc = g * OCG + oc;
          Value v = acc[o].get();
          if (bias) v = v + b[goc];
          if (relu) v = max(v, 0.0f);
          y[((n * OC + goc) * OH + oh) * OW + ow] = v;
        });
      }
    });
  });
}

void plan_conv_gpu(Plan& pl, const ConvShape& s, int wg, int ocb) {
  const int64_t ob = (s.ocg() + ocb - 1) / ocb;
  Step st = conv_step(conv_gpu_kernel(wg, ocb, s.bias, s.relu), s, ob);
  st.dims.grid = {groups_for(s.oh() * s.ow(), wg), uint32_t(s.groups * ob), uint32_t(s.n)};
  st.dims.workgroup = {uint32_t(wg), 1, 1};
  pl.steps.push_back(std::move(st));
}

// Implicit GEMM: per group, C'[pos][oc] = Σ_k A[pos][k]·W[oc][k] with pos =
// (n, oh, ow) over the whole batch and k = (c, kh, kw), A gathered from x as
// im2col would lay it out (zero in the padding) while the tile is staged, W
// read as Bᵀ rows, and the store writing y[n][oc][oh][ow] with bias and ReLU.
// The line-tile loop (ops/matmul/line_tile_gemm.h) multiplies.
ir::Kernel conv_gpu_gemm_kernel(int tn, bool bias, bool relu, int ks, bool double_buffer) {
  const uint32_t KS = uint32_t(ks);
  const bool split = KS > 1;  // partial sums to part[split][y], bias and ReLU in conv_ksplit_sum_kernel
  std::string name = "conv_gpu_gemm_tn" + std::to_string(tn) + (split ? "_ks" + std::to_string(ks) : "") +
                     (bias && !split ? "_bias" : "") + (relu && !split ? "_relu" : "") + (double_buffer ? "_db" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    // NP: the batch's output positions N·OH·OW.
    auto [x, w, b, y, C, H, W, CG, OCG, NP, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW] = conv_params(kb, bias && !split, "positions");
    kb.workgroup(16, 16);
    Value g = split ? group_id(2) / KS : group_id(2);
    Value taps = KH * KW, K = CG * taps, OC = OCG * (C / CG), plane = OH * OW;
    // This split's K range [kbeg, kbeg + klen), in whole 16-steps.
    Value kbeg = constant(u32, 0u), klen = K;
    if (split) {
      const KRange r = k_split_range(K, KS, 16, group_id(2) % KS);
      kbeg = r.begin, klen = r.end - r.begin;
    }
    LineTileOperands io;
    io.a = [&](const Value& pos, const Value& kk, bool) {
      Value k = kbeg + kk;
      Value n = pos / plane, rem = pos - n * plane, oh = rem / OW, ow = rem - oh * OW;
      Value c = k / taps, t = k - c * taps, kh = t / KW, kw = t - kh * KW;
      Value ih = cast(i32, oh) * SH - PT + cast(i32, kh) * DH, iw = cast(i32, ow) * SW - PL + cast(i32, kw) * DW;
      Var v = var(f32, 0.0f);
      if_(pos < NP && kk < klen && ih >= 0 && ih < H && iw >= 0 && iw < W, [&] {
        v = x[(((n * C + g * CG + c) * cast(u32, H)) + cast(u32, ih)) * cast(u32, W) + cast(u32, iw)];
      });
      return v.get();
    };
    io.b = [&](const Value& oc, const Value& kk, bool) {
      Var v = var(f32, 0.0f);
      if_(oc < OCG && kk < klen, [&] { v = w[(g * OCG + oc) * K + kbeg + kk]; });
      return v.get();
    };
    io.store = [&](const Value& pos, const Value& oc, const Value& acc) {
      Value n = pos / plane, rem = pos - n * plane;
      Value goc = g * OCG + oc;
      Value v = acc;
      if (bias && !split) v = v + b[goc];
      if (relu && !split) v = max(v, 0.0f);
      Value at = (n * OC + goc) * plane + rem;
      y[split ? group_id(2) % KS * (NP * OC) + at : at] = v;
    };
    io.b_k_fastest = true;
    io.always_guarded = true;
    line_tile_gemm(io, NP, OCG, klen, 16, uint32_t(tn), true, double_buffer);
  });
}

ir::Kernel conv_ksplit_sum_kernel(int ks, bool bias, bool relu) {
  std::string name = "conv_ksplit_sum_" + std::to_string(ks) + (bias ? "_bias" : "") + (relu ? "_relu" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto part = kb.input("part", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    auto plane = kb.scalar("plane", u32);
    auto oc = kb.scalar("oc", u32);
    kb.workgroup(256);
    Value i = wrapped_group_id() * 256u + local_id(0);
    if_(i < n, [&] {
      Value v = part[i];
      for (int j = 1; j < ks; ++j) v = v + part[i + n * uint32_t(j)];
      if (bias) v = v + b[i / plane % oc];
      if (relu) v = max(v, 0.0f);
      y[i] = v;
    });
  });
}

bool conv_gpu_gemm_fits(const ConvShape& s) { return (s.n * s.oh() * s.ow() + 127) / 128 <= 65535; }

int64_t conv_gpu_gemm_tiles(const ConvShape& s, int tn) {
  return (s.n * s.oh() * s.ow() + 127) / 128 * ((s.ocg() + 16 * tn - 1) / (16 * tn)) * s.groups;
}

void plan_conv_gpu_gemm(Plan& pl, size_t nio, const ConvShape& s, int tn, int ks, bool double_buffer) {
  if (tn != 4 && tn != 8) throw std::invalid_argument("conv2d: the implicit GEMM takes tn 4 or 8");
  if (ks < 1 || ks > 16) throw std::invalid_argument("conv2d: the implicit GEMM's K split (ks) is 1-16");
  const int64_t positions = s.n * s.oh() * s.ow(), ysize = positions * s.oc;
  if (!conv_gpu_gemm_fits(s))
    throw std::invalid_argument("conv2d: the implicit GEMM takes at most 65535 tiles of 128 positions (N·OH·OW)");
  if (ks > 1 && (s.groups * ks > 65535 || ysize * ks >= (int64_t(1) << 32)))
    throw std::invalid_argument("conv2d: the implicit GEMM's K split takes fewer than 2^32 partial outputs");
  Step st = conv_step(conv_gpu_gemm_kernel(tn, s.bias, s.relu, ks, double_buffer), s, positions);
  st.dims.grid = {uint32_t((s.ocg() + 16 * tn - 1) / (16 * tn)), uint32_t((positions + 127) / 128), uint32_t(s.groups * ks)};
  st.dims.workgroup = {16, 16, 1};
  if (ks == 1) {
    pl.steps.push_back(std::move(st));
    return;
  }
  const int part = pl.add_temp(nio, size_t(ysize * ks) * 4), y = s.bias ? 3 : 2;
  st.buffers = {0, 1, part};  // no bias: the sum adds it
  pl.steps.push_back(std::move(st));
  Step sum;
  sum.kernel = conv_ksplit_sum_kernel(ks, s.bias, s.relu);
  sum.dims.grid = wrapped_grid(groups_for(ysize, 256));
  sum.dims.workgroup = {256, 1, 1};
  sum.buffers = {part};
  if (s.bias) sum.buffers.push_back(2);
  sum.buffers.push_back(y);
  sum.scalars = {u(ysize), u(s.oh() * s.ow()), u(s.oc)};
  pl.steps.push_back(std::move(sum));
}

}  // namespace kgen::ops
