// The kv_attention kernels (see ops/attention/kv_attention.h). Only the head
// size D and the tile parameters are baked in; T, H, G, C, the scale and the
// position (read from its buffer) come at run time. Indices are i32, but for
// the CPU kernel's cache lines (i64, see key_line).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/attention/kv_attention.h"
#include "ops/attention/params.h"
#include "ops/common/fast_exp.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace attention_detail;

namespace {

struct KvParams {
  Value t, h, g, c, scale, rows;
};
// Declared in kv_scalars' order.
KvParams kv_params(KernelBuilder& kb) {
  KvParams p;
  p.t = kb.scalar("t", i32);
  p.h = kb.scalar("h", i32);
  p.g = kb.scalar("g", i32);
  p.c = kb.scalar("c", i32);
  p.scale = kb.scalar("scale", f32);
  p.rows = kb.scalar("rows", i32);
  return p;
}

ir::Type lines_of(int lanes) { return lanes == 1 ? f32 : line(f32, lanes); }
Value zeros(int lanes) { return lanes == 1 ? Value(constant(f32, 0.0f)) : splat(constant(f32, 0.0f), lanes); }
Value bcast(const Value& x, int lanes) { return lanes == 1 ? x : splat(x, lanes); }

// A query row's kv head and visible keys: rows 0 .. pos + t of the cache,
// clamped to [0, C] (a position past the caller's contract never reaches
// beyond the cache).
struct RowKeys {
  Value kv_row0;  // cache row of key 0 of the row's kv head: kvh·C
  Value n;        // visible keys
};
RowKeys row_keys(const KvParams& p, const Value& row, const Value& pos) {
  Value t = row / p.h, hh = row % p.h;
  return {(hh / p.g) * p.c, min(max(pos + t + 1, 0), p.c)};
}

}  // namespace

ir::Kernel kv_cache_write_kernel(int d, int lanes, bool per_row, int wg) {
  if (lanes < 1 || d % lanes) throw std::invalid_argument("kv cache write: D must be a multiple of lanes");
  const int nd = d / lanes;
  return kernel("kv_cache_write_d" + std::to_string(d) + "_l" + std::to_string(lanes) + (per_row ? "_row" : "_w" + std::to_string(wg)),
                [&](KernelBuilder& kb) {
    auto kn = kb.input("k_new", lines_of(lanes));
    auto vn = kb.input("v_new", lines_of(lanes));
    auto posb = kb.input("pos", i32);
    auto kc = kb.output("k_cache", lines_of(lanes));
    auto vc = kb.output("v_cache", lines_of(lanes));
    KvParams p = kv_params(kb);
    kb.workgroup(per_row ? 1u : uint32_t(wg));
    Value hkv = p.h / p.g;
    // Source row r = t·Hkv + g goes to cache row (g·C + pos + t), if inside the cache.
    auto copy = [&](const Value& r, const Value& c0, const Value& c1) {
      Value t = r / hkv, g = r % hkv;
      Value crow = posb[0] + t;
      if_(crow >= 0 && crow < p.c, [&] {
        Value dst = (g * p.c + crow) * nd, src = r * nd;
        for_range(c0, c1, [&](Value c) {
          kc[dst + c] = kn[src + c];
          vc[dst + c] = vn[src + c];
        });
      });
    };
    if (per_row) {
      copy(wrapped_group(0, p.t * hkv), constant(i32, 0), constant(i32, nd));
    } else {
      Value e = cast(i32, wrapped_group_id() * uint32_t(wg) + local_id(0));
      if_(e < p.t * hkv * nd, [&] { copy(e / nd, e % nd, e % nd + 1); });
    }
  });
}

ir::Kernel kv_attention_cpu_kernel(int d, int lanes, int kb, int rg) {
  if (lanes < 1 || d % lanes) throw std::invalid_argument("kv_attention (cpu): D must be a multiple of lanes");
  if (kb != 8 && kb != 16) throw std::invalid_argument("kv_attention (cpu): kb must be 8 or 16");
  if (rg < 1 || rg > 8) throw std::invalid_argument("kv_attention (cpu): rg must be in 1..8");
  const int nd = d / lanes;
  // Scores as kb / w lines of w lanes: lines of `lanes` dot products reduce
  // `lanes` at a time into one (tree_add_lanes); narrower ones one by one.
  const int w = lanes >= 4 ? std::min(lanes, kb) : kb, ns = kb / w;
  const ir::Type lt = lines_of(lanes);
  return kernel("kv_attention_cpu_d" + std::to_string(d) + "_l" + std::to_string(lanes) + "_kb" + std::to_string(kb) +
                    "_r" + std::to_string(rg),
                [&](KernelBuilder& kbld) {
    auto q = kbld.input("q", lt);
    auto k = kbld.input("k_cache", lt);
    auto v = kbld.input("v_cache", lt);
    auto posb = kbld.input("pos", i32);
    auto o = kbld.output("o", lt);
    KvParams p = kv_params(kbld);
    kbld.workgroup(1);
    // Stack arrays: the output accumulators, a block's unreduced dot
    // products and its probabilities, row by row. Runtime loops over them
    // keep clang from interleaving the unrolled products into more live
    // lines than the registers hold.
    auto acc = shared_array(lt, int64_t(rg) * nd);
    auto dots = shared_array(lt, int64_t(rg) * kb);
    auto pbuf = shared_array(f32, int64_t(rg) * kb);
    // Rows row0 .. row0 + rg - 1: one token, rg heads of one kv head (rg divides G).
    Value row0 = wrapped_group(0, p.rows / rg) * rg;
    RowKeys rk = row_keys(p, row0, posb[0]);
    Value q0 = cast(i64, row0) * nd;  // the rg query rows are consecutive
    std::vector<Var> m, lsum;  // per row: running max, per-lane running sums
    for (int r = 0; r < rg; ++r) {
      m.push_back(var(constant(f32, kMasked)));
      lsum.push_back(var(splat(constant(f32, 0.0f), w)));
    }
    for_range(0, rg * nd, [&](Value i) { acc[i] = zeros(lanes); });
    // Cache row of key j, as the i64 index of its first line: its lines then
    // sit at constant offsets (i32 sums may wrap, which keeps clang from
    // folding them into the addresses).
    auto key_line = [&](const Value& j) { return cast(i64, rk.kv_row0 + j) * nd; };

    // Keys j0 .. j0 + kb - 1; masked: the block crossing n (its keys past n
    // re-read key n - 1, in bounds, and weigh 0).
    auto block = [&](const Value& j0, bool masked) {
      auto key = [&](const Value& i) { return masked ? min(j0 + i, rk.n - 1) : j0 + i; };
      // Dot products, key by key: each K line loaded once for the rg rows.
      for_range(0, kb, [&](Value i) {
        Value kr = key_line(key(i));
        // The K and V rows one block ahead, a cache line at a time: the
        // hardware's stream prefetch alone left decode waiting on memory.
        Value ahead = kr + int64_t(kb) * nd;
        for (int c = 0; c < nd; c += std::max(1, 16 / lanes)) {
          k[ahead + c].prefetch();
          v[ahead + c].prefetch();
        }
        std::vector<Value> a(static_cast<size_t>(rg));
        for (int c = 0; c < nd; ++c) {
          Value kl = k[kr + c];
          for (int r = 0; r < rg; ++r) {
            Value ql = q[q0 + (r * nd + c)];
            a[size_t(r)] = c ? fma(ql, kl, a[size_t(r)]) : ql * kl;
          }
        }
        for (int r = 0; r < rg; ++r) dots[i + r * kb] = a[size_t(r)];
      });
      std::vector<Value> valid(static_cast<size_t>(ns));
      if (masked)
        for (int l = 0; l < ns; ++l) valid[size_t(l)] = lane_index(w) + splat(j0 + l * w, w) < splat(rk.n, w);
      std::vector<Value> alpha;
      Value scale = splat(p.scale, w);
      for (int r = 0; r < rg; ++r) {
        std::vector<Value> dr, s;
        for (int i = 0; i < kb; ++i) dr.push_back(dots[r * kb + i]);
        if (w == lanes) {
          for (int l = 0; l < ns; ++l) s.push_back(tree_add_lanes(std::vector<Value>(dr.begin() + l * w, dr.begin() + (l + 1) * w)));
        } else {
          for (auto& a : dr) a = lanes == 1 ? a : tree_add(a);
          s.push_back(make_line(dr));
        }
        Value bmax;
        for (int l = 0; l < ns; ++l) {
          s[size_t(l)] = s[size_t(l)] * scale;
          if (masked) s[size_t(l)] = select(valid[size_t(l)], s[size_t(l)], splat(constant(f32, kMasked), w));
          bmax = l ? max(bmax, s[size_t(l)]) : s[size_t(l)];
        }
        Value mold = m[size_t(r)].get();
        Value mnew = max(mold, tree_max(bmax));
        Value al = fast_exp(mold - mnew, true);
        alpha.push_back(bcast(al, lanes));
        m[size_t(r)] = mnew;
        Value ls = lsum[size_t(r)].get() * splat(al, w);
        for (int l = 0; l < ns; ++l) {
          Value pr = fast_exp(s[size_t(l)] - splat(mnew, w), true);
          if (masked) pr = select(valid[size_t(l)], pr, splat(constant(f32, 0.0f), w));
          ls = ls + pr;
          store_line(pbuf, constant(i32, r * kb + l * w), pr);
        }
        lsum[size_t(r)] = ls;
      }
      // P·V a line of D at a time: rg accumulators live, each V line loaded
      // once for the rg rows.
      std::vector<Value> vr;
      for (int i = 0; i < kb; ++i) vr.push_back(key_line(key(constant(i32, i))));
      for_range(0, nd, [&](Value c) {
        std::vector<Value> a;
        for (int r = 0; r < rg; ++r) a.push_back(acc[c + r * nd] * alpha[size_t(r)]);
        for (int i = 0; i < kb; ++i) {
          Value vl = v[vr[size_t(i)] + cast(i64, c)];
          for (int r = 0; r < rg; ++r) a[size_t(r)] = fma(bcast(pbuf[r * kb + i], lanes), vl, a[size_t(r)]);
        }
        for (int r = 0; r < rg; ++r) acc[c + r * nd] = a[size_t(r)];
      });
    };
    Value nfull = rk.n / kb;
    for_range(0, nfull, [&](Value jb) { block(jb * kb, false); });
    if_(nfull * kb < rk.n, [&] { block(nfull * kb, true); });

    for (int r = 0; r < rg; ++r) {
      Value tot = reduce_add(lsum[size_t(r)].get());
      Value inv = bcast(select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f)), lanes);
      for_range(0, nd, [&](Value c) { o[q0 + (r * nd) + cast(i64, c)] = acc[c + r * nd] * inv; });
    }
  });
}

ir::Kernel kv_attention_gpu_kernel(int d, int wg) {
  if (wg < 1) throw std::invalid_argument("kv_attention (gpu): wg must be >= 1");
  const int per = (d + wg - 1) / wg;  // output dimensions per work-item
  return kernel("kv_attention_gpu_d" + std::to_string(d) + "_w" + std::to_string(wg), [&](KernelBuilder& kb) {
    auto q = kb.input("q", f32);
    auto k = kb.input("k_cache", f32);
    auto v = kb.input("v_cache", f32);
    auto posb = kb.input("pos", i32);
    auto o = kb.output("o", f32);
    KvParams p = kv_params(kb);
    kb.workgroup(uint32_t(wg));
    auto qs = shared_array(f32, d);
    auto ss = shared_array(f32, wg);  // a block's scores, then its probabilities
    Value lid = cast(i32, local_id(0));
    Value row = wrapped_group(0, p.rows);
    RowKeys rk = row_keys(p, row, posb[0]);
    for_range(lid, d, [&](Value i) { qs[i] = q[row * d + i] * p.scale; }, wg);
    barrier();
    // Dimension lid + wg·c; past D (D % wg != 0) a work-item re-reads D - 1
    // and stores nothing.
    std::vector<Value> dim;
    for (int c = 0; c < per; ++c) dim.push_back(min(lid + c * wg, d - 1));
    std::vector<Var> acc;
    for (int c = 0; c < per; ++c) acc.push_back(var(constant(f32, 0.0f)));
    Var m = var(constant(f32, kMasked));
    Var l = var(constant(f32, 0.0f));
    Value nb = (rk.n + (wg - 1)) / wg;
    for_range(0, nb, [&](Value jb) {
      Value j0 = jb * wg;
      Value j = j0 + lid;
      Var s = var(constant(f32, kMasked));
      if_(j < rk.n, [&] {
        Value kr = (rk.kv_row0 + j) * d;
        Var dot = var(constant(f32, 0.0f));
        for_range(0, d, [&](Value dd) { dot = fma(qs[dd], k[kr + dd], dot.get()); });
        s = dot.get();
      });
      ss[lid] = s.get();
      barrier();
      Var bm = var(constant(f32, kMasked));
      for_range(0, wg, [&](Value i) { bm = max(bm.get(), ss[i]); });
      Value mold = m.get();
      Value mnew = max(mold, bm.get());
      Value alpha = exp(mold - mnew);
      barrier();  // every score read before the probabilities replace them
      ss[lid] = select(j < rk.n, exp(s.get() - mnew), constant(f32, 0.0f));
      m = mnew;
      barrier();
      l = l.get() * alpha;
      for (int c = 0; c < per; ++c) acc[size_t(c)] = acc[size_t(c)].get() * alpha;
      Value kend = min(rk.n - j0, wg);
      for_range(0, kend, [&](Value i) {
        Value pi = ss[i];
        l = l.get() + pi;
        Value vr = (rk.kv_row0 + j0 + i) * d;
        for (int c = 0; c < per; ++c) acc[size_t(c)] = fma(pi, v[vr + dim[size_t(c)]], acc[size_t(c)].get());
      });
      barrier();  // the block's probabilities read before the next scores
    });
    Value tot = l.get();
    Value inv = select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f));
    for (int c = 0; c < per; ++c) {
      auto store = [&] { o[row * d + dim[size_t(c)]] = acc[size_t(c)].get() * inv; };
      if ((c + 1) * wg <= d) store();
      else if_(lid + c * wg < d, store);
    }
  });
}

}  // namespace kgen::ops
