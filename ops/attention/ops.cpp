// The "attention" op: problem, variant space, plans and C++ reference for the
// kernels of ops/attention/kernels.cpp.
//
// dims "B H S D [Hkv [Skv]]" (Hkv defaults to H, Skv to S); attrs causal=0|1,
// scale_milli (scale = scale_milli / 1000; default 1/sqrt(D)).
// Variants: impl=0 naive (three kernels through a score temporary),
// impl=1 flash for the CPU (qb query rows per work-item, kb keys per block;
// D % 16 == 0), impl=2 flash for GPUs (bq rows per workgroup, bk keys per
// shared-memory block; any D, also runs on the CPU), impl=3 flash for the
// CPU on GEMM register tiles (mr × 16·nl, qt tiles per work-item, kb keys per
// block; any D), impl=4 split-key decode for the CPU (a kv head's G·S query
// rows per work-item over chunks of kc keys, then a combine; any D). The
// choice among them:
// ops/attention/strategy.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "ops/attention/attention.h"
#include "ops/attention/kv_attention.h"
#include "ops/attention/problem.h"
#include "ops/attention/rope.h"
#include "ops/attention/strategy.h"
#include "ops/common/widen.h"
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"

namespace kgen::ops {

namespace {

using namespace attention_detail;

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
    // Register tiles (any D): the matmul's block for this register file, 1
    // to 4 tiles per work-item, 32- to 128-key blocks.
    // Split-key decode where a kv head's query rows fit one work-item.
    if (decode_fits(a, caps))
      for (int kc : {64, 256, 1024}) c.push_back(Variant{}.set("impl", kDecode).set("kc", kc));
    if (tiles_fit(a, caps)) {
      const auto [mr, nl] = tiles_block(a, caps);
      for (auto [qt, kb] : {std::pair{1, 64}, {2, 32}, {2, 64}, {2, 128}, {4, 64}})
        if (kb % (16 * nl) == 0) c.push_back(Variant{}.set("impl", kFlashTiles).set("mr", mr).set("nl", nl).set("kb", kb).set("qt", qt));
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
      // once per block of qb query rows, so widening at every read costs more
      // than the extra pass).
      int vbuf = 2;
      if (dt != ir::Type(ir::ScalarKind::F32)) {
        vbuf = plan_widen(pl, n_io, dt, 2, a.b * a.hkv * a.skv * a.d);
      }
      Step s2{flash_attention_cpu_kernel(d, qb, kb / 16, dt, dc), {}, {0, t, vbuf, 3}, sc};
      s2.dims.grid = {uint32_t(row_groups(a, qb)), 1, 1};
      pl.steps.push_back(std::move(s2));
      return pl;
    }
    case kFlashTiles: {
      if (!tiles_fit(a, caps)) throw std::invalid_argument("attention flash (cpu tiles): a CPU form (f32x16 lines)");
      const auto [mr0, nl0] = tiles_block(a, caps);
      const int mr = int(v.get("mr", mr0)), nl = int(v.get("nl", nl0)), kb = int(v.get("kb", tiles_keys(nl))),
                qt = int(v.get("qt", 1));
      const int64_t skvp = round_up(a.skv, kb);
      auto sc = shape_scalars(a, skvp);
      // K as packed panels of 16 keys (f32), written once per call and read
      // by every tile; f16/bf16 V widened once, as K is, and V's rows padded
      // to whole lines where D is not.
      int kp = pl.add_temp(n_io, size_t(a.b * a.hkv * a.d * skvp) * 4);
      Step s1{attention_kpanel_kernel(d, dt), {}, {1, kp}, sc};
      s1.dims.grid = {uint32_t(skvp / 16), uint32_t(a.b * a.hkv), 1};
      pl.steps.push_back(std::move(s1));
      int vbuf = 2;
      const int64_t kv_rows = a.b * a.hkv * a.skv;
      if (a.d % 16) {
        vbuf = pl.add_temp(n_io, size_t(kv_rows * d_lines(a) * 16) * 4);
        Step sv{attention_vpad_kernel(d, dt), {}, {2, vbuf}, {}};
        sv.dims.grid = {uint32_t(kv_rows), 1, 1};
        pl.steps.push_back(std::move(sv));
      } else if (dt != ir::Type(ir::ScalarKind::F32)) {
        vbuf = plan_widen(pl, n_io, dt, 2, kv_rows * a.d);
      }
      Step s2{flash_attention_tiles_kernel(d, mr, nl, kb, qt, dt), {}, {0, kp, vbuf, 3}, sc};
      s2.dims.grid = {uint32_t(row_groups(a, mr * qt)), 1, 1};
      pl.steps.push_back(std::move(s2));
      return pl;
    }
    case kDecode: {
      const int kc = int(v.get("kc", 256));
      if (!decode_fits(a, caps) || kc < 16 || kc % 16)
        throw std::invalid_argument("attention decode: a CPU form for H/Hkv·S <= " + std::to_string(kDecodeMaxRows) +
                                    " query rows per kv head, kc a multiple of 16: " + v.str());
      const int r = int(a.h / a.hkv * a.s);
      const int64_t nch = decode_chunks(a, kc), items = a.b * a.hkv * nch;
      auto sc = shape_scalars(a, a.skv);
      // Lines of one vector register (8 lanes on AVX2, 16 on AVX-512).
      const int w = caps.vector_bits >= 512 ? 16 : 8;
      // Each chunk's rows: ceil(D/w) lines of outputs and a (max, sum) pair.
      const int po = pl.add_temp(n_io, size_t(items * r * ((a.d + w - 1) / w) * w) * 4);
      const int pml = pl.add_temp(n_io, size_t(items * r * 2) * 4);
      Step s1{attention_decode_kernel(d, r, kc, w, dt), {}, {0, 1, 2, po, pml}, sc};
      s1.dims.grid = {uint32_t(nch), uint32_t(a.b * a.hkv), 1};
      sc.push_back(ir::scalar_slot(int32_t(nch)));
      Step s2{attention_decode_combine_kernel(d, r, w), {}, {po, pml, 3}, sc};
      s2.dims.grid = wrapped_grid(a.rows());
      pl.steps = {std::move(s1), std::move(s2)};
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
  d.heuristic = attention_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {kNaive, kFlashCpu, kFlashGpu, kFlashTiles, kDecode},
              "0 naive (scores, softmax, P·V), 1 flash for the CPU, 2 flash for GPUs, 3 flash for the CPU on GEMM register tiles, "
              "4 split-key decode for the CPU"),
      key_set("kc", "key_chunk", {64, 128, 256, 512, 1024}, "CPU decode: keys per work-item (chunks then combined)"),
      key_range("rg", "grouped_heads", 1, 8, "naive on the CPU: the H/Hkv query heads of a kv head in one work-item"),
      key_range("qb", "query_rows", 1, 8, "CPU flash: query rows per work-item"),
      key_set("kb", "key_block", {16, 32, 48, 64, 80, 96, 112, 128}, "CPU flash: keys per block (16-key lines)"),
      key_range("mr", "tile_rows", 1, 16, "CPU tiles: query rows per register tile"),
      key_set("nl", "tile_lines", {1, 2, 3, 4}, "CPU tiles: f32x16 lines per register tile row (keys in scores, D in P·V)"),
      key_range("qt", "row_tiles", 1, 8, "CPU tiles: register tiles of mr rows per work-item, each key block serving them all"),
      key_range("dc", "acc_lines_chunk", 0, 16, "CPU flash: 0 accumulators in registers, else lines of D walked at a time from L1"),
      key_range("bq", "block_rows", 1, 1024, "GPU flash: query rows per workgroup"),
      key_range("bk", "block_keys", 1, 1024, "GPU flash: keys per shared-memory block"),
      key_set("tpr", "items_per_row", {1, 4}, "GPU flash: work-items per query row (4: subgroup shuffles)"),
      key_set("tile", "register_tiles", {0, 1}, "GPU flash: 4×4 register tiles (scores and P·V as small GEMMs)"),
      key_set("kv1", "kv_one_buffer", {0, 1}, "GPU tiled: K and V staged in turn through one shared buffer"),
      key_range("ks", "key_splits", 1, 16, "GPU tiled: key ranges split over workgroups, then merged"),
      key_set("un", "unroll", {4, 8, 16}, "GPU tiled: steps per pass of the product loops"),
  };
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
  d.bench_problems = {prob({1, 8, 1024, 64}, false),       prob({1, 8, 1024, 64}, true),      prob({1, 8, 1024, 128}, true),
                      prob({1, 32, 1024, 128}, true),      prob({1, 32, 512, 128, 8}, true),  // 7B-class prefill, GQA prefill
                      prob({8, 12, 128, 64}, false)};      // BERT-base batch
  register_op(std::move(d));
  register_rope_op();
  register_kv_attention_op();
}

}  // namespace kgen::ops
