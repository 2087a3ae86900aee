// The "attention" op: problem, variant space, plans and C++ reference for the
// kernels of attention_kernels.cpp.
//
// dims "B H S D [Hkv [Skv]]" (Hkv defaults to H, Skv to S); attrs causal=0|1,
// scale_milli (scale = scale_milli / 1000; default 1/sqrt(D)).
// Variants: impl=0 naive (three kernels through a score temporary),
// impl=1 flash for the CPU (qb query rows per work-item, kb keys per block;
// D % 16 == 0), impl=2 flash for GPUs (bq rows per workgroup, bk keys per
// shared-memory block; any D, also runs on the CPU).
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "ops/attention.h"
#include "ops/fusion.h"
#include "ops/matmul_plan.h"
#include "ops/op.h"
#include "ops/widen.h"

namespace kgen::ops {

namespace {

enum Impl { kNaive = 0, kFlashCpu = 1, kFlashGpu = 2 };

struct Att {
  int64_t b, h, s, d, hkv, skv;
  bool causal;
  float scale;
  int64_t rows() const { return b * h * s; }
  // Query i sees keys j <= i + shift (shift >= Skv: everything).
  int64_t shift() const { return causal ? skv - s : skv; }
  int64_t visible(int64_t i) const { return std::clamp<int64_t>(i + shift() + 1, 0, skv); }
};

Att att_of(const Problem& p) {
  Att a;
  a.b = p.dim(0);
  a.h = p.dim(1);
  a.s = p.dim(2);
  a.d = p.dim(3);
  a.hkv = p.dims.size() > 4 ? p.dim(4) : a.h;
  a.skv = p.dims.size() > 5 ? p.dim(5) : a.s;
  a.causal = p.attr("causal") != 0;
  a.scale = p.attrs.count("scale_milli") ? float(p.attr("scale_milli")) / 1000.0f : 1.0f / std::sqrt(float(a.d));
  return a;
}

void validate(const Problem& p) {
  if (p.dims.size() < 4 || p.dims.size() > 6) throw std::invalid_argument("expected dims B H S D [Hkv [Skv]]");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && p.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument("q, k, v must be f32, f16 or bf16 (o is f32)");
  Att a = att_of(p);
  if (a.b < 1 || a.h < 1 || a.s < 1 || a.d < 1 || a.hkv < 1 || a.skv < 1)
    throw std::invalid_argument("every size must be >= 1");
  if (a.h % a.hkv) throw std::invalid_argument("H must be a multiple of Hkv (grouped-query attention)");
  if (a.d > 256) throw std::invalid_argument("D > 256 is not supported (accumulators live in registers)");
  double elems = double(a.rows()) * double(a.skv + 64);
  if (elems >= 2e9) throw std::invalid_argument("too large: indices are 32-bit");
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

std::vector<uint64_t> shape_scalars(const Att& a, int64_t skvp) {
  return {ir::scalar_slot(int32_t(a.s)),    ir::scalar_slot(int32_t(a.skv)),
          ir::scalar_slot(int32_t(skvp)),   ir::scalar_slot(int32_t(a.h)),
          ir::scalar_slot(int32_t(a.h / a.hkv)), ir::scalar_slot(int32_t(a.shift())),
          ir::scalar_slot(a.scale),         ir::scalar_slot(int32_t(a.rows()))};
}

// Grid (x, rows) with the rows wrapped over axes 1 and 2 (wrapped_group in
// the kernels): a GPU grid axis holds 65535 groups.
std::array<uint32_t, 3> rows_grid(uint32_t x, int64_t rows) {
  const auto w = wrapped_grid(rows);
  return {x, w[0], w[1]};
}

// The largest key block (<= want) whose K and V tiles fit the target's shared memory.
int64_t gpu_bk(const Att& a, const TargetCaps& caps, int64_t want) {
  int64_t bk = want;
  while (bk > 1 && 2 * bk * a.d * 4 > int64_t(caps.max_shared_bytes)) bk /= 2;
  return bk;
}

// The GPU kernel with 4 work-items per query row (tpr=4): needs subgroup
// shuffles within aligned groups of 4 lanes, and D % 4 == 0.
bool four_per_row(const Att& a, const TargetCaps& caps) {
  return caps.subgroups && caps.subgroup_size % 4 == 0 && a.d % 4 == 0;
}

// The register-tiled GPU kernel (tile=1) with bq rows and bk keys per block:
// row scores meet through shuffles among bk/4 lanes, and its tiles must fit
// the shared memory (kv1: K and V in one buffer).
bool tiled_fits(const Att& a, const TargetCaps& caps, int bq, int bk, bool kv1 = false) {
  const uint32_t threads = uint32_t(bq / 4 * bk / 4);
  return !is_cpu(caps) && caps.subgroups && caps.subgroup_size % uint32_t(bk / 4) == 0 && a.d % bk == 0 &&
         (!caps.max_shared_bytes || flash_tiled_shared_bytes(int(a.d), bq, bk, kv1) <= caps.max_shared_bytes) &&
         (!caps.max_workgroup_threads || threads <= caps.max_workgroup_threads);
}
// Workgroups of bq query rows (the flash kernels' grids, before key splits).
int64_t row_groups(const Att& a, int bq) { return a.b * a.h * ((a.s + bq - 1) / bq); }
// The split outputs (ks × B·H·S × D) stay within the merge's i32 indices.
bool split_indexable(const Att& a, int ks) { return double(ks) * double(a.rows()) * double(a.d) < 2e9; }
// Key splits (ks) of the tiled kernel: worth a try while the row groups
// number under 4·kGpuGroupsWanted with the split and each split keeps 128
// keys.
bool tiled_split(const Att& a, int bq, int ks) {
  return row_groups(a, bq) * ks <= 4 * kGpuGroupsWanted && a.skv / ks >= 128 && split_indexable(a, ks);
}
// The heuristic's split: the least that brings the workgroups to
// 4·kGpuGroupsWanted (H100, B1 H8 D64: S 1024 128 groups, causal ks 1 / 2
// / 4 / 8 0.161 / 0.112 / 0.095 / 0.078 ms, not causal ks 4 / 8 0.097 /
// 0.101; H32 S512 256 groups, ks 1 / 2 / 4 0.111 / 0.091 / 0.084; H32/8
// S16 Skv 2048 D128 32 groups, ks 4 / 8 / 16 0.25 / 0.076 / 0.065).
int tiled_split_for(const Att& a, int bq) {
  const int64_t groups = row_groups(a, bq);
  int ks = 1;
  if (groups >= 2 * kGpuGroupsWanted) return ks;  // S 4096 (512 groups) was measured unsplit only
  while (ks < 16 && groups * ks < 4 * kGpuGroupsWanted && tiled_split(a, bq, 2 * ks)) ks *= 2;
  return ks;
}
constexpr int kTiledShapes[4][2] = {{64, 32}, {32, 32}, {64, 16}, {32, 16}};  // (bq, bk), the heuristic's order

// Whether qb rows × D/16 lines of flash accumulators, a V line and a
// broadcast stay in the CPU's registers.
bool flash_acc_fit(const Att& a, const TargetCaps& caps, int qb) {
  return codegen::lines_fit(caps, int(qb * (a.d / 16) + 1), 1);
}

// The naive composition with a kv head's G query heads per work-item (rg).
bool grouped_fits(const Att& a) { return a.d % 16 == 0 && a.h / a.hkv <= 8; }

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  Att a = att_of(p);
  std::vector<Variant> c;
  c.push_back(Variant{}.set("impl", kNaive));
  if (is_cpu(caps) && grouped_fits(a)) c.push_back(Variant{}.set("impl", kNaive).set("rg", a.h / a.hkv));
  if (is_cpu(caps)) {
    if (a.d % 16 == 0) {
      for (int qb : {1, 2, 4, 6})
        for (int kb : {16, 32, 64}) c.push_back(Variant{}.set("impl", kFlashCpu).set("qb", qb).set("kb", kb));
      // Accumulators in L1, walked 2 or 4 lines at a time (D of 96 and more).
      if (a.d >= 96 && (a.d / 16) % 2 == 0)
        for (int qb : {6, 8})
          for (int dc : {2, 4})
            if ((a.d / 16) % dc == 0) c.push_back(Variant{}.set("impl", kFlashCpu).set("qb", qb).set("kb", 64).set("dc", dc));
      // Where qb × D/16 accumulator lines overflow the register file (AVX2's
      // 16 ymm hold 8 lines): walked a line or two at a time.
      if (!flash_acc_fit(a, caps, 4))
        for (int qb : {2, 4, 6})
          for (int kb : {32, 64})
            for (int dc : {1, 2})
              if (a.d / 16 > dc && (a.d / 16) % dc == 0 && !(qb == 6 && dc == 2))
                c.push_back(Variant{}.set("impl", kFlashCpu).set("qb", qb).set("kb", kb).set("dc", dc));
    } else {
      c.push_back(Variant{}.set("impl", kFlashGpu).set("bq", 16).set("bk", 16));
    }
  } else {
    for (int bq : {32, 64})
      for (int bk : {16, 32}) {
        if (uint32_t(bq) > caps.max_workgroup_threads && caps.max_workgroup_threads) continue;
        int64_t k = gpu_bk(a, caps, bk);
        Variant v = Variant{}.set("impl", kFlashGpu).set("bq", bq).set("bk", k);
        if (std::find(c.begin(), c.end(), v) == c.end()) c.push_back(v);
      }
    if (four_per_row(a, caps))
      for (int bq : {16, 32, 64}) {
        if (uint32_t(4 * bq) > caps.max_workgroup_threads && caps.max_workgroup_threads) continue;
        c.push_back(Variant{}.set("impl", kFlashGpu).set("bq", bq).set("bk", gpu_bk(a, caps, 32)).set("tpr", 4));
      }
    for (const auto& [bq, bk] : kTiledShapes)
      for (bool kv1 : {false, true}) {
        // kv1 only where K and V apart do not fit
        if (!tiled_fits(a, caps, bq, bk, kv1) || (kv1 && tiled_fits(a, caps, bq, bk))) continue;
        Variant v = Variant{}.set("impl", kFlashGpu).set("bq", bq).set("bk", bk).set("tile", 1);
        if (kv1) v.set("kv1", 1);
        c.push_back(v);
        for (int ks : {2, 4, 8, 16})  // key splits where the row groups alone leave the GPU idle
          if (tiled_split(a, bq, ks)) c.push_back(Variant(v).set("ks", ks));
      }
  }
  return c;
}

Variant heuristic(const Problem& p, const TargetCaps& caps) {
  Att a = att_of(p);
  if (is_cpu(caps)) {
    // A few query rows (decode): the naive composition. The flash plan first
    // writes Kᵀ (a whole pass over K per call) and pads the rows to blocks
    // of qb. Zen 5, 1 thread, H32/8 D128 (kgen op): S = 1, Skv = 2048 0.79
    // ms against 3.9 (2.0 of them Kᵀ); Skv = 256 0.071 against 0.20; B4
    // Skv 1024 1.66 against 7.7; S = 4, Skv = 2048 2.9 against 3.9 (Skv =
    // 256: 0.28 against 0.20, flash); S = 8 even (5.5 / 5.3).
    // With the G query heads of a kv head in one work-item (rg) where G <= 8,
    // each K and V row is read once for all of them, and its scores sum as
    // trees: S = 1, Skv = 2048 0.72 -> 0.33 ms (B4 Skv 1024 1.70 -> 1.01);
    // with G >= 2 it stays ahead of flash to S = 16 (G = 4, D = 128: S = 8
    // 2.5 against 4.9 ms, 16 5.0 against 7.8 at Skv 2048, even at Skv 256;
    // S = 32 9.95 against 12.3), where G = 1 (S = 16 Skv 1024: 0.44
    // against 0.37) keeps the rule above.
    const bool grouped = grouped_fits(a) && a.h / a.hkv >= 2 && a.s <= 16;
    if (grouped || a.s < 4 || (a.s < 8 && a.skv >= 1024)) {
      Variant v = Variant{}.set("impl", kNaive);
      if (grouped_fits(a)) v.set("rg", a.h / a.hkv);
      return v;
    }
    // Best at B1 H8 S1024 D64: 64-key blocks with 32 zmm; with AVX2's 16 ymm
    // one 16-key score line per query row (kb=16) keeps the live set small
    // (AMD EPYC, 1 and 2 threads, causal or not: 34 ms against 39-42 ms for kb=64).
    // D of 96 and more on 32 zmm: the output accumulators (qb × D/16 lines)
    // in L1, walked 2 lines at a time, 6 rows per work-item. Zen 5, B1 S1024
    // causal, 1 thread: D 128 (H8) 16.9 -> 13.1-13.4 ms, D 256 (H4) 20.8 ->
    // 14.5, D 96 9.7 -> 9.3; D 64 unchanged (6.4), so not there.
    if (a.d % 16 == 0 && a.d >= 96 && (a.d / 16) % 2 == 0 && caps.vector_bits >= 512)
      return Variant{}.set("impl", kFlashCpu).set("qb", 6).set("kb", 64).set("dc", 2);
    // AVX2: 4 rows × D/16 accumulator lines (32 ymm at D = 64) spilled in
    // the P·V key loop; walked one line at a time from L1 they do not, with
    // 32-key blocks. Zen 3, 1 thread, B1 H8 S1024, alternated runs (this VM
    // is noisy: best of each): D 64 84.5 -> 50-53 ms (naive 77), D 128
    // causal 100 -> 52 (naive 106).
    if (a.d % 16 == 0 && !flash_acc_fit(a, caps, 4))
      return Variant{}.set("impl", kFlashCpu).set("qb", 4).set("kb", 32).set("dc", 1);
    if (a.d % 16 == 0) return Variant{}.set("impl", kFlashCpu).set("qb", 4).set("kb", caps.vector_bits >= 512 ? 64 : 16);
    return Variant{}.set("impl", kFlashGpu).set("bq", 16).set("bk", 16);
  }
  // The register tiles, the first shape that fits (kTiledShapes; with K and
  // V through one buffer where apart they do not), keys split by
  // tiled_split_for. H100 against four work-items per row: B1 H8 S1024 D64
  // 0.290 -> 0.161 ms (ks 8: 0.078), S 4096 causal 2.53 -> 1.06; D 128 on
  // 48 KiB: H32 S1024 causal 1.19 -> 0.93 (bq 32, bk 16) -> 0.56 (bq 32, bk
  // 32, kv1), B4 H32/8 S512 1.04 -> 0.77 -> 0.49.
  for (const auto& [bq, bk] : kTiledShapes)
    for (bool kv1 : {false, true})
      if (tiled_fits(a, caps, bq, bk, kv1)) {
        Variant v = Variant{}.set("impl", kFlashGpu).set("bq", bq).set("bk", bk).set("tile", 1);
        if (kv1) v.set("kv1", 1);
        if (int ks = tiled_split_for(a, bq); ks > 1) v.set("ks", ks);
        return v;
      }
  // Four work-items per row where subgroups allow: H200, B1 H8 S1024 D64,
  // 0.565 -> 0.289 ms (causal or not; bq 32: 0.297, 16: 0.322).
  if (four_per_row(a, caps) && (!caps.max_workgroup_threads || caps.max_workgroup_threads >= 256))
    return Variant{}.set("impl", kFlashGpu).set("bq", 64).set("bk", gpu_bk(a, caps, 32)).set("tpr", 4);
  return Variant{}.set("impl", kFlashGpu).set("bq", 64).set("bk", gpu_bk(a, caps, 32));
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  Att a = att_of(p);
  const size_t n_io = 4;
  const int d = int(a.d);
  const ir::Type dt(p.dtype);  // q, k, v (widened to f32 as they are loaded)
  Plan pl;
  switch (v.get("impl")) {
    case kNaive: {
      const bool cpu = is_cpu(caps);
      const int lanes = cpu && a.d % 16 == 0 ? 16 : 1;
      const int64_t skvp = round_up(a.skv, 16);
      auto sc = shape_scalars(a, skvp);
      int t = pl.add_temp(n_io, size_t(a.rows() * skvp) * 4);
      const uint32_t rows = uint32_t(a.rows());
      // rg: the G query heads of a kv head in one work-item (grouped_fits).
      const int rg = int(v.get("rg", 0));
      if (rg && (!cpu || !grouped_fits(a) || rg != a.h / a.hkv))
        throw std::invalid_argument("attention: rg (grouped heads) must be H/Hkv (<= 8), on the CPU with D % 16 == 0: " + v.str());
      const uint32_t groups = uint32_t(a.b * a.hkv * a.s);
      const int dl = rg ? std::max(1, std::min(d / 16, 24 / rg)) : 0;  // pv: G·dl <= 24 accumulators
      Step s1{rg ? attention_scores_grouped_kernel(d, rg, dt) : attention_scores_kernel(d, lanes, cpu ? 1 : 64, dt), {}, {0, 1, t}, sc};
      s1.dims.grid = rows_grid(cpu ? 1u : groups_for(skvp, 64), rg ? groups : rows);
      s1.dims.workgroup = {cpu ? 1u : 64u, 1, 1};
      const int sl = cpu ? 16 : 1;
      Step s2{attention_softmax_kernel(sl, cpu ? 1 : 64, cpu), {}, {t},
              {ir::scalar_slot(int32_t(rows)), ir::scalar_slot(int32_t(skvp))}};
      s2.dims.grid = wrapped_grid(cpu ? rows : groups_for(rows, 64));
      s2.dims.workgroup = {cpu ? 1u : 64u, 1, 1};
      Step s3{rg ? attention_pv_grouped_kernel(d, rg, dl, dt) : attention_pv_kernel(d, lanes, cpu, dt), {}, {t, 2, 3}, sc};
      s3.dims.grid = rows_grid(rg ? groups_for(d / 16, dl) : cpu ? 1u : groups_for(a.d / lanes, 64), rg ? groups : rows);
      s3.dims.workgroup = {cpu ? 1u : 64u, 1, 1};
      pl.steps = {std::move(s1), std::move(s2), std::move(s3)};
      return pl;
    }
    case kFlashCpu: {
      if (a.d % 16) throw std::invalid_argument("attention flash (cpu): D must be a multiple of 16");
      const int qb = int(v.get("qb", 4)), kb = int(v.get("kb", 32)), dc = int(v.get("dc", 0));
      if (qb < 1 || qb > 8 || kb % 16 || kb < 16 || kb > 128)
        throw std::invalid_argument("attention flash (cpu): need 1 <= qb <= 8 and kb in 16..128, a multiple of 16");
      const int64_t skvp = round_up(a.skv, kb);
      auto sc = shape_scalars(a, skvp);
      int t = pl.add_temp(n_io, size_t(a.b * a.hkv * a.d * skvp) * 4);
      Step s1{attention_kt_kernel(d, dt), {}, {1, t}, sc};
      s1.dims.grid = {uint32_t(skvp / 16), uint32_t(a.b * a.hkv), 1};
      pl.steps.push_back(std::move(s1));
      // f16/bf16 V: widened once, as Kᵀ is (the flash kernel reads each V row
      // once per block of qb query rows). Zen 5, B1 H8 S1024 D64 causal bf16,
      // 1 thread: 8.0 ms widening at every read, f32 7.4.
      int vbuf = 2;
      if (dt != ir::Type(ir::ScalarKind::F32)) {
        vbuf = plan_widen(pl, n_io, dt, 2, a.b * a.hkv * a.skv * a.d);
      }
      Step s2{flash_attention_cpu_kernel(d, qb, kb / 16, dt, dc), {}, {0, t, vbuf, 3}, sc};
      s2.dims.grid = {uint32_t(row_groups(a, qb)), 1, 1};
      pl.steps.push_back(std::move(s2));
      return pl;
    }
    case kFlashGpu: {
      const int bq = int(v.get("bq", 64)), bk = int(v.get("bk", 32)), tpr = int(v.get("tpr", 1));
      if (bq < 1 || bk < 1) throw std::invalid_argument("attention flash (gpu): bq, bk must be >= 1");
      if (v.get("tile", 0)) {
        const int ks = int(v.get("ks", 1)), un = int(v.get("un", 4));
        const bool kv1 = v.get("kv1", 0) != 0;
        if (ks < 1 || ks > 16 || !split_indexable(a, ks))
          throw std::invalid_argument("attention flash (gpu, tiled): ks 1..16, with ks·B·H·S·D below 2^31: " + v.str());
        if (tpr != 1 || !tiled_fits(a, caps, bq, bk, kv1))
          throw std::invalid_argument("attention flash (gpu, tiled): needs a GPU with subgroups of a multiple of bk/4 lanes, "
                                      "bq 32 or 64, bk 16 or 32 dividing D, and its tiles (" +
                                      std::to_string(flash_tiled_shared_bytes(d, bq, bk, kv1)) + " B) in shared memory: " + v.str());
        // Split keys: the partial outputs and (max, sum) pairs, then the merge.
        const int po = ks > 1 ? pl.add_temp(n_io, size_t(ks) * size_t(a.rows() * a.d) * 4) : 3;
        const int pml = ks > 1 ? pl.add_temp(n_io, size_t(ks) * size_t(a.rows()) * 8) : -1;
        Step s{flash_attention_gpu_tiled_kernel(d, bq, bk, dt, ks, un, kv1), {}, {0, 1, 2, po}, shape_scalars(a, a.skv)};
        if (ks > 1) s.buffers.push_back(pml);
        s.dims.grid = wrapped_grid(row_groups(a, bq) * ks);
        s.dims.workgroup = {uint32_t(bq / 4 * bk / 4), 1, 1};
        pl.steps = {std::move(s)};
        if (ks > 1) {
          Step m{flash_attention_merge_kernel(d, ks), {}, {po, pml, 3}, {ir::scalar_slot(int32_t(a.rows()))}};
          m.dims.grid = wrapped_grid(groups_for(a.rows() * a.d, 256));
          m.dims.workgroup = {256, 1, 1};
          pl.steps.push_back(std::move(m));
        }
        return pl;
      }
      if (tpr != 1 && (tpr != 4 || !four_per_row(a, caps)))
        throw std::invalid_argument("attention flash (gpu): tpr=4 needs subgroups (of a multiple of 4 lanes) and D % 4 == 0");
      Step s{flash_attention_gpu_kernel(d, bq, bk, tpr, dt), {}, {0, 1, 2, 3}, shape_scalars(a, a.skv)};
      s.dims.grid = wrapped_grid(row_groups(a, bq));
      s.dims.workgroup = {uint32_t(bq * tpr), 1, 1};
      pl.steps = {std::move(s)};
      return pl;
    }
  }
  throw std::invalid_argument("attention: unknown impl " + std::to_string(v.get("impl")));
}

// Plain loops in double.
void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Att a = att_of(p);
  // f32 copies of q, k, v (exact for f16/bf16).
  auto widen = [&](int i, int64_t n) { return fusion::load_all_as_f32(p.dtype, in[size_t(i)], n); };
  const std::vector<float> qw = widen(0, a.rows() * a.d), kw = widen(1, a.b * a.hkv * a.skv * a.d),
                           vw = widen(2, a.b * a.hkv * a.skv * a.d);
  const float *q = qw.data(), *k = kw.data(), *v = vw.data();
  float* o = static_cast<float*>(out[0]);
  const int64_t g = a.h / a.hkv, D = a.d;
  std::vector<double> sc(static_cast<size_t>(a.skv)), acc(static_cast<size_t>(D));
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.h; ++h) {
      const int64_t kvh = b * a.hkv + h / g;
      for (int64_t i = 0; i < a.s; ++i) {
        const float* qi = q + ((b * a.h + h) * a.s + i) * D;
        float* oi = o + ((b * a.h + h) * a.s + i) * D;
        const int64_t nv = a.visible(i);
        double mx = -INFINITY;
        for (int64_t j = 0; j < nv; ++j) {
          const float* kj = k + (kvh * a.skv + j) * D;
          double dot = 0;
          for (int64_t dd = 0; dd < D; ++dd) dot += double(qi[dd]) * kj[dd];
          sc[j] = dot * a.scale;
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < nv; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < nv; ++j) {
          const float* vj = v + (kvh * a.skv + j) * D;
          for (int64_t dd = 0; dd < D; ++dd) acc[dd] += sc[j] * vj[dd];
        }
        for (int64_t dd = 0; dd < D; ++dd) oi[dd] = nv ? float(acc[dd] / sum) : 0.0f;
      }
    }
}

double visible_pairs(const Att& a) {
  double n = 0;
  for (int64_t i = 0; i < a.s; ++i) n += double(a.visible(i));
  return n * double(a.b * a.h);
}

Problem prob(std::vector<int64_t> dims, bool causal, ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = "attention";
  p.dims = std::move(dims);
  p.attrs["causal"] = causal;
  p.dtype = dt;
  return p;
}

}  // namespace

void register_attention_ops() {
  OpDef d;
  d.name = "attention";
  d.attr_defaults = {{"causal", 0}};
  d.description = "scaled dot-product attention, f32 (or f16/bf16 q, k, v; f32 o), grouped-query, optional causal mask (flash or naive)";
  d.dims_help = "B H S D [Hkv [Skv]]";
  d.attrs_help = "causal=0|1 scale_milli=<scale*1000> (default 1/sqrt(D))";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Att a = att_of(p);
    const ir::Type t(p.dtype);
    return std::vector<TensorSpec>{tensor("q", t, {a.b, a.h, a.s, a.d}), tensor("k", t, {a.b, a.hkv, a.skv, a.d}),
                                   tensor("v", t, {a.b, a.hkv, a.skv, a.d})};
  };
  d.outputs = [](const Problem& p) {
    Att a = att_of(p);
    return std::vector<TensorSpec>{tensor("o", ir::types::F32, {a.b, a.h, a.s, a.d})};
  };
  d.candidates = candidates;
  d.heuristic = heuristic;
  d.plan = plan;
  d.reference = reference;
  // Scores sum D products, outputs average up to Skv rows: errors of a few
  // ulp per term, growing like sqrt of the term counts.
  d.tolerance = [](const Problem& p) {
    Att a = att_of(p);
    return 2e-5 * std::max(1.0, std::sqrt(double(a.d) * double(a.skv)) / 16.0);
  };
  d.flops = [](const Problem& p) {
    Att a = att_of(p);
    return 4.0 * visible_pairs(a) * double(a.d);
  };
  d.bytes = [](const Problem& p) {
    Att a = att_of(p);
    const double eb = ir::Type(p.dtype).bytes();  // q, k, v; o is f32
    return double(a.d) * ((eb + 4.0) * double(a.rows()) + 2.0 * eb * double(a.b * a.hkv * a.skv));
  };
  d.test_problems = {
      prob({1, 1, 1, 16}, false),           // one query, one key
      prob({2, 2, 17, 16}, true),           // odd S, B = 2, causal
      prob({2, 2, 17, 16}, false),
      prob({1, 8, 33, 64, 2, 47}, true),    // GQA 8/2, Skv != S, ragged blocks
      prob({1, 8, 33, 64, 2, 47}, false),
      prob({1, 2, 20, 80, 1, 31}, false),   // D = 80 (5 lines)
      prob({1, 4, 37, 128, 2, 45}, true),   // D = 128: accumulators in L1 (dc), 6-row groups past S
      prob({1, 2, 40, 16, 2, 24}, true),    // S > Skv causal: first rows see nothing
      prob({1, 2, 19, 24, 2, 21}, true),    // D % 16 != 0: the generic flash kernel
      // bf16 / f16 q, k, v: decode over a GQA cache (grouped naive), prefill (flash), D % 16 != 0
      prob({2, 8, 1, 64, 2, 77}, true, ir::ScalarKind::BF16), prob({1, 8, 33, 64, 2, 47}, true, ir::ScalarKind::BF16),
      prob({1, 2, 19, 24, 2, 21}, false, ir::ScalarKind::F16),
  };
  d.bench_problems = {prob({1, 8, 1024, 64}, false), prob({1, 8, 1024, 64}, true), prob({1, 8, 1024, 128}, true)};
  register_op(std::move(d));
}

}  // namespace kgen::ops
