// The "gated_mlp" op, an LLM feed-forward block:
//   Y (T×D) = (silu(X·Gᵀ) ⊙ (X·Uᵀ)) · Dnᵀ,  X: T×D, G, U: F×D, Dn: D×F.
// CPU (impl 0, fused): G and U are packed into one B whose panels alternate a
// line of gate features with the line of up features for the same 16
// features, so one microkernel accumulates both products of an output tile
// and its epilogue writes H = silu(g)·u directly (H never exists unfused,
// X is packed and streamed once for both). Then the down projection is a
// plain packed GEMM over H. H's rows are padded to a multiple of 16 columns
// (whole lines; the padded features are zero in both packed weights); where
// both GEMMs take the same row panels the epilogue writes H directly in the
// down GEMM's packed-A layout. With pb the [G;U] (and, for few tokens, Dn)
// panels are packed inside the GEMMs: 256 tokens take two or three launches.
// impl 1 (CPU, unfused): X·Gᵀ, X·Uᵀ, an elementwise silu·product, the down
// GEMM: the same kernels without the fusion, for comparison.
// impl 2 (GPU): the same unfused sequence with the shared-memory GEMM.
// impl 3 (CPU, few tokens): the three products as the matmul op runs them
// (its heuristic: GEMVs, the swapped product), then a SiLU·product pass.
// impl 4 (f32 with prec=1|2 on AMX hosts): X, G, U and Dn split into bf16
// terms (ops/matmul/bf16_terms.h), the gate and up products on matrix tiles, one pass
// from them to H's terms (SiLU·product, then the split), the down product
// on tiles.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ir/half.h"
#include "ops/common/widen.h"
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"
#include "ops/matmul/bf16_terms.h"
#include "ops/matmul/forms.h"
#include "ops/matmul/gemm_panels.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"
#include "ops/matmul/strategy.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

using namespace gated_mlp;

// Bp[panel][k][l] (see pack_gate_up_panel), one work-item per (chunk of K, panel).
// `pairs`: G and U are u32 bf16 pair words, k counts pairs (GemmTile::bf2).
ir::Kernel pack_gate_up_kernel(int nl, ir::Type dt, bool pairs) {
  return kernel("gated_mlp_pack_gate_up_" + dt.str() + "_nr" + std::to_string(16 * nl) + (pairs ? "_bf2" : ""), [&](KernelBuilder& kb) {
    auto g = kb.input("g", dt);
    auto u = kb.input("u", dt);
    auto bp = kb.output("bp", line(pairs ? u32 : f32, 16));
    auto F = kb.scalar("f", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    const uint32_t CH = uint32_t(pack_chunk(true));  // G, U rows run along K
    Value panel = group_id(1);
    Value k0 = group_id(0) * CH, k1 = min(k0 + CH, K);
    Value dst = cast(u64, panel * K * uint32_t(nl));
    pack_gate_up_panel(g, u, nl, F, K, panel, k0, k1,
                       [&](const Value& k, int l, const Value& v) { bp[dst + k * uint64_t(nl) + uint64_t(l)] = v; }, pairs);
  });
}

struct Dims {
  int64_t t, d, f;
};
Dims dims_of(const Problem& p) { return {p.dim(0), p.dim(1), p.dim(2)}; }
int64_t round16(int64_t x) { return (x + 15) / 16 * 16; }

void validate(const Problem& p) {
  if (p.dims.size() != 3) throw std::invalid_argument("expected 3 sizes T D F");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::BF16 && p.dtype != ir::ScalarKind::F16)
    throw std::invalid_argument("dtype must be f32, f16 or bf16");
  for (const auto& [k, v] : p.attrs) {
    if (k == "prec") {
      if (v < 0 || v > 2) throw std::invalid_argument("prec must be 0 (IEEE f32), 1 (bf16x3) or 2 (bf16)");
      if (v && p.dtype == ir::ScalarKind::F16) throw std::invalid_argument("prec=1|2 is for f32 inputs, or bf16 with H in f32");
      continue;
    }
    if (k != "h_bf16") throw std::invalid_argument("unknown attribute '" + k + "' (h_bf16, prec)");
    if (v != 0 && v != 1) throw std::invalid_argument("h_bf16 must be 0 or 1");
    if (v && p.dtype != ir::ScalarKind::BF16) throw std::invalid_argument("h_bf16=1 (H rounded to bf16) is for bf16 inputs");
  }
  Dims s = dims_of(p);
  if (double(round16(s.f) + 64) * double(std::max(s.t + 16, s.d + 64)) >= 4294967295.0)
    throw std::invalid_argument("too large for 32-bit indexing");
}

// The down product of bf16 H on matrix tiles: a CPU with them, an even F.
bool down_on_tiles(const Dims& s, const TargetCaps& caps) { return is_cpu(caps) && caps.matrix_tiles && s.f % 2 == 0; }

void silu_step(Plan& pl, const TargetCaps& caps, int g, int u, int h, int64_t n, bool round_bf16,
               bool store_bf16 = false) {
  Step s;
  if (is_cpu(caps)) {
    s.kernel = gated_silu_cpu_kernel(round_bf16, store_bf16);
    s.dims.grid = wrapped_grid(groups_for(n, kGatedSiluChunk));
  } else {
    s.kernel = gated_silu_gpu_kernel(round_bf16, store_bf16);
    s.dims.grid = wrapped_grid(groups_for(n, 256));
    s.dims.workgroup = {256, 1, 1};
  }
  s.buffers = {g, u, h};
  s.scalars = {ir::scalar_slot(uint32_t(n))};
  pl.steps.push_back(std::move(s));
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  const Dims s = dims_of(p);
  const size_t nio = 5;  // x, g, u, dn, y
  const ir::Type f32t(ir::ScalarKind::F32), dt(p.dtype);
  const bool h16 = p.attr("h_bf16", 0) != 0;  // H rounded to bf16 before the down projection
  Plan pl;
  int64_t impl = v.get("impl", kFused);
  if (impl == kGpu) {
    GpuTile t = gpu_tile_of(v);
    int tg = pl.add_temp(nio, size_t(s.t * s.f) * 4), tu = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    int h = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    plan_gemm_gpu(pl, dt, true, t, 0, 1, tg, 1, s.t, s.f, s.d, nio);
    plan_gemm_gpu(pl, dt, true, t, 0, 2, tu, 1, s.t, s.f, s.d, nio);
    silu_step(pl, caps, tg, tu, h, s.t * s.f, h16);
    int dn = 3;
    if (dt != f32t) {  // the GPU GEMM takes one element type: Dn widened to H's f32
      dn = plan_widen(pl, nio, dt, 3, s.d * s.f);
    }
    plan_gemm_gpu(pl, f32t, true, t, h, dn, 4, 1, s.t, s.d, s.f, nio);
    return pl;
  }
  if (impl == kTerms) {
    if (!terms_fit(p, caps)) throw std::invalid_argument("gated_mlp: impl=4 (bf16 terms) needs f32 inputs, prec=1|2 and a CPU with AMX-BF16");
    const int64_t prec = p.attr("prec", 0);
    const int parts = bf16_terms_parts(prec);
    const int64_t dp = bf16_terms_seg(s.d), fp = bf16_terms_seg(s.f);  // each part's depth
    // X's terms once for both products, G's, U's and Dn's as the products
    // take them (their pair panels where those run on tiles unswapped).
    const int x = plan_bf16_terms(pl, nio, 0, s.t, s.d, dp, s.d, parts, Bf16TermsSide::A);
    const int tg = pl.add_temp(nio, size_t(s.t * s.f) * 4), tu = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    plan_terms_product(pl, nio, x, 1, tg, s.t, s.f, s.d, prec, caps);
    plan_terms_product(pl, nio, x, 2, tu, s.t, s.f, s.d, prec, caps);
    const int h = plan_bf16_terms(pl, nio, tg, s.t, s.f, fp, s.f, parts, Bf16TermsSide::A, tu);
    plan_terms_product(pl, nio, h, 3, 4, s.t, s.d, s.f, prec, caps);
    return pl;
  }
  if (impl == kComposed) {
    // The three products as the matmul op runs them (its heuristic: the
    // GEMV, the swapped product, the packed GEMM), H through one SiLU·product pass.
    // f16/bf16: H stays f32 (rounded to bf16 values with h_bf16) and the
    // down product reads it as f32 against the 16-bit Dn (matmul's a_f32).
    const OpDef& mm = *find_op("matmul");
    auto product = [&](int a, int b, int c, int64_t m, int64_t n, int64_t k, bool a_f32 = false) {
      Problem q;
      q.op = "matmul";
      q.dims = {m, n, k};
      q.dtype = p.dtype;
      q.attrs["trans_b"] = 1;
      if (a_f32 && dt != f32t) q.attrs["a_f32"] = 1;
      // bf16 with H in f32: prec lets the down product split H into bf16 terms.
      if (a_f32 && dt != f32t && p.attr("prec", 0)) q.attrs["prec"] = p.attr("prec", 0);
      pl.append(nio, mm.plan(q, mm.heuristic(q, caps), caps), 3, {a, b, c});
    };
    // H rounded to bf16 is stored as bf16 where the down product then runs
    // on matrix tiles (bf16 A and Dn).
    const bool h_store16 = h16 && down_on_tiles(s, caps);
    int tg = pl.add_temp(nio, size_t(s.t * s.f) * 4), tu = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    int h = pl.add_temp(nio, size_t(s.t * s.f) * (h_store16 ? 2 : 4));
    product(0, 1, tg, s.t, s.f, s.d);
    product(0, 2, tu, s.t, s.f, s.d);
    silu_step(pl, caps, tg, tu, h, s.t * s.f, h16, h_store16);
    product(h, 3, 4, s.t, s.d, s.f, !h_store16);
    return pl;
  }
  if (!is_cpu(caps)) throw std::invalid_argument("gated_mlp: impl 0/1 are for the cpu target");
  GemmTile t = tile_of(v);
  const bool pairs = t.bf2 != 0;
  if (pairs && (!pairs_fit(p) || impl != kFused))
    throw std::invalid_argument("gated_mlp: bf2=1 (bf16 pairs) needs bf16 inputs, an even D and the fused impl: " + v.str());
  if (t.ak == 1 && dt != f32t && !pairs)
    throw std::invalid_argument("gated_mlp: ak=1 (X read unpacked) needs f32 inputs or bf16 pairs: " + v.str());
  const int64_t dk = pairs ? s.d / 2 : s.d;      // the [G;U] GEMM's k steps
  const ir::Type wt = pairs ? ir::Type(ir::ScalarKind::U32) : dt;  // X, G, U as it reads them
  // The down GEMM's tile for a product of depth k (F, or F/2 pairs).
  auto down_tile = [&](int64_t k) {
    GemmTile d = default_cpu_tile(s.t, s.d, k, caps);
    if (t.nl == d.nl) d.mr = t.mr;  // the variant's block for both GEMMs where it is the same shape
    d.ak = t.ak == 1 ? 16 : t.ak;  // H is read packed (its rows are fp apart)
    if (d.ak != 16) d.apf = 0;     // the A prefetch needs the line-chunk layout
    return d;
  };
  GemmTile down = down_tile(s.f);
  // X as it is (ak = 1: T×D rows, D = the product's K), else packed.
  const int xp = t.ak == 1 ? 0 : plan_pack_a(pl, nio, wt, 0, 1, s.t, dk, dk, t.mr, t.ak);
  if (impl == kFused) {
    if (t.nl % 2) throw std::invalid_argument("gated_mlp: the fused variant needs an even nl");
    t.kc = 0;  // the epilogue needs complete sums
    // The epilogue writes H straight into the down GEMM's packed-A layout
    // when both use the same row panels (no packing launch for H).
    const bool h_packed = down.mr == t.mr && down.ak == 16;
    // H rounded to bf16 and [G;U] on pairs: H written as pair words and the
    // down GEMM on pairs too (Dn read as words), F/2 steps.
    const bool h_pairs = h16 && pairs && h_packed && t.nl % 4 == 0 && s.f % 2 == 0;
    if (h_pairs) {
      down = down_tile(s.f / 2);
      down.bf2 = 1;
      if (down.mr != t.mr || down.ak != 16) throw std::logic_error("gated_mlp: the pair down GEMM changed its row panels");
    }
    const int64_t fp = h_pairs ? (s.f + 31) / 32 * 32 : round16(s.f);
    const GemmEpilogue ep = h_pairs    ? GemmEpilogue::GatedSiluPairsA
                            : h_packed ? (h16 ? GemmEpilogue::GatedSiluBf16PackedA : GemmEpilogue::GatedSiluPackedA)
                                       : (h16 ? GemmEpilogue::GatedSiluBf16 : GemmEpilogue::GatedSilu);
    const int64_t dkk = h_pairs ? s.f / 2 : s.f;  // the down GEMM's k steps
    const ir::Type dnt = h_pairs ? ir::Type(ir::ScalarKind::U32) : dt;  // Dn as it reads it
    const int64_t h_rows = h_packed ? (s.t + t.mr - 1) / t.mr * t.mr : s.t;
    int h = pl.add_temp(nio, size_t(h_rows * fp) * 4);
    if (t.pb) {
      // [G;U] panels packed inside the fused GEMM (all of D deep), Dn's inside the down GEMM.
      if (!pb_scratch_fits(t, dk))
        throw std::invalid_argument("gated_mlp: pb=1 needs D·nr·4 <= 512 KiB (the [G;U] panel scratch): " + v.str());
      GemmBSource gu;
      gu.kind = GemmBSource::GateUp;
      gu.dt = wt;
      plan_gemm_cpu(pl, t, xp, 1, h, 1, s.t, fp, dk, ep, nio, gu, 2, s.f);
    } else {
      int gup = pl.add_temp(nio, size_t(2 * (fp + 8 * t.nl) * dk) * 4);  // 2 words (g, u) per feature and k step
      Step pk;
      pk.kernel = pack_gate_up_kernel(t.nl, wt, pairs);
      pk.dims.grid = {uint32_t((dk + pack_chunk(true) - 1) / pack_chunk(true)), uint32_t((s.f + 8 * t.nl - 1) / (8 * t.nl)), 1};
      pk.buffers = {1, 2, gup};
      pk.scalars = {ir::scalar_slot(uint32_t(s.f)), ir::scalar_slot(uint32_t(dk))};
      pl.steps.push_back(std::move(pk));
      plan_gemm_cpu(pl, t, xp, gup, h, 1, s.t, fp, dk, ep);
    }
    const int hp = h_packed ? h : plan_pack_a(pl, nio, f32t, h, 1, s.t, s.f, fp, down.mr, down.ak);
    // Dn's panels packed in the down GEMM too where one row group covers all
    // tokens (else each panel would be packed once per row group).
    if (t.pb && down.kc && pb_scratch_fits(down, dkk) && down.mc * down.mr >= s.t) {
      GemmBSource dn;
      dn.kind = GemmBSource::Raw;
      dn.dt = dnt;
      dn.trans_b = true;
      down.pb = 1;
      plan_gemm_cpu(pl, down, hp, 3, 4, 1, s.t, s.d, dkk, GemmEpilogue::Store, nio, dn);
      return pl;
    }
    int dp = plan_pack_b(pl, nio, dnt, true, 3, 1, s.d, dkk, down.nl, h_pairs);
    plan_gemm_cpu(pl, down, hp, dp, 4, 1, s.t, s.d, dkk);
    return pl;
  }
  if (impl == kUnfused) {
    int tg = pl.add_temp(nio, size_t(s.t * s.f) * 4), tu = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    int h = pl.add_temp(nio, size_t(s.t * s.f) * 4);
    int gp = plan_pack_b(pl, nio, dt, true, 1, 1, s.f, s.d, t.nl);
    plan_gemm_cpu(pl, t, xp, gp, tg, 1, s.t, s.f, s.d);
    int up = plan_pack_b(pl, nio, dt, true, 2, 1, s.f, s.d, t.nl);
    plan_gemm_cpu(pl, t, xp, up, tu, 1, s.t, s.f, s.d);
    silu_step(pl, caps, tg, tu, h, s.t * s.f, h16);
    int hp = plan_pack_a(pl, nio, f32t, h, 1, s.t, s.f, s.f, down.mr, down.ak);
    int dp = plan_pack_b(pl, nio, dt, true, 3, 1, s.d, s.f, down.nl);
    plan_gemm_cpu(pl, down, hp, dp, 4, 1, s.t, s.d, s.f);
    return pl;
  }
  throw std::invalid_argument("gated_mlp: unknown impl in variant '" + v.str() + "'");
}

// Separate G and U GEMMs (the T×F×D products with the default tile), then
// one SiLU·product pass.
Variant unfused_variant(const Problem& p, const TargetCaps& caps) {
  GemmTile u = default_cpu_tile(p.dim(0), p.dim(2), p.dim(1), caps);
  u.kc = 256;
  return variant_of(u).set("impl", kUnfused);
}

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  std::vector<Variant> out;
  if (!is_cpu(caps)) {
    for (int b : {2, 4}) out.push_back(Variant{}.set("impl", kGpu).set("wg", 16).set("tm", b).set("tn", b).set("tk", 16));
    out.push_back(Variant{}.set("impl", kGpu).set("wg", 16).set("tm", 8).set("tn", 8).set("tk", 16).set("vec", 1));
    out.push_back(Variant{}.set("impl", kGpu).set("wg", 16).set("tm", 8).set("tn", 8).set("tk", 16).set("vec", 2));
    out.push_back(Variant{}.set("impl", kComposed));
    return out;
  }
  for (auto [mr, nl] : fused_blocks(caps))
    for (auto [mc, nc] : {std::pair{8, 8}, {4, 16}, {16, 16}, {32, 16}, {16, 32}, {32, 32}})
      for (int bpf : {0, 1}) {
        GemmTile t{mr, nl, 0, mc, nc, 16};
        t.bpf = bpf;
        out.push_back(variant_of(t).set("impl", kFused));
      }
  // The heuristic's choice (its row group may span all of M), and with its
  // panels packed in the GEMMs (pb) where that fits, the latter also with X
  // read unpacked (ak = 1).
  Variant h = gated_mlp_heuristic(p, caps);
  const GemmTile ht = tile_of(h);
  for (int form : {0, 1, 2}) {
    if (form && !pb_scratch_fits(ht, ht.bf2 ? p.dim(1) / 2 : p.dim(1))) continue;
    if (form == 2 && p.dtype != ir::ScalarKind::F32 && !ht.bf2) continue;  // X unpacked: f32 or bf16 pairs
    Variant v = h;
    if (form) v.set("pb", 1);
    else v.params.erase("pb");
    if (form == 2) v.set("ak", 1);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  out.push_back(unfused_variant(p, caps));
  out.push_back(Variant{}.set("impl", kComposed));
  if (terms_fit(p, caps)) out.push_back(Variant{}.set("impl", kTerms));
  return out;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const Dims s = dims_of(p);
  const bool h16 = p.attr("h_bf16", 0) != 0;
  // f32 copies of the inputs (exact for bf16).
  auto widen = [&](int i, int64_t n) { return fusion::load_all_as_f32(p.dtype, in[size_t(i)], n); };
  const std::vector<float> xv = widen(0, s.t * s.d), gv = widen(1, s.f * s.d), uv = widen(2, s.f * s.d), dv = widen(3, s.d * s.f);
  const float *x = xv.data(), *g = gv.data(), *u = uv.data(), *dn = dv.data();
  float* y = static_cast<float*>(out[0]);
  std::vector<double> h(size_t(s.f));
  for (int64_t t = 0; t < s.t; ++t) {
    const float* xr = x + t * s.d;
    for (int64_t f = 0; f < s.f; ++f) {
      double a = 0, b = 0;
      for (int64_t k = 0; k < s.d; ++k) {
        a += double(xr[k]) * g[f * s.d + k];
        b += double(xr[k]) * u[f * s.d + k];
      }
      h[size_t(f)] = a / (1.0 + std::exp(-a)) * b;
      if (h16) h[size_t(f)] = ir::round_bf16(float(h[size_t(f)]));
    }
    for (int64_t j = 0; j < s.d; ++j) {
      double acc = 0;
      for (int64_t f = 0; f < s.f; ++f) acc += h[size_t(f)] * dn[j * s.f + f];
      y[t * s.d + j] = float(acc);
    }
  }
}

Problem gm(int64_t t, int64_t d, int64_t f, ir::ScalarKind dt = ir::ScalarKind::F32, int h_bf16 = 0) {
  Problem p;
  p.op = "gated_mlp";
  p.dims = {t, d, f};
  p.dtype = dt;
  if (h_bf16) p.attrs["h_bf16"] = 1;
  return p;
}

// Every key of the gated_mlp variants.
std::vector<VariantKey> variant_keys() {
  constexpr int64_t kAny = 2147483647;  // panel counts grow with the problem
  return {
      key_set("impl", "implementation", {0, 1, 2, 3, 4}, "0 fused [G;U] GEMM, 1 unfused CPU GEMMs, 2 GPU tiles, 3 as matmul runs the products, 4 bf16 terms"),
      key_range("mr", "register_rows", 1, 32, "rows of X per register block"),
      key_range("nl", "register_lines", 1, 16, "16-column lines of the weights per register block (even when fused)"),
      key_range("kc", "k_slice", 0, 65536, "K per pass over the output (0: all of K; the fused GEMM takes all)"),
      key_range("mc", "row_panels", 1, kAny, "row panels per workgroup"),
      key_range("nc", "column_panels", 1, kAny, "column panels per workgroup"),
      key_set("ak", "a_layout", {0, 1, 16}, "X as the GEMM reads it: 0 packed k-major, 16 packed line chunks, 1 rows in place"),
      key_set("gm", "m_blocks_fastest", {0, 1}, "grid walks the M blocks fastest"),
      key_set("bpf", "prefetch_b_panel", {0, 1}, "prefetch the next weight panel (or its source rows)"),
      key_set("apf", "prefetch_a_panel", {0, 1}, "prefetch the next X panel"),
      key_set("pb", "pack_b_in_kernel", {0, 1}, "the GEMMs pack their weight panels themselves"),
      key_set("bf2", "bf16_pairs", {0, 1}, "bf16 inputs as pairs of k, one dot2_bf16 per pair"),
      key_range("wg", "workgroup", 1, 1024, "GPU tiles: workgroup side"),
      key_range("tm", "tile_rows", 1, 16, "GPU tiles: rows per work-item"),
      key_range("tn", "tile_cols", 1, 16, "GPU tiles: columns per work-item"),
      key_range("tk", "tile_k", 1, 64, "GPU tiles: K step staged in shared memory"),
      key_set("vec", "line_tiles", {0, 1, 2, 3}, "GPU tiles: 0 scalar, 1 f32x4 lines, 2 next tile's loads in registers, 3 double-buffered"),
  };
}

}  // namespace

float silu_ref(float x) { return x / (1.0f + std::exp(-x)); }

void register_gated_mlp_op() {
  OpDef d;
  d.name = "gated_mlp";
  d.attr_defaults = {{"h_bf16", 0}, {"prec", 0}};
  d.description = "Y = (silu(X·Gᵀ) ⊙ X·Uᵀ)·Dnᵀ (f32, f16 or bf16 inputs, f32 Y and H; X T×D, G and U F×D, Dn D×F), gate/up GEMM with a fused epilogue";
  d.dims_help = "T D F";
  d.attrs_help =
      "h_bf16=0|1 (bf16 inputs: H rounded to bf16 before the down projection, as bf16 frameworks store it) prec=0|1|2 (f32: the "
      "products allowed at a lower precision, as matmul's prec; bf16 with H in f32: the down product's H)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Dims s = dims_of(p);
    const ir::Type t(p.dtype);
    return std::vector<TensorSpec>{tensor("x", t, {s.t, s.d}), tensor("g", t, {s.f, s.d}), tensor("u", t, {s.f, s.d}),
                                   tensor("dn", t, {s.d, s.f})};
  };
  d.outputs = [](const Problem& p) {
    Dims s = dims_of(p);
    return std::vector<TensorSpec>{tensor("y", ir::Type(ir::ScalarKind::F32), {s.t, s.d})};
  };
  d.candidates = candidates;
  d.heuristic = gated_mlp_heuristic;
  d.variant_keys = variant_keys();
  d.plan = plan;
  d.reference = reference;
  // Both GEMMs' rounding, plus the vectorised exp's few ulps in the epilogue.
  // With h_bf16 an element of H that lands near a bf16 rounding boundary may
  // round the other way than the reference's: one bf16 ulp (2^-8 to 2^-7
  // relative) of its product with Dn. A GPU's exp (a few ulps on lavapipe)
  // flips several in one row: webgpu 60×36×70 once in ~100 runs reached
  // 0.0046 with 3 flips, over the 2^-8 this allowed. 2^-6 covers a few; the
  // rounding itself is checked bit for bit by the bf16_upper_bits test.
  d.tolerance = [](const Problem& p) {
    return 2 * (dot_tolerance(p.dim(1)) + dot_tolerance(p.dim(2))) + 1e-5 + (p.attr("h_bf16", 0) ? 1.0 / 64 : 0.0) +
           2 * terms_tolerance(p.attr("prec", 0));
  };
  d.flops = [](const Problem& p) {
    Dims s = dims_of(p);
    return 6.0 * double(s.t) * double(s.d) * double(s.f);
  };
  d.bytes = [](const Problem& p) {
    Dims s = dims_of(p);
    const double eb = ir::Type(p.dtype).bytes();
    return eb * (double(s.t * s.d) + 3.0 * double(s.f * s.d)) + 4.0 * double(s.t * s.d);
  };
  // gm(200, ...): more row panels than 32, so the heuristic's row group spans all of M.
  // bf16: pairs where the host has them (even D), widened for odd D.
  d.test_problems = {gm(1, 16, 16),  gm(5, 32, 48),  gm(17, 40, 33), gm(33, 64, 100), gm(30, 20, 70), gm(200, 24, 40), gm(131, 40, 70),
                     gm(17, 40, 33, ir::ScalarKind::BF16), gm(60, 36, 70, ir::ScalarKind::BF16), gm(5, 33, 48, ir::ScalarKind::BF16),
                     gm(17, 40, 34, ir::ScalarKind::BF16, 1), gm(60, 36, 70, ir::ScalarKind::BF16, 1), gm(5, 33, 48, ir::ScalarKind::BF16, 1),
                     gm(70, 64, 70, ir::ScalarKind::BF16, 1),
                     gm(17, 40, 33, ir::ScalarKind::F16), gm(131, 36, 70, ir::ScalarKind::F16)};  // f16: widened  // AVX-512 + BF16, past the composed form: H as pair words, both GEMMs on pairs
  d.bench_problems = {gm(2048, 1024, 11008), gm(256, 1024, 11008)};
  register_op(std::move(d));
}

}  // namespace kgen::ops
