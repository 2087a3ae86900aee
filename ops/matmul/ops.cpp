// The "matmul" op: C (batch × M × N, f32) = A (batch × M × K) · B (batch × K
// × N, or batch × N × K with trans_b=1, the LLM weight layout), inputs f32,
// f16 or bf16, accumulation in f32.
//
// Variants (param "impl"):
//   0 gemm: pack A and B, then the register-blocked CPU macro-kernel
//           (mr, nl, kc, mc, nc: see GemmTile)
//   1 gemv: M <= 4 rows straight from the unpacked B (rows = outputs per
//           work-item); trans_b needs K % 16 == 0, else N % 16 and K % 16 == 0
//   2 gpu:  shared-memory tiles (wg, tm, tn, tk: see GpuTile)
//   3 gpu gemv: M <= 4 with trans_b, a workgroup of wg per output column
//           (ops/matmul/gemv_gpu.cpp); the GPU default there
//   4 K-split gemv: K×N B, M <= 4 (ks splits, then a sum)
//   5 swapped: trans_b, Cᵀ = B·Aᵀ on the gemm macro-kernel with B's rows read
//           in place and A packed (mr, nl, kc, mc), then Cᵀ transposed
//   6 rows in lanes: f32, K and N of at most 16 (ops/matmul/narrow.h)
//   7 matrix tiles: bf16 on AMX (mc, nc, kc, sw: gemm_tile_kernel)
//   8 bf16 terms: f32 at prec 1|2, or f16, as bf16 products on AMX
// Which forms fit a problem: ops/matmul/forms.h; the untuned choice among
// them: ops/matmul/strategy.cpp. The product with a fused epilogue (bias,
// activation, residual, cast) where C is stored: ops/matmul/epilogue.h.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "ops/common/widen.h"
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"
#include "ops/layout/transpose.h"
#include "ops/matmul/bf16_terms.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/forms.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/matmul_plan.h"
#include "ops/matmul/narrow.h"
#include "ops/matmul/plan.h"
#include "ops/matmul/strategy.h"

namespace kgen::ops {

namespace {

using namespace matmul;

void validate(const Problem& p) {
  if (p.dims.size() != 3) throw std::invalid_argument("expected 3 sizes M N K");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && p.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument("dtype must be f32, f16 or bf16");
  int64_t tb = p.attr("trans_b", 0), batch = p.attr("batch", 1), af = p.attr("a_f32", 0);
  if (tb != 0 && tb != 1) throw std::invalid_argument("trans_b must be 0 or 1");
  if (af != 0 && af != 1) throw std::invalid_argument("a_f32 must be 0 or 1");
  if (batch < 1) throw std::invalid_argument("batch must be >= 1");
  for (const auto& [k, v] : p.attrs)
    if (k != "trans_b" && k != "batch" && k != "a_f32" && k != "prec")
      throw std::invalid_argument("unknown attribute '" + k + "' (trans_b, batch, a_f32, prec)");
  const int64_t prec = p.attr("prec", 0);
  if (prec < 0 || prec > 2) throw std::invalid_argument("prec must be 0 (IEEE f32), 1 (bf16x3) or 2 (bf16)");
  if (prec && p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && !af)
    throw std::invalid_argument("prec=1|2 is for f32 or f16 A and B, or f32 A (a_f32=1)");
  // Index arithmetic is u32, packed buffers included (~(M + 16) · (K + 32) · batch).
  const Shape s = shape_of(p);
  // (The swapped product's Cᵀ has rows of M rounded up to 16.)
  double biggest = double(batch) * std::max({double(s.m + 16) * double(s.k), double(s.n + 64) * double(s.k),
                                             double(s.m + 16) * double(s.n)});
  if (biggest >= 4294967295.0) throw std::invalid_argument("too large for 32-bit indexing");
}

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  const Shape s = shape_of(p);
  std::vector<Variant> out;
  if (is_cpu(caps) && narrow_fits(s)) out.push_back(Variant{}.set("impl", kNarrow));
  if (tile_fits(s, caps)) {
    out.push_back(tile_variant(s, caps));
    for (int mc : {2, 4, 8, 16})
      for (int nc : {1, 2, 4, 8})
        if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc); std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
    if (s.k > 2048)  // K slices
      for (auto [mc, nc, kc] : {std::tuple{8, 4, 1024}, {4, 4, 2048}, {8, 2, 1024}})
        if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("kc", kc); std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
    // Bᵀ swapped: 1-4 row blocks of B per workgroup against all of A's panels, or 8 of them.
    if (tile_swap_fits(s))
      if (Variant v = tile_swapped_variant(s, caps); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    if (s.trans_b)
      for (int mc : {1, 2, 4})
        for (int64_t nc : {int64_t(8), tile_blocks(s.m)})
          if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("sw", 1); std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
  }
  if (terms_fits(s, caps)) {
    // The bf16 terms: the bf16 product's own heuristic, and its tile blockings.
    out.push_back(Variant{}.set("impl", kTerms));
    const Shape q = shape_of(terms_problem(s));
    std::vector<Variant> tiles = {tile_variant(q, caps)};
    for (auto [mc, nc] : {std::pair{4, 4}, {8, 2}, {16, 1}, {2, 8}}) tiles.push_back(Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc));
    if (tile_swap_fits(q) && !terms_b_bf16(s)) tiles.push_back(tile_swapped_variant(q, caps));
    for (Variant t : tiles)
      if (Variant v = t.set("impl", kTerms); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (!is_cpu(caps)) {
    for (auto [tm, tn] : {std::pair{4, 4}, {2, 2}, {4, 2}, {8, 4}, {8, 8}}) {
      GpuTile t;
      t.tm = tm;
      t.tn = tn;
      out.push_back(Variant{}.set("impl", kGpu).set("wg", t.wg).set("tm", tm).set("tn", tn).set("tk", t.tk));
    }
    for (int vec : {1, 2, 3})
      for (int tk : {8, 16})
        if (line_tile_fits(caps.max_shared_bytes, tk, 8, vec == 3))
          out.push_back(Variant{}.set("impl", kGpu).set("wg", 16).set("tm", 8).set("tn", 8).set("tk", tk).set("vec", vec));
    // The line tiles with 64 columns, K splits and the swapped product (Bᵀ).
    for (int sw : {0, 1}) {
      if (sw && !s.trans_b) continue;
      for (int tn : {8, 4})
        for (int ks : {1, 2, 4, 8}) {
          if ((!sw && tn == 8 && ks == 1) || (ks > 1 && (s.k / ks < 128 || s.m * s.n > int64_t(65535) * 256))) continue;
          for (int vec : {2, 3}) {
            if (!line_tile_fits(caps.max_shared_bytes, 16, tn, vec == 3)) continue;
            GpuTile t;
            t.tm = 8;
            t.tn = tn;
            t.vec = vec;
            t.ks = ks;
            t.sw = sw;
            out.push_back(gpu_tile_variant(t).set("impl", kGpu));
          }
        }
    }
    if (s.trans_b && s.m <= kGpuGemvMaxM)
      for (int wg : {64, 128, 256})
        if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
          out.push_back(Variant{}.set("impl", kGpuGemv).set("wg", wg));
    return out;
  }
  if (gemv_fits(s) && s.m <= 8)
    for (int rows : {1, 2, 4, 8}) {
      if (rows > 1) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows));
      if (s.trans_b) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1));
      if (caps.bf16_dot && gemv_pairs_fit(s)) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("bf2", 1));
    }
  if (gemv_fits(s) && !gemv_tail(s) && s.trans_b && s.m <= 8)  // Bᵀ, K in parts (A's slice stays in L1)
    for (int kp : {2, 4, 8})
      if (s.k / 16 >= kp) {
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 1).set("pf", 1).set("kp", kp));
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 4).set("pf", 1).set("kp", kp));
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 8).set("kp", kp));
      }
  if (kn_split_fits(s))  // K×N: split along K, 1, 2, 4 or 8 rows of B per pass
    for (int ks : {8, 16, 32})
      for (int kr : {1, 2, 4, 8}) {
        Variant v = Variant{}.set("impl", kGemvKSplit).set("ks", ks);
        if (kr > 1) v.set("kr", kr);
        out.push_back(v);
        if (kn_split_shift_fits(s, caps)) out.push_back(Variant(v).set("sh", 1));
        if (s.m > kGemvMaxM && kr >= 4) out.push_back(Variant(v).set("lb", 2));  // more rows of A: lines in pairs
      }
  if (gemv_fits(s) && s.m > 8)  // Bᵀ, A's rows in groups
    for (int rows : {2, 4})
      for (int mg : {4, 8}) {
        out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("mg", mg));
        if (caps.bf16_dot && gemv_pairs_fit(s))
          out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("mg", mg).set("bf2", 1));
      }
  // Register blocks that fit this CPU's registers × K slices × block shapes.
  // A in 16-step line chunks, packed (ak = 16) or read as it is (ak = 1, f32
  // A) everywhere; the k-major A layout (ak = 0) stays a candidate for the
  // default register block.
  const GemmTile def = default_cpu_tile(s.m, s.n, s.k, caps, true);
  const bool narrow = !gemm_wide_registers(caps);  // AVX2: short blocks, more of them per workgroup
  auto blocks = gemm_register_blocks(caps);
  if (!narrow && s.n <= 32)  // skinny N: 1- and 2-line blocks too
    for (auto b : {std::pair{8, 1}, {12, 1}, {8, 2}})
      if (b.second * 16 < s.n + 16) blocks.push_back(b);
  for (auto [mr, nl] : blocks) {
    for (int kc : {0, 256, 512}) {
      if (kc && kc >= s.k) continue;  // one slice: the same as kc = 0
      for (auto [mc, nc] : narrow ? std::vector<std::pair<int, int>>{{16, 16}, {8, 8}, {24, 8}, {8, 32}}
                                  : std::vector<std::pair<int, int>>{{8, 8}, {4, 16}}) {
        for (int ak : {16, 1, 0}) {
          if (ak == 0 && !(mr == def.mr && nl == def.nl)) continue;
          if (ak == 1 && s.at != ir::ScalarKind::F32) continue;
          GemmTile t{mr, nl, kc, mc, nc, ak};
          t.apf = ak != 0 ? def.apf : 0;
          out.push_back(variant_of(t).set("impl", kGemm));
        }
      }
    }
  }
  // The default block with the M blocks walked fastest (consecutive groups
  // share B instead of A).
  for (int kc : {0, 512}) {
    if (kc && kc >= s.k) continue;
    GemmTile t = def;
    t.kc = kc;
    t.gm = 1;
    out.push_back(variant_of(t).set("impl", kGemm));
  }
  // The default block prefetching the next B panel (the panels stream from
  // DRAM when B is larger than the LLC).
  if (def.ak == 16) {
    GemmTile t = def;
    t.bpf = 1;
    out.push_back(variant_of(t).set("impl", kGemm));
  }
  // ... and packing its B panels itself, with and without prefetching the
  // next panel's source rows, and reading A unpacked (f32).
  for (int form : {0, 1, 2}) {
    GemmTile t = def;
    t.pb = 1;
    t.bpf = form == 1 && def.ak == 16;
    if (form == 2) t.ak = s.at == ir::ScalarKind::F32 && def.ak == 16 ? 1 : 0;
    if (pb_fits(s, t) && (form == 0 || t.bpf || t.ak == 1)) out.push_back(variant_of(t).set("impl", kGemm));
  }
  // The heuristic's choice (one row group over all of M, B packed in the kernel).
  const Variant h = matmul_heuristic(p, caps);
  if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  // bf16 pairs on hosts with the pair dot product: the heuristic takes them;
  // also with B packed by a launch, and with A packed. (Only from a GEMM
  // heuristic: a GEMV's fields, such as the K-split GEMV's ks, mean
  // something else in a GemmTile.)
  if (caps.bf16_dot && pairs_fit(s) && h.get("impl", -1) == kGemm) {
    GemmTile t = tile_of(h);
    for (int form : {1, 2}) {
      GemmTile u = t;
      if (form == 1) u.pb = 0, u.bpf = 0;
      if (form == 2) u.ak = t.ak == 1 ? 16 : t.ak;
      if (Variant v = variant_of(u).set("impl", kGemm); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  // The swapped product, its default tile with other K slices and blocks.
  if (swap_fits(s)) {
    const GemmTile t = swap_tile(s, caps);
    for (auto [kc, mc] : {std::pair{t.kc, t.mc}, {t.kc / 2, t.mc}, {t.kc, 2 * t.mc}, {0, t.mc}}) {
      GemmTile u = t;
      u.kc = kc, u.mc = mc;
      if (Variant v = variant_of(u).set("impl", kSwap); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  // K splits for products with few M×N blocks and a long K.
  GemmTile d = def;
  d.ks = 1;
  if (gemm_blocks(s, d) < 8 && s.k >= 1024)
    for (int ks : {2, 4, 8})
      if (s.k / ks >= 256) {
        d.ks = ks;
        out.push_back(variant_of(d).set("impl", kGemm));
      }
  return out;
}

// A tile variant's blocking (impl 7, or the bf16 product of impl 8):
// `impl` names the variant in errors.
struct TileBlocking {
  int mc, nc, kc, sw;
};
TileBlocking tile_blocking(const Variant& v, int64_t impl) {
  const std::string at = "matmul: impl=" + std::to_string(impl) + " ";
  const TileBlocking t{int(v.get("mc", 8)), int(v.get("nc", 4)), int(v.get("kc", 0)), int(v.get("sw", 0))};
  if (t.kc < 0 || t.kc % 32 || (t.kc && t.sw)) throw std::invalid_argument(at + "kc (K slice) is a multiple of 32, without sw: " + v.str());
  if (t.mc < 1 || t.mc > 1024 || t.nc < 1 || t.nc > 1024) throw std::invalid_argument(at + "mc and nc must be 1..1024: " + v.str());
  if (t.sw < 0 || t.sw > 1) throw std::invalid_argument(at + "sw is 0 or 1: " + v.str());
  return t;
}

// The tile kernel's launch (impl 7) on the tile op's A rows (slot a: A, or
// B's rows when swapped) and pair panels (slot bp) into C (slot c).
// a_parts: A's rows hold that many segments of K against the same panels.
void plan_tile_product(Plan& pl, const Shape& s, int mc, int nc, bool sw, int kc, int a, int bp, int c, int a_parts = 1) {
  Step st;
  st.kernel = gemm_tile_kernel(mc, nc, sw, kc >= s.k ? 0 : kc, a_parts);
  // Pair panels over grid x, the tile op's A row blocks over y.
  const int64_t np = tile_blocks(sw ? s.m : s.n), mb = tile_blocks(sw ? s.n : s.m);
  st.dims.grid = {groups_for(np, nc), groups_for(mb, mc), uint32_t(s.batch)};
  st.buffers = {a, bp, c};
  st.scalars = {ir::scalar_slot(uint32_t(s.m)), ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
  pl.steps.push_back(std::move(st));
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps);

// C = A'·B on bf16 terms, A' split already (slot a), B (slot b, Bᵀ or K×N):
// where the bf16 product runs unswapped on tiles, B's terms are written as
// its pair panels in one pass (Bᵀ through 16×16 transposes; K×N rows k and
// k + 1 pair up lane by lane), saving the split's round trip through memory;
// else split (a K×N batch's K rows of N as one row
// of K·N values, the parts stacked along K, padded by N zeros where K is
// odd), and the product planned as matmul plans it. iv: the product's
// variant, else its heuristic.
void plan_terms_b(Plan& pl, size_t nio, const Shape& s, const std::optional<Variant>& iv, int a, int b, int c, const TargetCaps& caps) {
  const int parts = terms_parts(s);
  const int64_t seg = terms_seg(s);
  const Problem q = terms_problem(s);
  Variant v = iv ? *iv : matmul_heuristic(q, caps);
  // bf16 B (exact) takes the tiles unswapped whatever the product's variant.
  if (terms_b_bf16(s) && (v.get("impl") != kTile || v.get("sw", 0))) v = tile_variant(shape_of(q), caps);
  if (v.get("impl") == kTile && !v.get("sw", 0)) {
    // f32/f16 B: its terms as panels parts·seg deep; bf16 B: itself as
    // panels seg deep, each of A's parts against them (the tile kernel's a_parts).
    const int b_parts = terms_b_bf16(s) ? 1 : parts;
    const int bp = s.trans_b ? plan_bf16_terms_panels(pl, nio, b, s.batch, s.n, s.k, seg, b_parts, s.dt)
                             : plan_bf16_terms_kn_panels(pl, nio, b, s.batch, s.k, s.n, seg, b_parts, s.dt);
    Shape t = shape_of(q);
    t.k = b_parts * seg;
    const TileBlocking tb = tile_blocking(v, kTile);
    plan_tile_product(pl, t, tb.mc, tb.nc, false, tb.kc, a, bp, c, parts / b_parts);
    return;
  }
  const int bt = s.trans_b ? plan_bf16_terms(pl, nio, b, s.batch * s.n, s.k, seg, s.k, parts, Bf16TermsSide::B, -1, s.dt)
                           : plan_bf16_terms(pl, nio, b, s.batch, s.k * s.n, seg * s.n, s.k * s.n, parts, Bf16TermsSide::B, -1, s.dt);
  pl.append(nio, plan(q, v, caps), 3, {a, bt, c});
}

// The GPU kernels take one element type: with a_f32, B widened to f32 by a
// launch first (slot of the B they read).
int gpu_b(Plan& pl, const Shape& s, size_t nio) {
  return s.at == s.dt ? 1 : plan_widen(pl, nio, s.dt, 1, s.batch * s.n * s.k);
}

}  // namespace

// C into slot o.c, through o.eu where the variant's form applies it in the
// launch that stores C (epilogue_fuses: ops/matmul/epilogue_plan.cpp).
void plan_matmul_into(Plan& pl, const Problem& p, const Variant& v, const TargetCaps& caps, const MatmulOut& o) {
  if (o.eu && !epilogue_fuses(v, o.eu->spec->out)) throw std::logic_error("matmul: variant " + v.str() + " does not fuse an epilogue");
  const Shape s = shape_of(p);
  const size_t nio = o.nio;
  const int c = o.c;
  switch (v.get("impl", kGemm)) {
    case kNarrow: {
      if (!is_cpu(caps) || !narrow_fits(s))
        throw std::invalid_argument("matmul: impl=6 (rows in lanes) is for the CPU, f32, and K and N of at most 16");
      Step st{matmul_narrow_kernel(int(s.k), int(s.n), s.trans_b), {}, {0, 1, c}, {ir::scalar_slot(uint32_t(s.m))}};
      st.dims.grid = {groups_for(s.m, kNarrowMatmulRows), uint32_t(s.batch), 1};
      pl.steps.push_back(std::move(st));
      return;
    }
    case kGemm: {
      if (!is_cpu(caps)) throw std::invalid_argument("matmul: impl=0 (packed CPU gemm) is for the cpu target");
      GemmTile t = tile_of(v);
      if (t.mr < 1 || t.nl < 1 || t.mr * t.nl + t.nl > 32 || t.kc < 0 || t.mc < 1 || t.nc < 1 || t.bf2 < 0 || t.bf2 > 1)
        throw std::invalid_argument("matmul: bad gemm tile " + v.str());
      if (t.bf2 && !pairs_fit(s))
        throw std::invalid_argument("matmul: bf2=1 (bf16 pairs) needs bf16 inputs and an even K: " + v.str());
      const Shape g = t.bf2 ? pair_shape(s) : s;  // what the macro-kernel steps over
      const ir::Type bt = t.bf2 ? pair_b_type(s) : s.dt;
      const int ap = t.ak == 1 ? 0 : plan_pack_a(pl, nio, g.at, 0, s.batch, s.m, g.k, g.k, t.mr, t.ak);
      if (t.pb) {  // B's panels packed inside the macro-kernel
        if (!pb_scratch_fits(t, g.k))
          throw std::invalid_argument("matmul: pb=1 needs a K slice (kc, else K) of at most 512 KiB of B panel: " + v.str());
        GemmBSource src;
        src.kind = GemmBSource::Raw;
        src.dt = bt;
        src.trans_b = s.trans_b;
        src.a_dt = g.at;  // A as ak = 1 reads it (f16/bf16 widened)
        plan_gemm_cpu(pl, t, ap, 1, c, s.batch, s.m, s.n, g.k, GemmEpilogue::Store, nio, src, -1, 0, o.eu);
        return;
      }
      int bp = plan_pack_b(pl, nio, bt, s.trans_b, 1, s.batch, s.n, g.k, t.nl, t.bf2);
      GemmBSource src;
      src.a_dt = g.at;
      plan_gemm_cpu(pl, t, ap, bp, c, s.batch, s.m, s.n, g.k, GemmEpilogue::Store, nio, src, -1, 0, o.eu);
      return;
    }
    case kTile: {
      if (!tile_fits(s, caps))
        throw std::invalid_argument("matmul: impl=7 (matrix tiles) needs bf16 A and B, an even K and a CPU with AMX-BF16");
      const auto [mc, nc, kc, sw] = tile_blocking(v, kTile);
      if (sw && !s.trans_b) throw std::invalid_argument("matmul: impl=7 sw=1 (Cᵀ = B·Aᵀ) needs trans_b=1: " + v.str());
      // Swapped: A's rows packed as the pair panels, B's rows read in place.
      const int bp = sw ? plan_pack_b(pl, nio, pair_b_type(s), true, 0, s.batch, s.m, s.k / 2, 2, true)
                        : plan_pack_b(pl, nio, pair_b_type(s), s.trans_b, 1, s.batch, s.n, s.k / 2, 2, true);
      plan_tile_product(pl, s, mc, nc, sw != 0, kc, sw ? 1 : 0, bp, c);
      return;
    }
    case kTerms: {
      if (!terms_fits(s, caps))
        throw std::invalid_argument("matmul: impl=8 (bf16 terms) needs f16 A and B, or prec=1|2 with f32 A and f32 B or bf16 Bᵀ, "
                                    "and a CPU with AMX-BF16: " + v.str());
      const int parts = terms_parts(s);
      const int64_t seg = terms_seg(s);
      const int a = plan_bf16_terms(pl, nio, 0, s.batch * s.m, s.k, seg, s.k, parts, Bf16TermsSide::A, -1, s.at);
      // The bf16 product's variant: the tile blocking the variant names (mc, nc, sw, kc), else its heuristic.
      const TileBlocking tb = tile_blocking(v, kTerms);
      std::optional<Variant> iv;
      if (v.params.count("mc")) {
        iv = Variant{}.set("impl", kTile).set("mc", tb.mc).set("nc", tb.nc);
        if (tb.sw) iv->set("sw", 1);
        if (tb.kc) iv->set("kc", tb.kc);
      }
      plan_terms_b(pl, nio, s, iv, a, 1, c, caps);
      return;
    }
    case kGemv: {
      if (!gemv_fits(s)) throw std::invalid_argument("matmul: impl=1 (gemv) needs M <= 64 and K >= 16 with trans_b (else M <= 4 and N, K % 16 == 0)");
      int rows = int(v.get("rows", 4));
      Step st;
      const int pf = int(v.get("pf", 0));
      if (rows < 1 || rows > 16 || pf < 0 || pf > 16) throw std::invalid_argument("matmul: bad gemv variant " + v.str());
      const bool pairs = v.get("bf2", 0) != 0;
      if (pairs && !gemv_pairs_fit(s))
        throw std::invalid_argument("matmul: impl=1 bf2=1 (bf16 pair GEMV) needs bf16 inputs, trans_b and K % 32 == 0: " + v.str());
      const int mg = int(v.get("mg", 0));
      if (mg < 0 || mg > 8 || (mg && !s.trans_b) || (s.m > 8 && !mg))
        throw std::invalid_argument("matmul: impl=1 mg (rows of A per pass, Bᵀ) must be 1..8, and is needed above M = 8: " + v.str());
      const int kp = int(v.get("kp", 1));
      if (kp < 1 || kp > 16 || (kp > 1 && (!s.trans_b || gemv_tail(s))))
        throw std::invalid_argument("matmul: impl=1 kp (K parts) is 1..16, for Bᵀ with K % 16 == 0: " + v.str());
      const bool fused = o.eu && kp == 1;  // (K parts: their sum applies it)
      st.kernel = gemv_kernel(s.dt, s.trans_b, rows, int(s.m), s.trans_b ? pf : 0, pairs, mg, s.at, kp, gemv_tail(s),
                              fused ? o.eu->spec : nullptr);
      int64_t units = s.trans_b ? s.n : s.n / 16;
      st.dims.grid = {uint32_t((units + rows - 1) / rows), uint32_t(kp), uint32_t(s.batch)};
      const int part = kp > 1 ? pl.add_temp(nio, size_t(s.batch * kp * s.m * s.n) * 4) : c;
      st.buffers = {0, 1, part};
      if (fused) st.buffers.insert(st.buffers.end(), o.eu->slots.begin(), o.eu->slots.end());
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
      pl.steps.push_back(std::move(st));
      if (kp > 1) plan_ksplit_sum(pl, kp, part, c, s.batch, s.m * s.n, true, 0, 0, o.eu, s.n);
      return;
    }
    case kGemvKSplit: {
      if (!is_cpu(caps) || !kn_split_fits(s))
        throw std::invalid_argument("matmul: impl=4 (K-split GEMV) is for the CPU, a K×N B with N >= 16 and M <= " + std::to_string(kKnSplitMaxM));
      const int64_t ks = v.get("ks", 32);
      if (ks < 1 || ks > 64) throw std::invalid_argument("matmul: impl=4 ks must be 1..64: " + v.str());
      const int64_t kc = (s.k + ks - 1) / ks;
      // Partial rows of whole lines (N rounded up): see gemv_kn_split_kernel.
      const bool tail = s.n % 16 != 0;
      const int64_t pitch = (s.n + 15) / 16 * 16;
      const int part = pl.add_temp(nio, size_t(s.batch * ks * s.m * pitch) * 4);
      Step st;
      const bool shifted = v.get("sh") != 0;
      if (shifted && !kn_split_shift_fits(s, caps))
        throw std::invalid_argument("matmul: impl=4 sh=1 (shifted rows) needs f32 B, N % 16 != 0 and a runtime byte permute (AVX512-VBMI): " + v.str());
      const int kr = int(v.get("kr", 1));
      if (kr < 1 || kr > 8) throw std::invalid_argument("matmul: impl=4 kr (rows of B per pass) must be 1..8: " + v.str());
      const int lb = int(v.get("lb", 1));
      if ((lb != 1 && lb != 2 && lb != 4) || (lb > 1 && shifted))
        throw std::invalid_argument("matmul: impl=4 lb (lines per block) must be 1, 2 or 4, and 1 with sh=1: " + v.str());
      st.kernel = gemv_kn_split_kernel(s.dt, int(s.m), s.at, tail, shifted, kr, lb);
      st.dims.grid = {uint32_t(ks), 1, uint32_t(s.batch)};
      st.buffers = {0, 1, part};
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k)), ir::scalar_slot(uint32_t(kc))};
      pl.steps.push_back(std::move(st));
      plan_ksplit_sum(pl, int(ks), part, c, s.batch, s.m * s.n, true, tail ? s.n : 0, pitch, o.eu, s.n);
      return;
    }
    case kSwap: {
      if (!is_cpu(caps) || !swap_fits(s))
        throw std::invalid_argument("matmul: impl=5 (Cᵀ = B·Aᵀ) is for the CPU with trans_b=1 or an f32 K×N B");
      GemmTile t = tile_of(v);
      t.ak = s.trans_b ? 1 : 2, t.pb = 0, t.bpf = 0, t.gm = 0, t.ks = 1;
      if (!s.trans_b) t.apf = 0;  // ak = 2 prefetches its own lines
      if (t.bf2 && !pairs_fit(s)) throw std::invalid_argument("matmul: bf2=1 (bf16 pairs) needs bf16 inputs and an even K: " + v.str());
      const int64_t mp = swap_cols(s);
      if (t.mr < 1 || t.nl < 1 || t.mr * t.nl + t.nl > 32 || t.kc < 0 || t.kc % 16 || t.mc < 1)
        throw std::invalid_argument("matmul: bad impl=5 tile " + v.str());
      t.nc = int((mp + 16 * t.nl - 1) / (16 * t.nl));
      const Shape g = t.bf2 ? pair_shape(s) : s;
      // A packed as the panel operand: packed A's k-major layout with
      // panels of NR rows is the packed-B panel layout (Bp[panel][k][c]).
      const int ap = plan_pack_a(pl, nio, g.at, 0, s.batch, s.m, g.k, g.k, 16 * t.nl, 0);
      const int ct = pl.add_temp(nio, size_t(s.batch * s.n * mp) * 4);
      GemmBSource src;  // A packed; B's rows read as they are, f16/bf16 widened unless on pairs
      src.a_dt = t.bf2 ? pair_b_type(s) : s.dt;
      plan_gemm_cpu(pl, t, 1, ap, ct, s.batch, s.n, mp, g.k, GemmEpilogue::Store, nio, src);
      // Cᵀ (batch × N × Mp) -> C (batch × M × N): 16 × 16 blocks in registers.
      const int ta = int(std::min<int64_t>(8, mp / 16)), tb = 4;
      Step tr;
      tr.kernel = transpose_lines_kernel(ir::Type(ir::ScalarKind::F32), s.batch > 1 ? 1 : 0, ta, tb, false);
      tr.dims.grid = {groups_for(s.n, 16 * tb), groups_for(s.m, 16 * ta), uint32_t(s.batch)};
      tr.buffers = {ct, c};
      tr.scalars = {ir::scalar_slot(uint32_t(s.m)), ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(1u), ir::scalar_slot(uint32_t(mp))};
      if (s.batch > 1) tr.scalars.insert(tr.scalars.end(), {ir::scalar_slot(uint32_t(s.batch)), ir::scalar_slot(uint32_t(s.n * mp))});
      pl.steps.push_back(std::move(tr));
      return;
    }
    case kGpu:
      plan_gemm_gpu(pl, s.at, s.trans_b, gpu_tile_of(v), 0, gpu_b(pl, s, nio), c, s.batch, s.m, s.n, s.k, nio, o.eu);
      return;
    case kGpuGemv: {
      if (!s.trans_b || s.m > kGpuGemvMaxM) throw std::invalid_argument("matmul: impl=3 (GPU gemv) needs trans_b=1 and M <= 8");
      const int wg = int(v.get("wg", 128));
      if (caps.max_workgroup_threads && uint32_t(wg) > caps.max_workgroup_threads)
        throw std::invalid_argument("matmul: wg " + std::to_string(wg) + " exceeds the target's workgroup size");
      Step st;
      st.kernel = gemv_gpu_kernel(s.at, int(s.m), wg, caps.subgroups, o.eu ? o.eu->spec : nullptr);
      st.dims.grid = wrapped_grid(s.n, uint32_t(s.batch));
      st.dims.workgroup = {uint32_t(wg), 1, 1};
      st.buffers = {0, gpu_b(pl, s, nio), c};
      if (o.eu) st.buffers.insert(st.buffers.end(), o.eu->slots.begin(), o.eu->slots.end());
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
      pl.steps.push_back(std::move(st));
      return;
    }
  }
  throw std::invalid_argument("matmul: unknown impl in variant '" + v.str() + "'");
}

namespace {

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  Plan pl;
  plan_matmul_into(pl, p, v, caps, MatmulOut{});
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const Shape s = shape_of(p);
  // f32 copies of the inputs (exact for f16/bf16), then double accumulation.
  const std::vector<float> a = fusion::load_all_as_f32(s.at.kind, in[0], s.batch * s.m * s.k);
  const std::vector<float> b = fusion::load_all_as_f32(p.dtype, in[1], s.batch * s.k * s.n);
  float* c = static_cast<float*>(out[0]);
  std::vector<double> row(size_t(s.n));
  for (int64_t z = 0; z < s.batch; ++z) {
    const float* A = a.data() + z * s.m * s.k;
    const float* B = b.data() + z * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t kk = 0; kk < s.k; ++kk) {
        double av = A[i * s.k + kk];
        if (s.trans_b)
          for (int64_t j = 0; j < s.n; ++j) row[size_t(j)] += av * B[j * s.k + kk];
        else
          for (int64_t j = 0; j < s.n; ++j) row[size_t(j)] += av * B[kk * s.n + j];
      }
      for (int64_t j = 0; j < s.n; ++j) c[(z * s.m + i) * s.n + j] = float(row[size_t(j)]);
    }
  }
}

Problem mm(int64_t m, int64_t n, int64_t k, int64_t trans_b = 0, int64_t batch = 1,
           ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = "matmul";
  p.dims = {m, n, k};
  p.dtype = dt;
  if (trans_b) p.attrs["trans_b"] = trans_b;
  if (batch != 1) p.attrs["batch"] = batch;
  return p;
}

Problem f32_a(Problem p) {
  p.attrs["a_f32"] = 1;
  return p;
}

// Every key of the matmul variants: several serve more than one form (impl).
std::vector<VariantKey> variant_keys() {
  constexpr int64_t kAny = 2147483647;  // panel and block counts grow with the problem
  return {
      key_set("impl", "implementation", {0, 1, 2, 3, 4, 5, 6, 7, 8},
              "0 packed GEMM, 1 GEMV, 2 GPU tiles, 3 GPU GEMV, 4 K-split GEMV, 5 swapped, 6 rows in lanes, 7 matrix tiles, 8 bf16 terms"),
      key_range("mr", "register_rows", 1, 32, "rows of A (swapped: of B) per register block"),
      key_range("nl", "register_lines", 1, 16, "16-column lines of B per register block"),
      key_range("kc", "k_slice", 0, 65536, "K per pass over C (0: all of K); matrix tiles: a multiple of 32"),
      key_range("mc", "row_panels", 1, kAny, "row panels per workgroup (matrix tiles: 32-row blocks)"),
      key_range("nc", "column_panels", 1, kAny, "column panels per workgroup (matrix tiles: 32-column panels)"),
      key_set("ak", "a_layout", {0, 1, 2, 16}, "A as the GEMM reads it: 0 packed k-major, 16 packed line chunks, 1 rows in place, 2 columns in place"),
      key_range("ks", "k_splits", 1, 64, "K split across workgroups, partials summed after (GEMM, K-split GEMV, GPU tiles)"),
      key_set("gm", "m_blocks_fastest", {0, 1}, "grid walks the M blocks fastest"),
      key_set("bpf", "prefetch_b_panel", {0, 1}, "prefetch the next B panel (or its source rows)"),
      key_set("apf", "prefetch_a_panel", {0, 1}, "prefetch the next A panel"),
      key_set("pb", "pack_b_in_kernel", {0, 1}, "each workgroup packs its B panels itself"),
      key_set("bf2", "bf16_pairs", {0, 1}, "bf16 inputs as pairs of k, one dot2_bf16 per pair"),
      key_range("rows", "gemv_rows", 1, 16, "GEMV: outputs (Bᵀ rows, else 16-column lines) per work-item"),
      key_range("pf", "gemv_prefetch", 0, 16, "GEMV over Bᵀ: prefetch the rows that many workgroups ahead"),
      key_range("kp", "gemv_k_parts", 1, 16, "GEMV over Bᵀ: K in parts, partials summed after"),
      key_range("mg", "gemv_row_group", 0, 8, "GEMV over Bᵀ: rows of A per pass over B's rows (0: all)"),
      key_range("kr", "split_b_rows", 1, 8, "K-split GEMV: rows of B per pass over the partial rows"),
      key_set("sh", "shifted_rows", {0, 1}, "K-split GEMV: B's rows read as shifted aligned lines"),
      key_set("lb", "split_line_block", {1, 2, 4}, "K-split GEMV: partial-row lines per block"),
      key_range("wg", "workgroup", 1, 1024, "GPU: tile workgroup side, or the GPU GEMV's workgroup size"),
      key_range("tm", "tile_rows", 1, 16, "GPU tiles: rows per work-item"),
      key_range("tn", "tile_cols", 1, 16, "GPU tiles: columns per work-item"),
      key_range("tk", "tile_k", 1, 64, "GPU tiles: K step staged in shared memory"),
      key_set("vec", "line_tiles", {0, 1, 2, 3}, "GPU tiles: 0 scalar, 1 f32x4 lines, 2 next tile's loads in registers, 3 double-buffered"),
      key_set("sw", "swapped", {0, 1}, "GPU line tiles and matrix tiles: Cᵀ = B·Aᵀ (trans_b)"),
  };
}

}  // namespace

void plan_terms_product(Plan& pl, size_t n_io, int a_terms, int b, int c, int64_t m, int64_t n, int64_t k, int64_t prec,
                        const TargetCaps& caps) {
  Shape s{m, n, k, 1, true, ir::Type(ir::ScalarKind::F32), ir::Type(ir::ScalarKind::F32), prec};
  plan_terms_b(pl, n_io, s, std::nullopt, a_terms, b, c, caps);
}

void register_gated_mlp_op();       // ops/matmul/gated_mlp.cpp
void register_matmul_epilogue_op();  // ops/matmul/epilogue_op.cpp

void register_matmul_ops() {
  OpDef d;
  d.name = "matmul";
  d.attr_defaults = {{"trans_b", 0}, {"batch", 1}, {"a_f32", 0}, {"prec", 0}};
  d.description = "C = A·B (f32 C; f32/f16/bf16 A and B, or f32 A with a_f32=1, f32 accumulation); batched; B as K×N or N×K (trans_b=1)";
  d.dims_help = "M N K";
  d.attrs_help =
      "trans_b=0|1 batch=1 a_f32=0|1 (A f32 whatever dtype is: activations against f16/bf16 weights) prec=0|1|2 (f32 products "
      "allowed at a lower precision, as PyTorch's float32_matmul_precision: 1 'high', three bf16 products of two-term splits, "
      "within 3·2^-16 of each product; 2 'medium', bf16 products; taken on AMX hosts where the product is compute-bound; f16 A "
      "and B there: prec 0 four bf16 products of exact two-term splits, each product exact, 1 three, 2 one)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("a", s.at, {s.batch, s.m, s.k}),
                                   tensor("b", s.dt, s.trans_b ? std::vector<int64_t>{s.batch, s.n, s.k}
                                                               : std::vector<int64_t>{s.batch, s.k, s.n})};
  };
  d.outputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("c", ir::Type(ir::ScalarKind::F32), {s.batch, s.m, s.n})};
  };
  d.candidates = candidates;
  d.heuristic = matmul_heuristic;
  d.variant_keys = variant_keys();
  d.plan = plan;
  d.reference = reference;
  // f16 products as four bf16 terms sum 4K of them.
  d.tolerance = [](const Problem& p) {
    const bool f16 = p.dtype == ir::ScalarKind::F16 && !p.attr("a_f32", 0);
    return dot_tolerance(f16 ? 4 * p.dim(2) : p.dim(2)) + terms_tolerance(p.attr("prec", 0));
  };
  d.flops = [](const Problem& p) {
    Shape s = shape_of(p);
    return 2.0 * double(s.batch) * double(s.m) * double(s.n) * double(s.k);
  };
  d.bytes = [](const Problem& p) {
    Shape s = shape_of(p);
    return double(s.batch) * (double(s.at.bytes()) * double(s.m * s.k) + double(s.dt.bytes()) * double(s.k * s.n) +
                              4.0 * double(s.m * s.n));
  };
  using ir::ScalarKind;
  d.test_problems = {mm(1, 1, 1),
                     mm(17, 33, 29),
                     mm(65, 1, 130),
                     mm(37, 70, 300, 1),
                     mm(29, 45, 600),  // K slices with an edge slice
                     mm(20, 30, 2100, 0, 2),  // one M×N block per batch: the heuristic splits K in 4
                     mm(30, 64, 40, 0, 3),
                     mm(15, 19, 23, 1, 3),
                     mm(20, 50, 33, 0, 1, ScalarKind::F16),
                     mm(20, 50, 33, 1, 1, ScalarKind::BF16),
                     mm(21, 50, 34, 1, 1, ScalarKind::BF16),   // bf16 pairs where the host has vdpbf16ps
                     mm(37, 70, 130, 0, 2, ScalarKind::BF16),  // ... K×N, batched
                     mm(1, 77, 96, 1, 1, ScalarKind::BF16),    // ... the pair GEMV, N odd
                     mm(45, 70, 66, 1, 1, ScalarKind::BF16),   // matrix tiles, swapped: whole 32×32 blocks, edges, a K tail of one pair
                     mm(7, 77, 64, 1), mm(6, 50, 96, 1, 1, ScalarKind::BF16),  // GEMV over Bᵀ with 5-8 rows of A
                     mm(21, 45, 64, 1), mm(17, 33, 96, 1, 1, ScalarKind::BF16),  // ... and in groups of rows (a partial last group)
                     mm(1, 100, 64, 1),      // gemv, N not a multiple of the rows
                     mm(3, 48, 32, 0, 2),    // gemv over K×N, batched
                     mm(2, 64, 48, 0, 3), mm(4, 32, 80, 0, 1, ScalarKind::BF16),  // ... split along K
                     mm(2, 40, 48, 1, 1, ScalarKind::F16),
                     mm(130, 96, 64, 1), mm(70, 300, 50, 1),  // ... the swapped product in panels of 5 lines
                     mm(300, 3, 3), mm(70, 16, 1, 1), mm(75, 5, 12, 0, 2),  // thin products: rows in lanes, batched
                     mm(1, 37, 29, 0, 2), mm(2, 21, 53, 0, 1, ScalarKind::BF16),  // K-split GEMV, N off lines (masked tail)
                     mm(1, 37, 29, 1, 2), mm(3, 45, 53, 1, 1, ScalarKind::BF16), mm(12, 30, 40, 1),  // Bᵀ GEMV, K off lines (masked tail)
                     f32_a(mm(2, 33, 17, 1, 1, ScalarKind::F16)),
                     f32_a(mm(1, 33, 40, 0, 1, ScalarKind::F16)),
                     mm(70, 16, 100), mm(45, 30, 70, 0, 2),  // 1- and 2-line register blocks (skinny N)
                     // f32 A against f16/bf16 B (a_f32): the GEMVs, the K-split GEMV, the swapped product, the GEMM
                     f32_a(mm(1, 77, 96, 1, 1, ScalarKind::BF16)), f32_a(mm(3, 48, 64, 0, 1, ScalarKind::F16)),
                     f32_a(mm(40, 300, 70, 1, 2, ScalarKind::BF16)), f32_a(mm(45, 70, 130, 1, 1, ScalarKind::F16)),
                     f32_a(mm(37, 33, 29, 0, 1, ScalarKind::BF16)),
                     // ... one long f32 row of A (K in two parts at 1 thread, 8 rows of B at 2), K off lines
                     f32_a(mm(1, 20, 8192, 1, 1, ScalarKind::BF16)), f32_a(mm(1, 19, 8200, 1, 1, ScalarKind::F16))};
  d.bench_problems = {mm(1024, 1024, 1024), mm(2048, 2048, 2048), mm(1, 4096, 4096, 1)};
  register_op(std::move(d));
  register_gated_mlp_op();
  register_matmul_epilogue_op();
}

}  // namespace kgen::ops
