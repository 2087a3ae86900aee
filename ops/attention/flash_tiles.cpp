// The CPU flash attention on GEMM register tiles (flash_attention_tiles_kernel,
// ops/attention/attention.h) and its packed-K pre-pass. Both products of a key
// block are the matmul family's micro-kernel shape (ops/matmul/gemm_cpu.cpp):
// an mr × 16·nl accumulator block in registers, one broadcast of the left
// operand per row and step, nl packed lines of the right operand per step.
//   scores: rows = query rows, lines over keys, steps over D; the left operand
//           is the tile's query rows (pre-scaled, in a stack copy), the right
//           the block's packed Kᵀ panel (16 keys × D, contiguous).
//   P·V:    rows = query rows, lines over D, steps over the block's keys; the
//           left operand is P (the stack score tile), the right V's rows
//           (padded to whole lines by attention_vpad_kernel where D is not).
// Any D: the scores step over D one element at a time, the output rows are
// ND = ceil(D/16) lines of which the last is stored lane by lane.
// Between them the online softmax runs on the whole score tile, row by row.
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/attention/attention.h"
#include "ops/attention/params.h"
#include "ops/common/fast_exp.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace attention_detail;

// Panel jl of kv head kvh: kp[(kvh·SkvP/16 + jl)·D + d] holds keys 16·jl ..
// 16·jl + 15 at d, so a panel is D consecutive lines.
ir::Kernel attention_kpanel_kernel(int d, ir::Type dt) {
  return kernel("attention_kpanel_d" + std::to_string(d) + dt_tag(dt), [&](KernelBuilder& kb) {
    auto k = kb.input("k", dt);
    auto kp = kb.output("kp", line(f32, 16));
    Shape p = shape_params(kb);
    kb.workgroup(1);
    Value jl = cast(i32, group_id(0)), kvh = cast(i32, group_id(1));
    Value j0 = jl * 16;
    // Keys past Skv read key Skv-1 and are zeroed: no out-of-bounds loads.
    Value live = (lane_index(16) + splat(j0, 16)) < splat(p.skv, 16);
    std::vector<Value> rows;
    for (int l = 0; l < 16; ++l) rows.push_back((kvh * p.skv + min(j0 + l, p.skv - 1)) * d);
    Value out = (kvh * (p.skvp / 16) + jl) * d;
    for_range(0, d, [&](Value dd) {
      Value ln = splat(constant(f32, 0.0f), 16);
      for (int l = 0; l < 16; ++l) ln = insert(ln, l, as_f32(k[rows[size_t(l)] + dd]));
      kp[out + dd] = select(live, ln, splat(constant(f32, 0.0f), 16));
    });
  });
}

// V rows padded to whole lines, in f32: one work-item per row.
ir::Kernel attention_vpad_kernel(int d, ir::Type dt) {
  const int nd = (d + 15) / 16;
  return kernel("attention_vpad_d" + std::to_string(d) + dt_tag(dt), [&](KernelBuilder& kb) {
    auto v = kb.input("v", dt);
    auto vp = kb.output("vp", line(f32, 16));
    kb.workgroup(1);
    Value row = cast(i32, group_id(0));
    for (int c = 0; c < nd; ++c) {
      Value ln = splat(constant(f32, 0.0f), 16);
      for (int l = 0; l < 16 && 16 * c + l < d; ++l) ln = insert(ln, l, as_f32(v[row * d + (16 * c + l)]));
      vp[row * nd + c] = ln;
    }
  });
}

namespace {

// The kernel's fixed form and its work-item's running state.
class TileFlash {
 public:
  TileFlash(int d, int mr, int nl, int bk, int qt)
      : D(d), ND((d + 15) / 16), MR(mr), NL(nl), BK(bk), BL(bk / 16), QT(qt), ROWS(mr * qt), RP(mr <= 2 ? 2 : mr <= 4 ? 4 : mr <= 8 ? 8 : 16) {}

  void record(KernelBuilder& kb, ir::Type dt) {
    q = kb.input("q", dt);
    kp = kb.input("kp", line(f32, 16));
    v = kb.input("v", line(f32, 16));
    o = kb.output("o", f32);
    p = shape_params(kb);
    kb.workgroup(1);
    qs = shared_array(f32, int64_t(ROWS) * D);
    ob = shared_array(line(f32, 16), int64_t(ROWS) * ND);
    // Tile t's rows at t·RP (lanes past MR: padding, computed and ignored).
    mrow = shared_array(f32, int64_t(QT) * RP);
    lrow = shared_array(f32, int64_t(QT) * RP);
    alpha = shared_array(f32, RP);
    rl = shared_array(line(f32, 16), MR);  // per row: the scores' line max, then the p sum
    sb = shared_array(f32, int64_t(MR) * BK);
    locate();
    start();
    // Key blocks outer, the QT row tiles inner: a block's K panel and V rows
    // come from L2 once and serve every tile. Blocks past a tile's last
    // visible key are skipped; only those crossing it take the masked path.
    Value nend_all = blocks_to(lim_of(constant(i32, ROWS - 1)));
    for_range(0, nend_all, [&](Value jb) {
      for_range(0, QT, [&](Value t) {
        Value r0 = t * MR;
        Value nfull = max(lim_of(r0) + 1, 0) / BK;
        Value nend = blocks_to(lim_of(r0 + (MR - 1)));
        if_(jb < nfull, [&] { block(t, jb, false); }).else_if_([&] { return jb < nend; }, [&] { block(t, jb, true); });
      });
    });
    finish();
  }

 private:
  // This work-item's (b, h), first query row and kv head.
  void locate() {
    Value nqb = (p.s + (ROWS - 1)) / ROWS;
    Value gid = cast(i32, group_id(0));
    bh = gid / nqb;
    i0 = (gid % nqb) * ROWS;
    Value b = bh / p.h, hh = bh % p.h;
    Value kvh = b * (p.h / p.g) + hh / p.g;
    kbase = kvh * (p.skvp / 16) * D;
    vbase = kvh * p.skv;
  }
  // Last visible key of the work-item's row r (< 0: none); rows past S
  // repeat row S - 1 and are not stored.
  Value lim_of(const Value& r) { return min(min(i0 + r, p.s - 1) + p.shift, p.skv - 1); }
  // Blocks up to and including key lim.
  Value blocks_to(const Value& lim) { return (max(lim + 1, 0) + (BK - 1)) / BK; }

  // The rows' queries times scale (f32), zero outputs, empty softmax state.
  void start() {
    for_range(0, ROWS, [&](Value r) {
      Value qr = (bh * p.s + min(i0 + r, p.s - 1)) * D;
      for_range(0, D, [&](Value dd) { qs[r * D + dd] = as_f32(q[qr + dd]) * p.scale; });
      for (int c = 0; c < ND; ++c) ob[r * ND + c] = splat(constant(f32, 0.0f), 16);
    });
    for_range(0, QT * RP, [&](Value r) {
      mrow[r] = constant(f32, kMasked);
      lrow[r] = constant(f32, 0.0f);
    });
  }

  // Key block jb for tile t (rows t·MR .. t·MR + MR - 1). A masked block
  // (across the causal diagonal or the end of Skv) is computed up to the
  // tile's last visible key only: its score panels past it are skipped
  // (softmax masks what they left in sb) and P·V stops there.
  void block(const Value& t, const Value& jb, bool masked) {
    Value r0 = t * MR;
    Value keys = masked ? min(lim_of(r0 + (MR - 1)) - jb * BK + 1, BK) : constant(i32, BK);
    scores(r0, jb, masked ? (keys + (16 * NL - 1)) / (16 * NL) : constant(i32, BL / NL));
    softmax(r0, t * RP, jb, masked);
    accumulate(r0, jb, keys);
  }

  // sb[r][key] = q_r · k_key over the block's first `panels` of 16·NL keys,
  // a register tile each.
  void scores(const Value& r0, const Value& jb, const Value& panels) {
    Value kb0 = kbase + jb * (BL * D);
    for_range(0, panels, [&](Value pc) {
      std::vector<Var> acc;
      for (int i = 0; i < MR * NL; ++i) acc.push_back(var(splat(constant(f32, 0.0f), 16)));
      Value pl = kb0 + pc * (NL * D);
      Value qb = r0 * D;
      for_range(0, D, [&](Value dd) {
        std::vector<Value> kl;
        for (int l = 0; l < NL; ++l) kl.push_back(kp[pl + l * D + dd]);
        for (int r = 0; r < MR; ++r) {
          Value a = splat(qs[qb + r * D + dd], 16);
          for (int l = 0; l < NL; ++l) acc[size_t(r * NL + l)] = fma(a, kl[size_t(l)], acc[size_t(r * NL + l)].get());
        }
      });
      for (int r = 0; r < MR; ++r)
        for (int l = 0; l < NL; ++l) store_line(sb, r * BK + (pc * NL + l) * 16, acc[size_t(r * NL + l)].get());
    });
  }

  // Online softmax over the tile: each row's new max, the rescale factor of
  // its earlier sum and outputs (alpha, applied as P·V loads them), and
  // sb's scores replaced by p = e^(s - max) (0 for masked keys). The rows'
  // maxima, rescale factors and sums are one RP-lane line each (RP: MR
  // rounded up to a power of two), reduced together by tree_*_lanes: per
  // row and block a scalar max, exp and sum were a fifth of the kernel.
  // The passes over rows are runtime loops (unrolled, the kernel took
  // seconds to compile).
  void softmax(const Value& r0, const Value& at, const Value& jb, bool masked) {
    Value iota = lane_index(16);
    // Score c of row r, with the keys past its last visible one masked.
    auto score = [&](const Value& r, int c, Value* valid) {
      Value s = load_line(sb, r * BK + 16 * c);
      if (!masked) return s;
      *valid = iota + splat(jb * BK + 16 * c, 16) <= splat(lim_of(r0 + r), 16);
      return select(*valid, s, splat(constant(f32, kMasked), 16));
    };
    // (A NaN score is dropped from the max but not from its exp: the row
    // still comes out NaN.)
    for_range(0, MR, [&](Value r) {
      Value valid;
      Value m = score(r, 0, &valid);
      for (int c = 1; c < BL; ++c) {
        Value x = score(r, c, &valid);
        m = select(x > m, x, m);
      }
      rl[r] = m;
    });
    std::vector<Value> lines;
    for (int r = 0; r < RP; ++r) lines.push_back(rl[r < MR ? r : 0]);
    Value mold = load_line(mrow, at, RP);
    Value mnew = max(mold, tree_max_lanes(lines));
    store_line(mrow, at, mnew);
    Value a = fast_exp(mold - mnew, true);
    store_line(alpha, constant(i32, 0), a);
    for_range(0, MR, [&](Value r) {
      Value mv = splat(Value(mrow[at + r]), 16);
      Value psum = splat(constant(f32, 0.0f), 16);
      for (int c = 0; c < BL; ++c) {
        Value valid;
        Value e = fast_exp(score(r, c, &valid) - mv, true);
        if (masked) e = select(valid, e, splat(constant(f32, 0.0f), 16));
        store_line(sb, r * BK + 16 * c, e);
        psum = psum + e;
      }
      rl[r] = psum;
    });
    lines.clear();
    for (int r = 0; r < RP; ++r) lines.push_back(r < MR ? Value(rl[r]) : splat(constant(f32, 0.0f), 16));
    store_line(lrow, at, fma(load_line(lrow, at, RP), a, tree_add_lanes(lines)));
  }

  // ob[r] = ob[r]·alpha_r + Σ_key p[r][key] v[key] over the block's first
  // `keys` keys (all inside Skv), 16·NL columns of D per register tile.
  void accumulate(const Value& r0, const Value& jb, const Value& keys) {
    for_range(0, ND / NL, [&](Value pd) {
      std::vector<Var> acc;
      for (int r = 0; r < MR; ++r) {
        Value a = splat(Value(alpha[r]), 16);
        for (int l = 0; l < NL; ++l) acc.push_back(var(Value(ob[(r0 + r) * ND + pd * NL + l]) * a));
      }
      for_range(0, keys, [&](Value key) {
        Value vr = (vbase + jb * BK + key) * ND + pd * NL;
        std::vector<Value> vl;
        for (int l = 0; l < NL; ++l) vl.push_back(v[vr + l]);
        for (int r = 0; r < MR; ++r) {
          Value a = splat(sb[r * BK + key], 16);
          for (int l = 0; l < NL; ++l) acc[size_t(r * NL + l)] = fma(a, vl[size_t(l)], acc[size_t(r * NL + l)].get());
        }
      });
      for (int r = 0; r < MR; ++r)
        for (int l = 0; l < NL; ++l) ob[(r0 + r) * ND + pd * NL + l] = acc[size_t(r * NL + l)].get();
    });
  }

  // o = ob / l for the rows inside S; a row that saw no key gets zeros.
  void finish() {
    for_range(0, ROWS, [&](Value r) {
      if_(i0 + r < p.s, [&] {
        Value tot = lrow[r / MR * RP + r % MR];
        Value inv = splat(select(tot > 0.0f, 1.0f / tot, constant(f32, 0.0f)), 16);
        Value orow = (bh * p.s + i0 + r) * D;
        for (int c = 0; c < ND; ++c) {
          Value ln = Value(ob[r * ND + c]) * inv;
          if (16 * c + 16 <= D) store_line(o, orow + 16 * c, ln);
          else for (int l = 0; 16 * c + l < D; ++l) o[orow + (16 * c + l)] = ln.lane(l);
        }
      });
    });
  }

  const int D, ND, MR, NL, BK, BL, QT, ROWS, RP;
  Array q, kp, v, o, qs, ob, mrow, lrow, alpha, rl, sb;
  Shape p;
  Value bh, i0, kbase, vbase;
};

}  // namespace

ir::Kernel flash_attention_tiles_kernel(int d, int mr, int nl, int bk, int qt, ir::Type dt) {
  if (d < 1 || mr < 1 || mr > 16 || nl < 1 || ((d + 15) / 16) % nl || bk % (16 * nl) || bk < 16 || bk > 128 || qt < 1 || qt > 8)
    throw std::invalid_argument("flash attention (cpu tiles): need 1 <= mr <= 16, nl dividing D's lines (ceil(D/16)), "
                                "kb in 16..128 a multiple of 16·nl, 1 <= qt <= 8");
  return kernel("flash_attention_tiles_d" + std::to_string(d) + "_mr" + std::to_string(mr) + "_nl" + std::to_string(nl) + "_kb" +
                    std::to_string(bk) + "_qt" + std::to_string(qt) + dt_tag(dt),
                [&](KernelBuilder& kb) { TileFlash(d, mr, nl, bk, qt).record(kb, dt); });
}

}  // namespace kgen::ops
