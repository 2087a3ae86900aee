// The attention kernels (see ops/attention/attention.h). Shapes are runtime scalars; only
// the head size D and the tile parameters are baked into a kernel. Every
// kernel takes the same scalar list:
//   s, skv, skvp (Skv padded: the score/Kᵀ row stride), h, g (= H/Hkv),
//   shift (query i sees keys j <= i + shift: Skv - S when causal, Skv
//   otherwise, so the mask test is the same code), scale.
// Indices are i32 (tensors stay below 2^31 elements).
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/attention/attention.h"
#include "ops/attention/params.h"
#include "ops/common/fast_exp.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace attention_detail;

namespace {

// Row (b*H + h)*S + i of the queries: its (b, h) and kv row base.
struct RowIndex {
  Value bh, i, kv_head;  // kv_head = b*Hkv + h/G
  Value lim;             // last visible key (may be < 0: none)
};
RowIndex row_index(const Shape& p, const Value& row) {
  RowIndex r;
  r.bh = row / p.s;
  r.i = row % p.s;
  Value b = r.bh / p.h, hh = r.bh % p.h;
  r.kv_head = b * (p.h / p.g) + hh / p.g;
  r.lim = min(r.i + p.shift, p.skv - 1);
  return r;
}

ir::Type elem_of(int lanes, ir::Type dt = f32) { return lanes == 1 ? dt : line(dt, lanes); }

}  // namespace

// scores[row, j] = scale * q[row]·k[kv, j] for j <= lim, kMasked for the
// rest of the padded row. A grid-stride loop over j: on the CPU one
// work-item walks the whole row (wg = 1, one group per row), on a GPU the
// x axis of the grid covers the row.
ir::Kernel attention_scores_kernel(int d, int lanes, int wg, ir::Type dt) {
  if (d % lanes) throw std::invalid_argument("attention scores: D must be a multiple of lanes");
  const int nd = d / lanes;
  return kernel("attention_scores_d" + std::to_string(d) + "_l" + std::to_string(lanes) + "_w" + std::to_string(wg) + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto q = kb.input("q", elem_of(lanes, dt));
    auto k = kb.input("k", elem_of(lanes, dt));
    auto sc = kb.output("scores", f32);
    Shape p = shape_params(kb);
    kb.workgroup(uint32_t(wg));
    Value row = wrapped_group(1, p.rows);
    RowIndex r = row_index(p, row);
    Value qbase = row * nd;
    Value stride = cast(i32, num_groups(0)) * wg;
    for_range(cast(i32, global_id(0)), p.skvp, [&](Value j) {
      Var val = var(constant(f32, kMasked));
      if_(j <= r.lim, [&] {
        Value kbase = (r.kv_head * p.skv + j) * nd;
        Var acc = var(lanes == 1 ? constant(f32, 0.0f) : splat(constant(f32, 0.0f), lanes));
        for_range(0, nd, [&](Value c) { acc = fma(as_f32(q[qbase + c]), as_f32(k[kbase + c]), acc); });
        Value dot = lanes == 1 ? acc.get() : tree_add(acc.get());
        val = dot * p.scale;
      });
      sc[row * p.skvp + j] = val;
    }, stride);
  });
}

// Grouped rows (see ops/attention/attention.h): work-item (b, kv head, s) handles query
// rows ((b·H + kvh·G + g)·S + s) for g < G, which share the key range.
struct GroupRows {
  Value kv_head, lim;
  std::vector<Value> rows;
};
GroupRows group_rows(const Shape& p, int g) {
  GroupRows r;
  Value wi = wrapped_group(1, p.rows / p.g);  // B·Hkv·S work-items
  Value bkv = wi / p.s, s = wi % p.s, hkv = p.h / p.g;
  Value b = bkv / hkv, kvh = bkv % hkv;
  r.kv_head = bkv;
  r.lim = min(s + p.shift, p.skv - 1);
  for (int k = 0; k < g; ++k) r.rows.push_back((b * p.h + kvh * g + k) * p.s + s);
  return r;
}

ir::Kernel attention_scores_grouped_kernel(int d, int g, ir::Type dt) {
  if (d % 16 || g < 1) throw std::invalid_argument("attention scores (grouped): D % 16 == 0 and G >= 1");
  const int nd = d / 16;
  return kernel("attention_scores_d" + std::to_string(d) + "_g" + std::to_string(g) + dt_tag(dt), [&](KernelBuilder& kb) {
    auto q = kb.input("q", line(dt, 16));
    auto k = kb.input("k", line(dt, 16));
    auto sc = kb.output("scores", f32);
    Shape p = shape_params(kb);
    kb.workgroup(1);
    GroupRows r = group_rows(p, g);
    for_range(0, r.lim + 1, [&](Value j) {
      Value kbase = (r.kv_head * p.skv + j) * nd;
      std::vector<Value> kl;
      for (int c = 0; c < nd; ++c) kl.push_back(as_f32(k[kbase + c]));
      for (int h = 0; h < g; ++h) {
        Value acc = splat(constant(f32, 0.0f), 16);
        for (int c = 0; c < nd; ++c) acc = fma(as_f32(q[r.rows[size_t(h)] * nd + c]), kl[size_t(c)], acc);
        sc[r.rows[size_t(h)] * p.skvp + j] = tree_add(acc) * p.scale;
      }
    });
    // The rest of each padded row is masked.
    for_range(max(r.lim + 1, 0), p.skvp, [&](Value j) {
      for (int h = 0; h < g; ++h) sc[r.rows[size_t(h)] * p.skvp + j] = constant(f32, kMasked);
    });
  });
}

ir::Kernel attention_pv_grouped_kernel(int d, int g, int dl, ir::Type dt) {
  if (d % 16 || g < 1 || dl < 1) throw std::invalid_argument("attention pv (grouped): D % 16 == 0, G >= 1, dl >= 1");
  const int nd = d / 16;
  return kernel("attention_pv_d" + std::to_string(d) + "_g" + std::to_string(g) + "_l" + std::to_string(dl) + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto sc = kb.input("p", f32);
    auto v = kb.input("v", line(dt, 16));
    auto o = kb.output("o", line(f32, 16));
    Shape p = shape_params(kb);
    kb.workgroup(1);
    GroupRows r = group_rows(p, g);
    // Lines c0 .. c0 + dl - 1 of D; a last chunk past D re-reads line nd - 1
    // (in bounds) and does not store it.
    Value c0 = cast(i32, group_id(0)) * dl;
    std::vector<Value> col;
    for (int c = 0; c < dl; ++c) col.push_back(min(c0 + c, nd - 1));
    std::vector<Var> acc;
    for (int i = 0; i < g * dl; ++i) acc.push_back(var(splat(constant(f32, 0.0f), 16)));
    for_range(0, r.lim + 1, [&](Value j) {
      Value vb = (r.kv_head * p.skv + j) * nd;
      std::vector<Value> vl;
      for (int c = 0; c < dl; ++c) vl.push_back(as_f32(v[vb + col[size_t(c)]]));
      for (int h = 0; h < g; ++h) {
        Value pj = splat(sc[r.rows[size_t(h)] * p.skvp + j], 16);
        for (int c = 0; c < dl; ++c) acc[size_t(h * dl + c)] = fma(pj, vl[size_t(c)], acc[size_t(h * dl + c)].get());
      }
    });
    for (int c = 0; c < dl; ++c)
      if_(c0 + c < nd, [&] {
        for (int h = 0; h < g; ++h) o[r.rows[size_t(h)] * nd + c0 + c] = acc[size_t(h * dl + c)].get();
      });
  });
}

// In-place softmax of each padded score row; masked entries become exactly
// 0 and a row with no visible key becomes all zeros. One work-item per row
// (lanes over keys on the CPU; skvp is a multiple of `lanes`). fast_exp only
// on the CPU: its round-to-integer trick (t = x·log2e + 1.5·2^23; t - 1.5·2^23)
// is undone by GPU compilers that reassociate float math (lavapipe gave 2^k).
ir::Kernel attention_softmax_kernel(int lanes, int wg, bool cpu) {
  return kernel("attention_softmax_l" + std::to_string(lanes) + "_w" + std::to_string(wg) + (cpu ? "_cpu" : "_gpu"),
                [&](KernelBuilder& kb) {
    auto sc = kb.inout("scores", elem_of(lanes));
    auto rows = kb.scalar("rows", i32);
    auto skvp = kb.scalar("skvp", i32);
    kb.workgroup(uint32_t(wg));
    auto bc = [&](const Value& v) { return lanes == 1 ? v : splat(v, lanes); };
    Value row = cast(i32, wrapped_group_id() * uint32_t(wg) + local_id(0));
    if_(row < rows, [&] {
      Value nl = skvp / lanes, base = row * nl;
      Var m = var(bc(constant(f32, kMasked)));
      for_range(0, nl, [&](Value c) { m = max(m, sc[base + c]); });
      Value mx = bc(lanes == 1 ? m.get() : reduce_max(m.get()));
      Var s = var(bc(constant(f32, 0.0f)));
      for_range(0, nl, [&](Value c) {
        Value x = sc[base + c];
        Value e = select(x > bc(constant(f32, 0.5f * kMasked)), cpu ? fast_exp(x - mx, true) : exp(x - mx),
                         bc(constant(f32, 0.0f)));
        sc[base + c] = e;
        s += e;
      });
      Value tot = lanes == 1 ? s.get() : reduce_add(s.get());
      Value inv = bc(select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f)));
      for_range(0, nl, [&](Value c) { sc[base + c] = sc[base + c] * inv; });
    });
  });
}

// out[row] = Σ_j P[row, j] v[kv, j] over the visible keys. CPU: one
// work-item per row with D/lanes line accumulators; GPU: one per (row, d).
ir::Kernel attention_pv_kernel(int d, int lanes, bool cpu, ir::Type dt) {
  if (d % lanes) throw std::invalid_argument("attention pv: D must be a multiple of lanes");
  const int nd = d / lanes;
  return kernel("attention_pv_d" + std::to_string(d) + "_l" + std::to_string(lanes) + (cpu ? "_cpu" : "_gpu") + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto sc = kb.input("p", f32);
    auto v = kb.input("v", elem_of(lanes, dt));
    auto o = kb.output("o", elem_of(lanes));
    Shape p = shape_params(kb);
    Value zero = lanes == 1 ? constant(f32, 0.0f) : splat(constant(f32, 0.0f), lanes);
    if (cpu) {
      kb.workgroup(1);
      Value row = wrapped_group(1, p.rows);
      RowIndex r = row_index(p, row);
      std::vector<Var> acc;
      for (int c = 0; c < nd; ++c) acc.push_back(var(zero));
      for_range(0, r.lim + 1, [&](Value j) {
        Value pj = sc[row * p.skvp + j];
        Value pv = lanes == 1 ? pj : splat(pj, lanes);
        Value vb = (r.kv_head * p.skv + j) * nd;
        for (int c = 0; c < nd; ++c) acc[c] = fma(pv, as_f32(v[vb + c]), acc[c]);
      });
      for (int c = 0; c < nd; ++c) o[row * nd + c] = acc[c];
    } else {
      kb.workgroup(64);
      Value row = wrapped_group(1, p.rows);
      Value c = cast(i32, global_id(0));
      RowIndex r = row_index(p, row);
      if_(c < nd, [&] {
        Var acc = var(zero);
        for_range(0, r.lim + 1, [&](Value j) {
          Value pj = sc[row * p.skvp + j];
          acc = fma(lanes == 1 ? pj : splat(pj, lanes), as_f32(v[(r.kv_head * p.skv + j) * nd + c]), acc);
        });
        o[row * nd + c] = acc;
      });
    }
  });
}

// Kᵀ as f32x16 lines over keys: one work-item per (kv head, 16-key line);
// the grid is (SkvP/16, B*Hkv).
ir::Kernel attention_kt_kernel(int d, ir::Type dt) {
  return kernel("attention_kt_d" + std::to_string(d) + dt_tag(dt), [&](KernelBuilder& kb) {
    auto k = kb.input("k", dt);
    auto kt = kb.output("kt", line(f32, 16));
    Shape p = shape_params(kb);
    kb.workgroup(1);
    Value jl = cast(i32, group_id(0)), kvh = cast(i32, group_id(1));
    Value nl = p.skvp / 16;
    Value j0 = jl * 16;
    // Keys past Skv read key Skv-1 and are zeroed: no out-of-bounds loads.
    std::vector<Value> rows;
    Value live = (lane_index(16) + splat(j0, 16)) < splat(p.skv, 16);
    for (int l = 0; l < 16; ++l) rows.push_back((kvh * p.skv + min(j0 + l, p.skv - 1)) * d);
    for_range(0, d, [&](Value dd) {
      Value ln = splat(constant(f32, 0.0f), 16);
      for (int l = 0; l < 16; ++l) ln = insert(ln, l, as_f32(k[rows[l] + dd]));
      kt[(kvh * d + dd) * nl + jl] = select(live, ln, splat(constant(f32, 0.0f), 16));
    });
  });
}

// CPU flash attention. Group (bh, query block): rows i0 .. i0+qb-1 (rows
// past S repeat row S-1 and are not stored). Per key block of kbk = 16*nk
// keys: scores as qb × nk lines over keys (D broadcast-FMAs per line against
// Kᵀ), online-softmax update, then P·V as broadcast(p_ij) × V-row lines into
// qb × D/16 accumulators. Buffers: q scalars (broadcast loads), Kᵀ/v/o lines.
ir::Kernel flash_attention_cpu_kernel(int d, int qb, int nk, ir::Type dt, int dc) {
  if (d % 16) throw std::invalid_argument("flash attention (cpu): D must be a multiple of 16");
  const int nd = d / 16, kbk = 16 * nk;
  if (dc < 0 || (dc && nd % dc)) throw std::invalid_argument("flash attention (cpu): dc must divide D/16 (0: accumulators in registers)");
  const bool chunked = dc != 0 && dc < nd;
  return kernel("flash_attention_cpu_d" + std::to_string(d) + "_qb" + std::to_string(qb) + "_kb" + std::to_string(kbk) +
                    (chunked ? "_dc" + std::to_string(dc) : "") + dt_tag(dt),
                [&](KernelBuilder& kb) {
    auto q = kb.input("q", dt);
    auto kt = kb.input("kt", line(f32, 16));  // written by attention_kt_kernel, in f32
    auto v = kb.input("v", line(f32, 16));    // f32 (the plan widens f16/bf16 V first)
    auto o = kb.output("o", line(f32, 16));
    Shape p = shape_params(kb);
    kb.workgroup(1);
    auto L = [](float f) { return splat(constant(f32, f), 16); };
    Value nqb = (p.s + (qb - 1)) / qb;
    Value gid = cast(i32, group_id(0));
    Value bh = gid / nqb, i0 = (gid % nqb) * qb;
    Value b = bh / p.h, hh = bh % p.h;
    Value kvh = b * (p.h / p.g) + hh / p.g;
    Value nl = p.skvp / 16;      // Kᵀ lines per d row
    Value ktbase = kvh * d * nl;  // Kᵀ rows of this kv head
    Value vbase = kvh * p.skv;    // V rows
    std::vector<Value> qrow(qb), lim(qb), limv(qb);
    for (int r = 0; r < qb; ++r) {
      Value i = min(i0 + r, p.s - 1);
      qrow[r] = (bh * p.s + i) * d;
      lim[r] = min(i + p.shift, p.skv - 1);
      limv[r] = splat(lim[r], 16);
    }
    // Blocks fully visible to every row, and the end of the visible range.
    Value nfull = max(lim[0] + 1, 0) / kbk;
    Value nend = (max(lim[qb - 1] + 1, 0) + (kbk - 1)) / kbk;
    // f16/bf16 queries widened once into a stack copy of the qb rows (each
    // is read once per key block: converting at every read made bf16
    // prefill slower than f32).
    Array qf;
    if (dt != f32) {
      qf = shared_array(f32, int64_t(qb) * d);
      for (int r = 0; r < qb; ++r)
        for_range(0, d, [&](Value dd) { qf[r * d + dd] = as_f32(q[qrow[r] + dd]); });
    }
    auto q_at = [&](int r, const Value& dd) { return dt != f32 ? Value(qf[r * d + dd]) : Value(q[qrow[r] + dd]); };

    // The output accumulators, qb × D/16 lines: registers, or (chunked) an
    // L1 array that the P·V pass walks dc lines at a time, so each chunk's
    // qb × dc lines stay in registers over the block's keys. With D = 128
    // and qb = 4 the 32 lines exceeded the 32 zmm and spilled inside the
    // key loop.
    std::vector<Var> m, l;
    std::vector<std::vector<Var>> acc(qb);
    Array accbuf = chunked ? shared_array(line(f32, 16), int64_t(qb) * nd) : Array();
    for (int r = 0; r < qb; ++r) {
      m.push_back(var(constant(f32, kMasked)));
      l.push_back(var(L(0.0f)));
      for (int c = 0; c < nd; ++c) {
        if (chunked) accbuf[r * nd + c] = L(0.0f);
        else acc[r].push_back(var(L(0.0f)));
      }
    }
    auto acc_get = [&](int r, int c) { return chunked ? Value(accbuf[r * nd + c]) : acc[r][c].get(); };
    Value iota = lane_index(16);
    Array pbuf = shared_array(f32, int64_t(qb) * kbk);  // a key block's p, row by row

    auto block = [&](Value jb, bool masked) {
      // Scores: s[r][c] over keys jb*kbk + 16c + lane.
      std::vector<std::vector<Var>> s(qb);
      for (int r = 0; r < qb; ++r)
        for (int c = 0; c < nk; ++c) s[r].push_back(var(L(0.0f)));
      Value kl0 = ktbase + jb * nk;
      for_range(0, d, [&](Value dd) {
        std::vector<Value> kl;
        for (int c = 0; c < nk; ++c) kl.push_back(kt[kl0 + dd * nl + c]);
        for (int r = 0; r < qb; ++r) {
          Value qv = splat(q_at(r, dd), 16);
          for (int c = 0; c < nk; ++c) s[r][c] = fma(qv, kl[c], s[r][c]);
        }
      });
      // Online softmax: new max, rescale of the running sum and accumulators.
      std::vector<std::vector<Value>> pr(qb);
      Value scv = splat(p.scale, 16);
      for (int r = 0; r < qb; ++r) {
        std::vector<Value> sv, valid;
        for (int c = 0; c < nk; ++c) {
          Value x = s[r][c].get() * scv;
          if (masked) {
            Value j = iota + splat(jb * kbk + 16 * c, 16);
            valid.push_back(j <= limv[r]);
            x = select(valid.back(), x, L(kMasked));
          }
          sv.push_back(x);
        }
        Value bmax = sv[0];
        for (int c = 1; c < nk; ++c) bmax = max(bmax, sv[c]);
        Value mold = m[r].get();
        Value mnew = max(mold, reduce_max(bmax));
        Value alpha = splat(fast_exp(mold - mnew, true), 16);
        m[r] = mnew;
        Value mv = splat(mnew, 16);
        Value psum = L(0.0f);
        for (int c = 0; c < nk; ++c) {
          Value e = fast_exp(sv[c] - mv, true);
          if (masked) e = select(valid[c], e, L(0.0f));
          pr[r].push_back(e);
          psum = psum + e;
        }
        l[r] = fma(l[r].get(), alpha, psum);
        for (int c = 0; c < nd; ++c) {
          if (chunked) accbuf[r * nd + c] = Value(accbuf[r * nd + c]) * alpha;
          else acc[r][c] = acc[r][c].get() * alpha;
        }
      }
      // P·V: key by key in a runtime loop, one V row (D/16 lines) shared by
      // the qb rows, each row's p broadcast from a stack copy. (Unrolled
      // over the block's keys with the p lanes extracted, the kernel was
      // 10k lines of C++ and took 635 ms to compile.)
      for (int r = 0; r < qb; ++r)
        for (int c = 0; c < nk; ++c) store_line(pbuf, constant(i32, r * kbk + 16 * c), pr[r][c]);
      auto pv = [&](int c0, int c1, std::vector<std::vector<Var>>& a) {
        for_range(0, kbk, [&](Value key) {
          Value j = jb * kbk + key;
          if (masked) j = min(j, p.skv - 1);  // p is 0 there; stay in bounds
          Value vr = (vbase + j) * nd;
          std::vector<Value> vl;
          for (int cc = c0; cc < c1; ++cc) vl.push_back(v[vr + cc]);
          for (int r = 0; r < qb; ++r) {
            Value pj = splat(pbuf[key + r * kbk], 16);
            for (int cc = c0; cc < c1; ++cc) a[r][cc - c0] = fma(pj, vl[cc - c0], a[r][cc - c0].get());
          }
        });
      };
      if (!chunked) return pv(0, nd, acc);
      for (int c0 = 0; c0 < nd; c0 += dc) {
        std::vector<std::vector<Var>> a(qb);
        for (int r = 0; r < qb; ++r)
          for (int cc = c0; cc < c0 + dc; ++cc) a[r].push_back(var(Value(accbuf[r * nd + cc])));
        pv(c0, c0 + dc, a);
        for (int r = 0; r < qb; ++r)
          for (int cc = c0; cc < c0 + dc; ++cc) accbuf[r * nd + cc] = a[r][cc - c0].get();
      }
    };
    for_range(0, nfull, [&](Value jb) { block(jb, false); });
    for_range(nfull, nend, [&](Value jb) { block(jb, true); });

    for (int r = 0; r < qb; ++r) {
      Value tot = reduce_add(l[r].get());
      Value inv = splat(select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f)), 16);
      if_(i0 + r < p.s, [&] {
        Value ob = (bh * p.s + i0 + r) * nd;
        for (int c = 0; c < nd; ++c) o[ob + c] = acc_get(r, c) * inv;
      });
    }
  });
}

}  // namespace kgen::ops
