#include "ops/matmul/plan.h"

#include <algorithm>
#include <cmath>

namespace kgen::ops {

namespace {
uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

int plan_pack_a(Plan& pl, size_t nio, ir::Type dt, int a, int64_t batch, int64_t m, int64_t k, int64_t lda, int mr,
                int ak) {
  int64_t mp = cdiv(m, mr), kp = ak ? cdiv(k, ak) * ak : k;
  int ap = pl.add_temp(nio, size_t(batch * mp * mr * kp) * 4);
  Step s;
  s.kernel = pack_a_kernel(dt, mr, ak);
  s.dims.grid = {uint32_t(cdiv(k, pack_chunk(true))), uint32_t(mp), uint32_t(batch)};
  s.buffers = {a, ap};
  s.scalars = {u(m), u(k), u(lda)};
  pl.steps.push_back(std::move(s));
  return ap;
}

int plan_pack_b(Plan& pl, size_t nio, ir::Type dt, bool trans_b, int b, int64_t batch, int64_t n, int64_t k, int nl,
                bool pairs) {
  int64_t np = cdiv(n, 16 * nl);
  int bp = pl.add_temp(nio, size_t(batch * np * 16 * nl * k) * 4);
  Step s;
  s.kernel = pack_b_kernel(dt, trans_b, nl, pairs);
  uint32_t chunks = uint32_t(cdiv(k, pack_chunk(trans_b)));
  s.dims.grid = trans_b ? std::array<uint32_t, 3>{chunks, uint32_t(np), uint32_t(batch)}
                        : std::array<uint32_t, 3>{uint32_t(np), chunks, uint32_t(batch)};
  s.buffers = {b, bp};
  s.scalars = {u(n), u(k)};
  pl.steps.push_back(std::move(s));
  return bp;
}

void plan_gemm_cpu(Plan& pl, const GemmTile& t, int ap, int bp, int c, int64_t batch, int64_t m, int64_t n, int64_t k,
                   GemmEpilogue ep, size_t nio, const GemmBSource& src, int up, int64_t f, const EpilogueUse* eu) {
  const int64_t nro = ep != GemmEpilogue::Store ? 8 * t.nl : 16 * t.nl;
  if (t.ks > 1 && nio == 0) throw std::logic_error("plan_gemm_cpu: a K split needs the op's tensor count");
  const int part = t.ks > 1 ? pl.add_temp(nio, size_t(batch * t.ks * m * n) * 4) : c;
  GemmTile kt = t;
  // The in-kernel panel scratch covers all of a K split's range when kc = 0.
  if (src.kind != GemmBSource::Packed && !t.kc) kt.pbk = int(pb_depth(t, k));
  Step s;
  const bool fused = eu && t.ks == 1;  // (a K split's sum applies it)
  s.kernel = gemm_cpu_kernel(kt, n % 16 == 0, ep, src, fused ? eu->spec : nullptr);
  const uint32_t nb = uint32_t(cdiv(cdiv(n, nro), t.nc)), mb = uint32_t(cdiv(cdiv(m, t.mr), t.mc));
  s.dims.grid = {t.gm ? mb : nb, t.gm ? nb : mb, uint32_t(batch * t.ks)};
  if (src.kind == GemmBSource::GateUp) s.buffers = {ap, bp, up, part};
  else s.buffers = {ap, bp, part};
  if (fused) s.buffers.insert(s.buffers.end(), eu->slots.begin(), eu->slots.end());
  s.scalars = {u(m), u(n), u(k)};
  if (src.kind == GemmBSource::GateUp) s.scalars.push_back(u(f));
  pl.steps.push_back(std::move(s));
  if (t.ks > 1) plan_ksplit_sum(pl, t.ks, part, c, batch, m * n, true, 0, 0, eu, n);
}

void plan_ksplit_sum(Plan& pl, int ks, int part, int c, int64_t batch, int64_t mn, bool index64, int64_t n, int64_t pitch,
                     const EpilogueUse* eu, int64_t cols) {
  Step sum;
  sum.kernel = matmul_ksplit_sum_kernel(ks, index64, n > 0, eu ? eu->spec : nullptr);
  sum.dims.grid = {uint32_t(cdiv(mn, 256)), 1, uint32_t(batch)};
  sum.dims.workgroup = {256, 1, 1};
  sum.buffers = {part, c};
  sum.scalars = {u(mn)};
  if (eu) sum.buffers.insert(sum.buffers.end(), eu->slots.begin(), eu->slots.end());
  if (n > 0) sum.scalars.insert(sum.scalars.end(), {u(n), u(pitch)});
  else if (eu) sum.scalars.push_back(u(cols));
  pl.steps.push_back(std::move(sum));
}

int64_t pb_depth(const GemmTile& t, int64_t k) { return t.kc ? t.kc : cdiv(cdiv(k, t.ks), 16) * 16; }

bool pb_scratch_fits(const GemmTile& t, int64_t k) { return pb_depth(t, k) * t.nl * 64 <= (512 << 10); }

void plan_gemm_gpu(Plan& pl, ir::Type dt, bool trans_b, const GpuTile& t, int a, int b, int c, int64_t batch, int64_t m,
                   int64_t n, int64_t k, size_t nio, const EpilogueUse* eu) {
  if (t.sw && !trans_b) throw std::invalid_argument("GPU tiles: sw=1 (swapped product) needs trans_b=1");
  if (t.ks > 1 && nio == 0) throw std::logic_error("plan_gemm_gpu: a K split needs the op's tensor count");
  if (t.ks > 1 && (m * n > int64_t(65535) * 256 || batch * t.ks > 65535 || batch * t.ks * m * n >= (int64_t(1) << 32)))
    throw std::invalid_argument("GPU tiles: a K split's sum covers at most 65535·256 outputs, 65535 batch·ks slabs and 2^32 partials");
  const int part = t.ks > 1 ? pl.add_temp(nio, size_t(batch * t.ks * m * n) * 4) : c;
  Step s;
  const bool fused = eu && t.ks == 1;  // (a K split's sum applies it)
  s.kernel = gemm_gpu_kernel(dt, trans_b, t, fused ? eu->spec : nullptr);
  // Tile rows over grid y, tile columns over x: swapped, B's rows are the rows.
  const int64_t rows = t.sw ? n : m, cols = t.sw ? m : n;
  s.dims.grid = {uint32_t(cdiv(cols, t.wg * t.tn)), uint32_t(cdiv(rows, t.wg * t.tm)), uint32_t(batch * t.ks)};
  s.dims.workgroup = {uint32_t(t.wg), uint32_t(t.wg), 1};
  s.buffers = {a, b, part};
  if (fused) s.buffers.insert(s.buffers.end(), eu->slots.begin(), eu->slots.end());
  s.scalars = {u(m), u(n), u(k)};
  pl.steps.push_back(std::move(s));
  if (t.ks > 1) plan_ksplit_sum(pl, t.ks, part, c, batch, m * n, false, 0, 0, eu, n);
}

bool gemm_block_fits(int mr, int nl, const TargetCaps& caps) { return codegen::lines_fit(caps, mr * nl + nl, 1); }

std::vector<std::pair<int, int>> gemm_register_blocks(const TargetCaps& caps) {
  // The blocks for 32 zmm, else those for 16 ymm: small blocks on a large
  // register file would only slow tuning down.
  std::vector<std::pair<int, int>> out;
  // 8×3 first: 24 accumulators + 3 B lines + a broadcast leave 4 registers
  // spare. 14×2 uses 31 of 32, which a scheduler that hoists the broadcasts
  // of the unrolled K chunk spills (LLVM's znver4/5 model: 2.4x slower).
  for (auto b : {std::pair{8, 3}, {6, 4}, {14, 2}, {12, 2}})
    if (gemm_block_fits(b.first, b.second, caps)) out.push_back(b);
  if (!out.empty()) return out;
  for (auto b : {std::pair{6, 1}, {4, 1}, {2, 2}})
    if (gemm_block_fits(b.first, b.second, caps)) out.push_back(b);
  if (out.empty()) out.push_back({2, 1});  // SSE: spills, but correct
  return out;
}

bool gemm_wide_registers(const TargetCaps& caps) { return gemm_register_blocks(caps).front().second >= 2; }

GemmTile tile_of(const Variant& v) {
  GemmTile t;
  t.mr = int(v.get("mr", t.mr));
  t.nl = int(v.get("nl", t.nl));
  t.kc = int(v.get("kc", t.kc));
  t.mc = int(v.get("mc", t.mc));
  t.nc = int(v.get("nc", t.nc));
  t.ak = int(v.get("ak", t.ak));
  t.ks = int(v.get("ks", t.ks));
  t.gm = int(v.get("gm", t.gm));
  t.bpf = int(v.get("bpf", t.bpf));
  t.apf = int(v.get("apf", t.apf));
  t.pb = int(v.get("pb", t.pb));
  t.bf2 = int(v.get("bf2", t.bf2));
  return t;
}

Variant variant_of(const GemmTile& t) {
  Variant v;
  v.set("mr", t.mr).set("nl", t.nl).set("kc", t.kc).set("mc", t.mc).set("nc", t.nc);
  if (t.ak) v.set("ak", t.ak);
  if (t.ks > 1) v.set("ks", t.ks);
  if (t.gm) v.set("gm", t.gm);
  if (t.bpf) v.set("bpf", t.bpf);
  if (t.apf) v.set("apf", t.apf);
  if (t.pb) v.set("pb", t.pb);
  if (t.bf2) v.set("bf2", t.bf2);
  return v;
}

Variant gpu_tile_variant(const GpuTile& t) {
  Variant v = Variant{}.set("wg", t.wg).set("tm", t.tm).set("tn", t.tn).set("tk", t.tk);
  if (t.vec) v.set("vec", t.vec);
  if (t.ks > 1) v.set("ks", t.ks);
  if (t.sw) v.set("sw", t.sw);
  return v;
}

GpuTile gpu_tile_of(const Variant& v) {
  GpuTile t;
  t.wg = int(v.get("wg", t.wg));
  t.tm = int(v.get("tm", t.tm));
  t.tn = int(v.get("tn", t.tn));
  t.tk = int(v.get("tk", t.tk));
  t.vec = int(v.get("vec", 0));
  t.ks = int(v.get("ks", 1));
  t.sw = int(v.get("sw", 0));
  if (t.vec < 0 || t.vec > 3) throw std::invalid_argument("vec must be 0, 1, 2 or 3");
  if (t.vec && (t.wg != 16 || t.tm != 8 || !((t.tn == 8 && (t.tk == 8 || t.tk == 16)) || (t.tn == 4 && t.tk == 16))))
    throw std::invalid_argument("GPU line tiles (vec) are wg=16 tm=8 with tn=8 tk 8 or 16, or tn=4 tk=16: " + v.str());
  if (t.ks < 1 || t.ks > 16) throw std::invalid_argument("GPU tiles: ks (K split) must be 1-16: " + v.str());
  if ((t.ks > 1 || t.sw) && !t.vec) throw std::invalid_argument("GPU tiles: ks and sw need the line tiles (vec): " + v.str());
  if (t.sw != 0 && t.sw != 1) throw std::invalid_argument("GPU tiles: sw must be 0 or 1: " + v.str());
  return t;
}

double dot_tolerance(int64_t k) {
  // Rounding of k products and of partial sums growing like sqrt(k) (random
  // signs): a random walk of ~sqrt(k) relative steps of 2^-24; 8x margin
  // for blocked summation orders and a floor for tiny k.
  return 5e-7 * (4.0 + std::sqrt(double(k)));
}

}  // namespace kgen::ops
