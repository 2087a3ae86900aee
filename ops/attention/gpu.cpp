// The GPU flash attention kernels (ops/attention/attention.h): a row per work-item (or
// four) with the online softmax folded key by key, and the register-tiled
// form that scores and accumulates 4×4 blocks as small GEMMs.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/attention/attention.h"
#include "ops/attention/params.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace attention_detail;

// GPU flash attention: bq query rows per workgroup, `tpr` work-items per row
// (1, or 4 with subgroups). Each key block of bk keys is staged (K and V,
// bk × D each) in shared memory by the whole group, then every row folds its
// visible keys into its running max, sum and D accumulators (registers). The
// block loop's bound is uniform (the group's last row), as the barriers
// require. tpr = 1: per-row masking is a branch. tpr = 4: a row's work-items
// hold D/4 of its q and accumulators each (dimensions part, part + 4, ...:
// neighbouring words, no bank conflicts), add their partial scores through
// two subgroup shuffles, and walk every key of the block with masked keys
// folded as no-ops (a shuffle needs its whole subgroup): 4x the work-items,
// where one per row left an H200 with 2 warps per SM at B1 H8 S1024.
ir::Kernel flash_attention_gpu_kernel(int d, int bq, int bk, int tpr, ir::Type dt) {
  if (tpr != 1 && (tpr != 4 || d % 4)) throw std::invalid_argument("flash attention (gpu): tpr 1, or 4 with D % 4 == 0");
  return kernel("flash_attention_gpu_d" + std::to_string(d) + "_bq" + std::to_string(bq) + "_bk" + std::to_string(bk) +
                    (tpr > 1 ? "_tpr" + std::to_string(tpr) : "") + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto q = kb.input("q", dt);
    auto k = kb.input("k", dt);
    auto v = kb.input("v", dt);
    auto o = kb.output("o", f32);
    Shape p = shape_params(kb);
    kb.workgroup(uint32_t(bq * tpr));
    auto ks = shared_array(f32, int64_t(bk) * d);
    auto vs = shared_array(f32, int64_t(bk) * d);
    const int dp = d / tpr;  // dimensions per work-item
    Value t = cast(i32, local_id(0));
    Value row = t / tpr, part = t % tpr;
    Value nqb = (p.s + (bq - 1)) / bq;
    Value gid = wrapped_group(0, p.rows / p.s * nqb);
    Value bh = gid / nqb, i0 = (gid % nqb) * bq;
    Value b = bh / p.h, hh = bh % p.h;
    Value kvh = b * (p.h / p.g) + hh / p.g;
    Value i = min(i0 + row, p.s - 1);
    Value lim = min(i + p.shift, p.skv - 1);
    Value last = min(i0 + (bq - 1), p.s - 1);
    Value last_lim = min(last + p.shift, p.skv - 1);
    Value nend = (max(last_lim + 1, 0) + (bk - 1)) / bk;
    Value qb = (bh * p.s + i) * d;
    auto dim = [&](int ii) { return tpr == 1 ? Value(constant(i32, ii)) : part + tpr * ii; };
    std::vector<Value> qv;
    for (int ii = 0; ii < dp; ++ii) qv.push_back(as_f32(q[qb + dim(ii)]) * p.scale);
    std::vector<Var> acc;
    for (int ii = 0; ii < dp; ++ii) acc.push_back(var(constant(f32, 0.0f)));
    Var m = var(constant(f32, kMasked));
    Var l = var(constant(f32, 0.0f));
    for_range(0, nend, [&](Value jb) {
      Value j0 = jb * bk;
      for_range(t, bk * d, [&](Value idx) {
        Value kk = idx / d, dd = idx % d;
        Value j = j0 + kk;
        Value src = (kvh * p.skv + min(j, p.skv - 1)) * d + dd;  // clamped: always in bounds
        ks[idx] = as_f32(k[src]);
        vs[idx] = as_f32(v[src]);
      }, bq * tpr);
      barrier();
      auto fold = [&](const Value& kk, const Value& visible) {
        Value sb = kk * d;
        Value s = constant(f32, 0.0f);
        for (int ii = 0; ii < dp; ++ii) s = fma(qv[ii], ks[sb + dim(ii)], s);
        if (tpr == 4) {
          Value lane = subgroup_lane();
          s = s + subgroup_shuffle(s, lane ^ 1u);
          s = s + subgroup_shuffle(s, lane ^ 2u);
        }
        Value mnew = max(m, s);
        Value alpha = exp(m - mnew);
        Value pj = exp(s - mnew);
        if (visible.valid()) {  // a masked key changes nothing
          mnew = select(visible, mnew, m.get());
          alpha = select(visible, alpha, constant(f32, 1.0f));
          pj = select(visible, pj, constant(f32, 0.0f));
        }
        m = mnew;
        l = fma(l, alpha, pj);
        for (int ii = 0; ii < dp; ++ii) acc[ii] = fma(pj, vs[sb + dim(ii)], acc[ii] * alpha);
      };
      if (tpr == 1) {
        Value kend = min(lim - j0 + 1, bk);  // keys of this block visible to the row
        for_range(0, kend, [&](Value kk) { fold(kk, Value()); });
      } else {
        Value kend = min(last_lim - j0 + 1, bk);  // uniform: the group's last row
        for_range(0, kend, [&](Value kk) { fold(kk, j0 + kk <= lim); });
      }
      barrier();
    });
    Value tot = l.get();
    Value inv = select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f));
    if_(i0 + row < p.s, [&] {
      Value ob = (bh * p.s + i0 + row) * d;
      for (int ii = 0; ii < dp; ++ii) o[ob + dim(ii)] = acc[ii] * inv;
    });
  });
}

// The register-tiled GPU flash kernel. Each work-item owns a 4×4 block of a
// key block's scores (4 query rows × 4 keys) and the same 4 rows × D/(bk/4)
// columns of the output, so both products run as small GEMMs over f32x4
// lines staged in shared memory: per step 2 (scores) or 1 + D/bk (P·V) line
// reads feed 16 or 16·D/bk FMAs, where the row-per-work-item kernel reads
// a word per FMA. A row's bk scores are spread over bk/4 neighbouring lanes:
// its max and sum meet through subgroup shuffles, the accumulators are
// rescaled once per block, and each score costs one exp.
//
// Shared memory: Q (scaled, D rows of bq/4 lines + 1 pad line, staged once),
// the key block's K (D rows of bk/4 lines + 1) and V (bk rows of D/4 lines),
// P (bk rows of bq/4 lines). The pad line makes the staging stores (D
// fastest across work-items) fall on different banks. kv1: K and V take
// turns in one buffer (V staged after the scores, one more barrier per
// block), so that D 128 fits 48 KiB with 64 work-items.
uint32_t flash_tiled_shared_bytes(int d, int bq, int bk, bool kv1) {
  const int kb = d * (bk / 4 + 1), vb = bk * (d / 4);
  return uint32_t(16 * (d * (bq / 4 + 1) + (kv1 ? std::max(kb, vb) : kb + vb) + bk * (bq / 4)));
}

ir::Kernel flash_attention_gpu_tiled_kernel(int d, int bq, int bk, ir::Type dt, int splits, int unroll, bool kv1) {
  if ((bq != 32 && bq != 64) || (bk != 16 && bk != 32) || d % bk || splits < 1 || splits > 16 || (unroll != 4 && unroll != 8 && unroll != 16))
    throw std::invalid_argument("flash attention (gpu, tiled): bq 32 or 64, bk 16 or 32, D a multiple of bk, ks 1..16, un 4, 8 or 16");
  const int TR = bq / 4, TC = bk / 4, NT = TR * TC;  // row groups, key groups, work-items
  const int LQ = TR + 1, LK = TC + 1, LV = d / 4;     // lines per row of the staged tiles
  const int NJ = d / bk;                              // output lines per row and work-item
  const int ud = std::min(unroll, d), uk = std::min(unroll, bk);  // steps per pass of the product loops
  return kernel("flash_attention_gpu_tiled_d" + std::to_string(d) + "_bq" + std::to_string(bq) + "_bk" +
                    std::to_string(bk) + (splits > 1 ? "_ks" + std::to_string(splits) : "") + "_u" + std::to_string(unroll) + (kv1 ? "_kv1" : "") + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto q = kb.input("q", dt);
    auto k = kb.input("k", dt);
    auto v = kb.input("v", dt);
    // Split keys (splits > 1): the unnormalised outputs and each row's (max, sum)
    // per split, for flash_attention_merge_kernel.
    auto o = kb.output(splits > 1 ? "po" : "o", f32);
    auto pml = splits > 1 ? kb.output("pml", f32) : o;
    Shape p = shape_params(kb);
    kb.workgroup(uint32_t(NT));
    const ir::Type L4 = line(f32, 4);
    auto qs = shared_array(L4, int64_t(d) * LQ);
    auto ks = shared_array(L4, kv1 ? std::max<int64_t>(int64_t(d) * LK, int64_t(bk) * LV) : int64_t(d) * LK);
    auto vs = kv1 ? ks : shared_array(L4, int64_t(bk) * LV);
    auto ps = shared_array(L4, int64_t(bk) * TR);
    Value t = cast(i32, local_id(0));
    Value tc = t % TC, tr = t / TC;  // key group (neighbouring lanes), row group
    Value lane = subgroup_lane();
    Value nqb = (p.s + (bq - 1)) / bq;
    Value gsplit = wrapped_group(0, p.rows / p.s * nqb * splits);
    Value gid = gsplit / splits, split = gsplit % splits;
    Value bh = gid / nqb, i0 = (gid % nqb) * bq;
    Value b = bh / p.h, hh = bh % p.h;
    Value kvh = b * (p.h / p.g) + hh / p.g;
    Value last = min(i0 + (bq - 1), p.s - 1);
    Value last_lim = min(last + p.shift, p.skv - 1);
    Value nend = (max(last_lim + 1, 0) + (bk - 1)) / bk;  // key blocks any row of the group sees
    Value per = (nend + (splits - 1)) / splits;                   // this split's share of them
    Value jb_begin = min(split * per, nend), jb_end = min(jb_begin + per, nend);
    // Q, scaled: line (dd, rl) holds rows i0 + 4·rl + 0..3 at dimension dd
    // (rows past S clamped to the last: computed, never stored).
    for_range(t, d * TR, [&](Value idx) {
      Value dd = idx % d, rl = idx / d;
      std::vector<Value> l4;
      for (int a = 0; a < 4; ++a) l4.push_back(as_f32(q[(bh * p.s + min(i0 + rl * 4 + a, p.s - 1)) * d + dd]) * p.scale);
      qs[dd * LQ + rl] = make_line(l4);
    }, NT);
    std::vector<Value> lim;  // last key visible to each of the work-item's rows
    for (int a = 0; a < 4; ++a) lim.push_back(min(i0 + tr * 4 + a + p.shift, p.skv - 1));
    std::vector<Var> m, l, acc;  // per row: running max, this work-item's part of the sum; 4 × 4·NJ outputs
    for (int a = 0; a < 4; ++a) {
      m.push_back(var(constant(f32, kMasked)));
      l.push_back(var(constant(f32, 0.0f)));
    }
    for (int i = 0; i < 16 * NJ; ++i) acc.push_back(var(constant(f32, 0.0f)));
    auto butterfly = [&](Value x, bool is_max) {  // over the row's TC lanes: every lane gets the same value
      for (int w = 1; w < TC; w *= 2) {
        Value y = subgroup_shuffle(x, lane ^ uint32_t(w));
        x = is_max ? max(x, y) : x + y;
      }
      return x;
    };
    for_range(jb_begin, jb_end, [&](Value jb) {
      Value j0 = jb * bk;
      // K: line (dd, kl) holds keys j0 + 4·kl + 0..3 at dd; V: line (key, dl)
      // dimensions 4·dl + 0..3 of one key. Keys past Skv are clamped (in
      // bounds) and masked below.
      for_range(t, d * TC, [&](Value idx) {
        Value dd = idx % d, kl = idx / d;
        std::vector<Value> l4;
        for (int c = 0; c < 4; ++c) l4.push_back(as_f32(k[(kvh * p.skv + min(j0 + kl * 4 + c, p.skv - 1)) * d + dd]));
        ks[dd * LK + kl] = make_line(l4);
      }, NT);
      auto stage_v = [&] {
        for_range(t, bk * LV, [&](Value idx) {
          Value key = idx / LV, dl = idx % LV;
          Value src = (kvh * p.skv + min(j0 + key, p.skv - 1)) * d + dl * 4;
          std::vector<Value> l4;
          for (int c = 0; c < 4; ++c) l4.push_back(as_f32(v[src + c]));
          vs[idx] = make_line(l4);
        }, NT);
      };
      if (!kv1) stage_v();
      barrier();
      std::vector<Var> s;
      for (int i = 0; i < 16; ++i) s.push_back(var(constant(f32, 0.0f)));
      // Runtime loops of `unroll` steps: fully unrolled, D 64 took lavapipe
      // 8 s to compile.
      for_range(0, d, [&](Value d0) {
        for (int u = 0; u < ud; ++u) {
          Value dd = d0 + u;
          Value ql = qs[tr + dd * LQ], kl = ks[tc + dd * LK];
          for (int a = 0; a < 4; ++a)
            for (int c = 0; c < 4; ++c) s[a * 4 + c] = fma(ql.lane(a), kl.lane(c), s[a * 4 + c].get());
        }
      }, ud);
      std::vector<std::vector<Value>> pr(4);  // P by row
      for (int a = 0; a < 4; ++a) {
        std::vector<Value> vis, sv;
        Value mx = m[a].get();
        for (int c = 0; c < 4; ++c) {
          vis.push_back(j0 + tc * 4 + c <= lim[a]);
          sv.push_back(select(vis[c], s[a * 4 + c].get(), constant(f32, kMasked)));
          mx = max(mx, sv[c]);
        }
        mx = butterfly(mx, true);
        Value alpha = exp(m[a].get() - mx);
        Value sum = constant(f32, 0.0f);
        for (int c = 0; c < 4; ++c) {
          pr[a].push_back(select(vis[c], exp(sv[c] - mx), constant(f32, 0.0f)));
          sum = sum + pr[a][c];
        }
        l[a] = fma(l[a].get(), alpha, sum);
        m[a] = mx;
        for (int i = 0; i < 4 * NJ; ++i) acc[a * 4 * NJ + i] = acc[a * 4 * NJ + i].get() * alpha;
      }
      for (int c = 0; c < 4; ++c) ps[(tc * 4 + c) * TR + tr] = make_line({pr[0][c], pr[1][c], pr[2][c], pr[3][c]});
      if (kv1) {  // every score is read out of the buffer: V replaces K
        barrier();
        stage_v();
      }
      barrier();
      for_range(0, bk, [&](Value k0) {
        for (int u = 0; u < uk; ++u) {
          Value key = k0 + u;
          Value pl = ps[tr + key * TR];
          for (int j = 0; j < NJ; ++j) {
            Value vl = vs[tc + (key * LV + TC * j)];
            for (int a = 0; a < 4; ++a)
              for (int c = 0; c < 4; ++c) {
                Var& x = acc[a * 4 * NJ + j * 4 + c];
                x = fma(pl.lane(a), vl.lane(c), x.get());
              }
          }
        }
      }, uk);
      barrier();
    });
    for (int a = 0; a < 4; ++a) {
      Value tot = butterfly(l[a].get(), false);
      Value row = i0 + tr * 4 + a;
      if (splits > 1) {
        if_(row < p.s, [&] {
          Value prow = split * p.rows + bh * p.s + row;
          for (int j = 0; j < NJ; ++j)
            for (int c = 0; c < 4; ++c) o[prow * d + (tc + TC * j) * 4 + c] = acc[a * 4 * NJ + j * 4 + c].get();
          if_(tc == 0, [&] {
            pml[prow * 2] = m[a].get();
            pml[prow * 2 + 1] = tot;
          });
        });
        continue;
      }
      Value inv = select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f));
      if_(row < p.s, [&] {
        Value ob = (bh * p.s + row) * d;
        for (int j = 0; j < NJ; ++j)
          for (int c = 0; c < 4; ++c) o[ob + (tc + TC * j) * 4 + c] = acc[a * 4 * NJ + j * 4 + c].get() * inv;
      });
    }
  });
}


// o[row, c] from ks splits' unnormalised outputs and (max, sum) pairs:
// rescaled to their common max and divided by the total sum (0 for a row
// that saw no key). One work-item per output value, on wrapped_grid.
ir::Kernel flash_attention_merge_kernel(int d, int ks) {
  return kernel("flash_attention_merge_d" + std::to_string(d) + "_ks" + std::to_string(ks), [&](KernelBuilder& kb) {
    auto po = kb.input("po", f32);
    auto pml = kb.input("pml", f32);
    auto o = kb.output("o", f32);
    auto rows = kb.scalar("rows", i32);
    kb.workgroup(256);
    Value e = cast(i32, wrapped_group_id() * 256u + local_id(0));
    if_(e < rows * d, [&] {
      Value row = e / d;
      Value mx = constant(f32, kMasked);
      for (int s = 0; s < ks; ++s) mx = max(mx, pml[(row + s * rows) * 2]);
      Value sum = constant(f32, 0.0f), acc = constant(f32, 0.0f);
      for (int s = 0; s < ks; ++s) {
        Value w = exp(pml[(row + s * rows) * 2] - mx);
        sum = fma(pml[(row + s * rows) * 2 + 1], w, sum);
        acc = fma(po[e + s * rows * d], w, acc);
      }
      o[e] = select(sum > 0.0f, acc / sum, constant(f32, 0.0f));
    });
  });
}

}  // namespace kgen::ops
