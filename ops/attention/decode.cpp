// Split-key decode attention on the CPU (attention_decode_kernel and
// attention_decode_combine_kernel, ops/attention/attention.h). Few query
// rows read a long K/V once: the work is the K and V bytes, so the form is
// built around reading them once, in order, in whole cache lines.
//   - One work-item per (kv head, chunk of kc keys) computes the chunk for
//     all R = G·S query rows of that kv head (the G query heads that share
//     it, at each of the S positions): every K and V row is loaded once and
//     serves all R rows, and the chunks spread a head over the threads.
//   - Within a chunk the scores are computed in full (R × kc floats on the
//     stack), then one softmax per row and one pass of P·V: no online
//     rescaling, and K then V stream as contiguous rows.
//   - The chunk leaves its rows' unnormalised outputs, maxima and sums; the
//     combine kernel rescales the chunks to a common max and divides.
#include <algorithm>
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

namespace {

Value zero_line(int w) { return splat(constant(f32, 0.0f), w); }

// Line c (w lanes) of the D values at a[at ..]: a whole line where it lies
// inside D, else the tail lane by lane with zeros past D (no read past the row).
Value row_line(const Array& a, const Value& at, int c, int d, int w) {
  if (w * c + w <= d) return as_f32(load_line(a, at + w * c, w));
  Value ln = zero_line(w);
  for (int l = 0; w * c + l < d; ++l) ln = insert(ln, l, as_f32(Value(a[at + (w * c + l)])));
  return ln;
}

// Lines are one vector register (w lanes, the target's width). Scores: a
// block of kScoreRows rows takes each K line once (one accumulator per row,
// the query lines from L1). P·V: a block of 2 rows (1 where there is one)
// × 4 keys (8 broadcast p, 4 V lines, an accumulator), so each accumulator
// line is loaded and stored once per 4 FMAs and each V line serves 2.
constexpr int kScoreRows = 4;
constexpr int kBlockRows = 2, kBlockKeys = 4;

// The fixed form of a chunk's work-item: R rows (padded to RP, a multiple
// of the P·V block's BR rows, with zero queries), kc keys, D in NW lines of
// W lanes.
class DecodeChunk {
 public:
  DecodeChunk(int d, int r, int kc, int w)
      : D(d), W(w), NW((d + w - 1) / w), R(r), BR(std::min(r, kBlockRows)), RP((r + BR - 1) / BR * BR), KC(kc) {}

  void record(KernelBuilder& kb, ir::Type dt) {
    q = kb.input("q", dt);
    k = kb.input("k", dt);
    v = kb.input("v", dt);
    po = kb.output("po", f32);
    pml = kb.output("pml", f32);
    p = shape_params(kb);
    kb.workgroup(1);
    qs = shared_array(line(f32, W), int64_t(RP) * NW);
    hb = shared_array(line(f32, W), int64_t(RP) * W);
    sb = shared_array(f32, int64_t(RP) * KC);
    ob = shared_array(line(f32, W), int64_t(RP) * NW);
    locate();
    load_queries();
    scores();
    softmax();
    accumulate();
    store();
  }

 private:
  // This work-item's kv head, its key range and the rows' last visible keys.
  void locate() {
    Value ch = cast(i32, group_id(0));
    bkv = cast(i32, group_id(1));
    item = bkv * cast(i32, num_groups(0)) + ch;
    Value hkv = p.h / p.g;
    b = bkv / hkv;
    kvl = bkv % hkv;
    k0 = ch * KC;
    kend = min(k0 + KC, p.skv);
    // Rows at the last position see the most keys.
    Value last = min(p.s - 1 + p.shift, p.skv - 1);
    n = max(min(kend, last + 1) - k0, 0);
    krow = bkv * p.skv;
  }
  // Row rr: query head kvl·G + rr / S at position rr % S.
  Value query_row(const Value& rr) { return (b * p.h + kvl * p.g + rr / p.s) * p.s + rr % p.s; }
  // Keys of the chunk that row rr sees.
  Value visible(const Value& rr) { return max(min(min(rr % p.s + p.shift, p.skv - 1) + 1, kend) - k0, 0); }
  // Element offset of the chunk's key j (clamped to its last: keys past n
  // are read in bounds and masked or weighted 0).
  Value key_at(const Value& j) { return (krow + min(k0 + j, k0 + n - 1)) * D; }

  // The rows' queries times scale (zero past D and in the padding rows).
  void load_queries() {
    for_range(0, RP, [&](Value rr) {
      Value at = query_row(min(rr, R - 1)) * D;
      Value live = splat(select(rr < R, p.scale, constant(f32, 0.0f)), W);
      for (int c = 0; c < NW; ++c) qs[rr * NW + c] = row_line(q, at, c, D, W) * live;
    });
  }

  // sb[rr][j] = q_rr · k_j, W keys at a time: key by key (K's rows read in
  // order, each line once per block of rows), a line of partial products
  // per row, then the W keys' lines of a row summed across lanes together
  // (tree_add_lanes).
  void scores() {
    for_range(0, (n + W - 1) / W, [&](Value grp) {
      for_range(0, W, [&](Value t) {
        Value at = key_at(grp * W + t);
        for (int r0 = 0; r0 < RP; r0 += kScoreRows) {
          const int r1 = std::min(RP, r0 + kScoreRows);
          std::vector<Var> acc;
          for (int r = r0; r < r1; ++r) acc.push_back(var(zero_line(W)));
          for (int c = 0; c < NW; ++c) {
            Value kl = row_line(k, at, c, D, W);
            for (int r = r0; r < r1; ++r) acc[size_t(r - r0)] = fma(Value(qs[r * NW + c]), kl, acc[size_t(r - r0)].get());
          }
          for (int r = r0; r < r1; ++r) hb[r * W + t] = acc[size_t(r - r0)].get();
        }
      });
      for_range(0, RP, [&](Value rr) {
        std::vector<Value> lines;
        for (int t = 0; t < W; ++t) lines.push_back(hb[rr * W + t]);
        store_line(sb, rr * KC + grp * W, tree_add_lanes(lines));
      });
    });
  }

  // Per row: the max over its visible keys, p = e^(s - max) in place (0 for
  // the keys it does not see, and for the keys past n up to the next block
  // of keys) and their sum, into pml. A row that sees no key of the chunk
  // leaves (kMasked, 0) and zero p. The padding rows keep their 0 scores,
  // which weigh their V rows by 0.
  void softmax() {
    Value iota = lane_index(W);
    auto lines = [&] { return (n + W - 1) / W; };
    for_range(0, R, [&](Value rr) {
      Value nv = splat(visible(rr), W);
      Var m = var(splat(constant(f32, kMasked), W));
      for_range(0, lines(), [&](Value c) {
        Value x = load_line(sb, rr * KC + c * W, W);
        m = max(m.get(), select(iota + splat(c * W, W) < nv, x, splat(constant(f32, kMasked), W)));
      });
      Value mx = reduce_max(m.get());
      Value mv = splat(mx, W);
      Var sum = var(zero_line(W));
      for_range(0, lines(), [&](Value c) {
        Value at = rr * KC + c * W;
        Value e = select(iota + splat(c * W, W) < nv, fast_exp(load_line(sb, at, W) - mv, true), zero_line(W));
        store_line(sb, at, e);
        sum = sum.get() + e;
      });
      pml[(item * R + rr) * 2] = mx;
      pml[(item * R + rr) * 2 + 1] = reduce_add(sum.get());
    });
  }

  // ob[rr] = Σ_j p[rr][j] v_j over blocks of rows and keys: the block's p
  // broadcast once, then each V line serves the block's rows and each
  // accumulator line its keys. Keys past n repeat the last (their p is 0;
  // p is whole through the last block of W keys).
  void accumulate() {
    for_range(0, RP * NW, [&](Value i) { ob[i] = zero_line(W); });
    for_range(0, (n + kBlockKeys - 1) / kBlockKeys, [&](Value grp) {
      std::vector<Value> at;
      for (int u = 0; u < kBlockKeys; ++u) at.push_back(key_at(grp * kBlockKeys + u));
      for_range(0, RP / BR, [&](Value rb) {
        Value r0 = rb * BR;
        std::vector<Value> pb;
        for (int r = 0; r < BR; ++r)
          for (int u = 0; u < kBlockKeys; ++u) pb.push_back(splat(Value(sb[(r0 + r) * KC + grp * kBlockKeys + u]), W));
        for (int c = 0; c < NW; ++c) {
          std::vector<Value> vl;
          for (int u = 0; u < kBlockKeys; ++u) vl.push_back(row_line(v, at[size_t(u)], c, D, W));
          for (int r = 0; r < BR; ++r) {
            Value acc = ob[(r0 + r) * NW + c];
            for (int u = 0; u < kBlockKeys; ++u) acc = fma(pb[size_t(r * kBlockKeys + u)], vl[size_t(u)], acc);
            ob[(r0 + r) * NW + c] = acc;
          }
        }
      });
    });
  }

  // The real rows' partial outputs: NW·W floats per row.
  void store() {
    for_range(0, R * NW, [&](Value i) { store_line(po, (item * R * NW + i) * W, Value(ob[i])); });
  }

  const int D, W, NW, R, BR, RP, KC;
  Array q, k, v, po, pml, qs, hb, sb, ob;
  Shape p;
  Value bkv, item, b, kvl, k0, kend, n, krow;
};

}  // namespace

ir::Kernel attention_decode_kernel(int d, int r, int kc, int w, ir::Type dt) {
  if (d < 1 || r < 1 || r > kDecodeMaxRows || kc < 16 || kc % 16 || (w != 8 && w != 16))
    throw std::invalid_argument("attention decode: need D >= 1, 1 <= G·S <= " + std::to_string(kDecodeMaxRows) +
                                " rows per kv head, kc a multiple of 16, lines of 8 or 16 lanes");
  return kernel("attention_decode_d" + std::to_string(d) + "_r" + std::to_string(r) + "_kc" + std::to_string(kc) + "_w" +
                    std::to_string(w) + dt_tag(dt),
                [&](KernelBuilder& kb) { DecodeChunk(d, r, kc, w).record(kb, dt); });
}

// One work-item per query row: the chunks' outputs rescaled to their common
// max, summed, and divided by the rescaled sum (zeros where no chunk saw a key).
ir::Kernel attention_decode_combine_kernel(int d, int r, int w) {
  const int nw = (d + w - 1) / w;
  return kernel("attention_decode_combine_d" + std::to_string(d) + "_r" + std::to_string(r) + "_w" + std::to_string(w),
                [&](KernelBuilder& kb) {
    auto po = kb.input("po", f32);
    auto pml = kb.input("pml", f32);
    auto o = kb.output("o", f32);
    Shape p = shape_params(kb);
    auto nch = kb.scalar("nch", i32);
    kb.workgroup(1);
    Value row = wrapped_group(0, p.rows);
    Value bh = row / p.s, i = row % p.s;
    Value hh = bh % p.h;
    Value bkv = (bh / p.h) * (p.h / p.g) + hh / p.g;
    Value rr = (hh % p.g) * p.s + i;
    auto slot = [&](const Value& ch) { return (bkv * nch + ch) * r + rr; };
    Var mx = var(constant(f32, kMasked));
    for_range(0, nch, [&](Value ch) { mx = max(mx.get(), Value(pml[slot(ch) * 2])); });
    Var tot = var(constant(f32, 0.0f));
    std::vector<Var> acc;
    for (int c = 0; c < nw; ++c) acc.push_back(var(zero_line(w)));
    for_range(0, nch, [&](Value ch) {
      Value s = slot(ch);
      Value e = fast_exp(Value(pml[s * 2]) - mx.get(), true);
      tot = fma(e, Value(pml[s * 2 + 1]), tot.get());
      Value el = splat(e, w);
      for (int c = 0; c < nw; ++c) acc[size_t(c)] = fma(el, load_line(po, (s * nw + c) * w, w), acc[size_t(c)].get());
    });
    Value inv = splat(select(tot.get() > 0.0f, 1.0f / tot.get(), constant(f32, 0.0f)), w);
    Value at = row * d;
    for (int c = 0; c < nw; ++c) {
      Value ln = acc[size_t(c)].get() * inv;
      if (w * c + w <= d) store_line(o, at + w * c, ln);
      else for (int l = 0; w * c + l < d; ++l) o[at + (w * c + l)] = ln.lane(l);
    }
  });
}

}  // namespace kgen::ops
