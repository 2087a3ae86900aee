#include "ops/matmul/bf16_terms.h"

#include <array>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/common/fast_exp.h"
#include "ops/layout/transpose_block.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;

int bf16_terms_parts(int64_t prec, bool b_bf16) {
  if (prec == 1) return b_bf16 ? 2 : 3;
  if (prec == 2) return 1;
  throw std::invalid_argument("bf16 terms: prec must be 1 or 2");
}

int f16_terms_parts(int64_t prec) {
  if (prec < 0 || prec > 2) throw std::invalid_argument("f16 terms: prec must be 0, 1 or 2");
  return prec == 0 ? 4 : prec == 1 ? 3 : 1;
}

int bf16_term_index(int j, int parts, Bf16TermsSide side) {
  // {hi, lo, hi2} = 0, 1, 2. A: [hi | lo] (2 parts), [hi | hi2 | lo], [hi |
  // hi2 | lo | lo]; B: [hi | lo | hi2], [hi | lo | hi2 | lo].
  static constexpr int a[4][4] = {{0}, {0, 1}, {0, 2, 1}, {0, 2, 1, 1}}, b[4][4] = {{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 1}};
  return (side == Bf16TermsSide::A ? a : b)[parts - 1][j];
}

int64_t bf16_terms_seg(int64_t k) { return (k + 1) / 2 * 2; }

double terms_tolerance(int64_t prec) { return prec == 1 ? 1.0 / 4096 : prec == 2 ? 1.0 / 32 : 0.0; }

namespace {

constexpr uint32_t kColsPerItem = 256;

// The terms of v (f32 scalar or line) as bf16: {hi, lo, hi2}, hi2 being hi
// where it meets the other side's lo; with one part, {hi, hi, hi}. x - hi is
// exact in f32. Where hi is not finite (x infinite or NaN, or past bf16's
// largest value) only the hi·hi product carries it: both other terms are 0,
// so inf meets the other side's hi (inf·b) and never its lo, which is 0
// wherever b is a bf16 value (inf·0 = NaN where the f32 product is inf),
// nor inf - inf.
std::array<Value, 3> terms_of(const Value& v, int parts) {
  const int lanes = v.type().lanes;
  auto ty = [&](ir::ScalarKind k) { return lanes > 1 ? line(ir::Type(k), lanes) : ir::Type(k); };
  Value hi = cast(ty(ir::ScalarKind::BF16), v);
  if (parts == 1) return {hi, hi, hi};
  Value hf = cast(ty(ir::ScalarKind::F32), hi);
  Value finite = (bitcast(ty(ir::ScalarKind::U32), hf) & 0x7fffffffu) < 0x7f800000u;
  Value zero = lanes > 1 ? splat(constant(f32, 0.0f), lanes) : constant(f32, 0.0f);
  return {hi, cast(ty(ir::ScalarKind::BF16), select(finite, v - hf, zero)), cast(ty(ir::ScalarKind::BF16), select(finite, hf, zero))};
}

// The pair word(s) of two bf16 terms (scalars or lines): k's in the low
// half, k + 1's in the high one.
Value pair_word(const Value& t0, const Value& t1) {
  const int lanes = t0.type().lanes;
  auto word = [&](const Value& t) {
    return lanes > 1 ? cast(line(u32, lanes), bitcast(line(u16, lanes), t)) : cast(u32, bitcast(u16, t));
  };
  return word(t0) | (word(t1) << 16u);
}

// The tile product's pair panels (ops/matmul/matmul.h gemm_tile_kernel): per batch z,
// panel p (32 columns of B) holds kpt pair rows of 32 words, part j's from
// j·sp. The index of the first word of half h (16 columns) of part j's pair
// row pr.
Value panel_word(const Value& z, const Value& np, const Value& p, const Value& kpt, const Value& sp, int j, const Value& pr,
                 const Value& h) {
  const Value row = (cast(u64, z) * cast(u64, np) + cast(u64, p)) * cast(u64, kpt) + cast(u64, sp) * uint64_t(j) + cast(u64, pr);
  return row * uint64_t(32) + cast(u64, h) * uint64_t(16);
}

}  // namespace

ir::Kernel bf16_terms_kernel(int parts, Bf16TermsSide side, bool gated, ir::Type src) {
  const bool b_side = side == Bf16TermsSide::B, half = src.kind == ir::ScalarKind::F16;
  if (parts < 1 || parts > 4 || (parts == 2 && b_side)) throw std::invalid_argument("bf16_terms_kernel: parts must be 1, 3 or 4 (A: 1-4)");
  if ((!half && src.kind != ir::ScalarKind::F32) || (half && gated)) throw std::invalid_argument("bf16_terms_kernel: f32 or f16 (not gated) x");
  const std::string name = std::string("bf16_terms_") +
                           (parts == 1 ? "h" : parts == 2 ? "hl" : parts == 4 ? (b_side ? "hlhl" : "hhll") : b_side ? "hlh" : "hhl") +
                           (gated ? "_silu" : "") + (half ? "_f16" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", src);
    auto cols = kb.scalar("cols", u32);
    auto seg = kb.scalar("seg", u32);
    auto pitch = kb.scalar("pitch", u32);
    auto u = gated ? kb.input("u", f32) : x;
    auto y = kb.output("y", bf16);
    kb.workgroup(1);
    const Value r = group_id(1), c0 = group_id(0) * kColsPerItem;
    const Value xrow = cast(u64, r) * cast(u64, pitch);
    const Value yrow = cast(u64, r) * cast(u64, seg) * uint64_t(parts);
    const Value seg64 = cast(u64, seg);
    // The value at column c of the row (a line of `lanes` from c, or a scalar).
    auto value = [&](const Value& c, int lanes) -> Value {
      const Value off = xrow + cast(u64, c);
      auto at = [&](const Array& a) { return as_f32(lanes > 1 ? load_line(a, off, lanes) : Value(a[off])); };
      if (!gated) return at(x);
      Value g = at(x);
      return g / (fast_exp(-g) + 1.0f) * at(u);
    };
    // The terms of v (f32 line or scalar), stored at column c of each segment.
    auto store = [&](const Value& c, const Value& v, int lanes) {
      const auto terms = terms_of(v, parts);
      const Value at = yrow + cast(u64, c);
      for (int j = 0; j < parts; ++j) {
        const Value& t = terms[size_t(bf16_term_index(j, parts, side))];
        const Value dst = at + seg64 * uint64_t(j);
        if (lanes > 1) store_line(y, dst, t);
        else y[dst] = t;
      }
    };
    // Whole lines, then the row's last partial line and the zero padding to
    // seg one value at a time (loops, not unrolled copies: each copy of the
    // terms cost ~100 ms of LLVM codegen on a cold compile).
    const Value c1 = min(c0 + kColsPerItem, seg), whole = max(min(c1, cols) / 16u * 16u, c0);
    for_range(c0, whole, [&](Value c) { store(c, value(c, 16), 16); }, 16u);
    for_range(whole, c1, [&](Value cc) {
      Var v = var(constant(f32, 0.0f));
      if_(cc < cols, [&] { v = value(cc, 1); });
      store(cc, v.get(), 1);
    });
  });
}

ir::Kernel bf16_terms_panels_kernel(int parts, ir::Type src) {
  const bool wide = src.kind == ir::ScalarKind::F32, half = src.kind == ir::ScalarKind::F16;
  if (wide ? parts != 1 && parts != 3 : half ? parts != 1 && parts != 3 && parts != 4 : (src.kind != ir::ScalarKind::BF16 || parts != 1))
    throw std::invalid_argument("bf16_terms_panels_kernel: f32 B in 1 or 3 parts, f16 in 1, 3 or 4, bf16 in 1");
  return kernel(std::string("bf16_terms_panels_") +
                    (src.kind == ir::ScalarKind::BF16 ? "bf16" : parts == 1 ? "h" : parts == 3 ? "hlh" : "hlhl") + (half ? "_f16" : ""),
                [&](KernelBuilder& kb) {
    auto b = kb.input("b", src);
    auto bp = kb.output("bp", u32);
    auto R = kb.scalar("rows", u32);
    auto C = kb.scalar("cols", u32);
    auto S = kb.scalar("seg", u32);
    kb.workgroup(1);
    // Work-item (c, h, p, z): pairs [16c, 16c + 16) of rows [32p + 16h, +16) of batch z.
    const Value c = group_id(0), h = group_id(1) % 2u, p = group_id(1) / 2u, z = group_id(2);
    const Value sp = S / 2u, kpt = sp * uint32_t(parts);  // pair rows per part, per panel
    const Value np = (R + 31u) / 32u;
    const Value k0 = c * 32u;
    auto row_at = [&](const Value& row) { return (cast(u64, z) * cast(u64, R) + cast(u64, row)) * cast(u64, C) + cast(u64, k0); };
    // Part j's pair row pr of this half of the panel: 16 words (its rows).
    auto word_at = [&](int j, const Value& pr) { return panel_word(z, np, p, kpt, sp, j, pr, h); };
    auto words = shared_array(line(u32, 16), 16 * parts);  // per part, 16 rows' pair words
    if_(k0 + 32u <= C, [&] {
      // A whole chunk of 32 k (so all of its 16 pair rows exist): per row,
      // the 16 pair words of each term (term t of k0 + 2q in the low half,
      // k0 + 2q + 1 in the high), then 16×16 transposes into pair rows.
      // (The rows in a loop through the scratch of their words: 16 unrolled
      // copies of the terms were ~0.4 s of a cold compile.)
      for_range(0u, 16u, [&](Value i) {
        const Value row = p * 32u + h * 16u + i, at = row_at(row);
        std::array<Var, 2> lines = {var(splat(constant(f32, 0.0f), 16)), var(splat(constant(f32, 0.0f), 16))};
        if_(row < R, [&] {
          lines[0] = as_f32(load_line(b, at));
          lines[1] = as_f32(load_line(b, at + uint64_t(16)));
        });
        // (bf16 B is its own hi term, exact.)
        const auto t0 = terms_of(lines[0].get(), parts), t1 = terms_of(lines[1].get(), parts);
        for (int t = 0; t < parts; ++t) {
          const size_t ti = size_t(bf16_term_index(t, parts, Bf16TermsSide::B));
          Value w0 = bitcast(line(u32, 8), t0[ti]), w1 = bitcast(line(u32, 8), t1[ti]);
          std::vector<Value> ws;
          for (int q = 0; q < 16; ++q) ws.push_back(extract(q < 8 ? w0 : w1, q % 8));
          words[i + uint32_t(16 * t)] = make_line(ws);
        }
      });
      for (int j = 0; j < parts; ++j) {
        std::array<Value, 16> rows;
        for (uint32_t i = 0; i < 16; ++i) rows[i] = words[constant(u32, i + uint32_t(16 * j))];
        const std::array<Value, 16> cols = transpose16(rows);
        for (uint32_t q = 0; q < 16; ++q) store_line(bp, word_at(j, c * 16u + q), cols[q]);
      }
    }).else_([&] {
      // The rows' last partial chunk, zeros past K: one word at a time, in
      // loops (unrolled, this tail was most of a cold compile's ~2 s).
      for_range(0u, 16u, [&](Value i) {
        const Value row = p * 32u + h * 16u + i, at = row_at(row);
        for_range(0u, 16u, [&](Value q) {
          const Value pr = c * 16u + q;
          if_(pr < sp, [&] {
            std::array<Var, 2> x = {var(constant(f32, 0.0f)), var(constant(f32, 0.0f))};
            for (uint32_t e = 0; e < 2; ++e)
              if_(row < R, [&] {
                if_(k0 + q * 2u + e < C, [&] { x[e] = as_f32(Value(b[at + cast(u64, q * 2u + e)])); });
              });
            const auto t0 = terms_of(x[0].get(), parts), t1 = terms_of(x[1].get(), parts);
            for (int j = 0; j < parts; ++j) {
              const size_t ti = size_t(bf16_term_index(j, parts, Bf16TermsSide::B));
              bp[word_at(j, pr) + cast(u64, i)] = pair_word(t0[ti], t1[ti]);
            }
          });
        });
      });
    });
  });
}

ir::Kernel bf16_terms_kn_panels_kernel(int parts, ir::Type src) {
  const bool half = src.kind == ir::ScalarKind::F16;
  if ((!half && src.kind != ir::ScalarKind::F32) || parts < 1 || parts == 2 || parts > (half ? 4 : 3))
    throw std::invalid_argument("bf16_terms_kn_panels_kernel: f32 B in 1 or 3 parts, f16 in 1, 3 or 4");
  return kernel(std::string("bf16_terms_kn_panels_") + (parts == 1 ? "h" : parts == 3 ? "hlh" : "hlhl") + (half ? "_f16" : ""),
                [&](KernelBuilder& kb) {
    auto b = kb.input("b", src);
    auto bp = kb.output("bp", u32);
    auto K = kb.scalar("k", u32);
    auto N = kb.scalar("n", u32);
    auto S = kb.scalar("seg", u32);
    kb.workgroup(1);
    // Work-item (c, p, z): pair rows [16c, 16c + 16) of panel p (columns
    // [32p, 32p + 32): whole cache lines of B's rows and of the panel's) of batch z.
    const Value c = group_id(0), p = group_id(1), z = group_id(2);
    const Value sp = S / 2u, kpt = sp * uint32_t(parts), np = (N + 31u) / 32u;
    for_range(c * 16u, min(c * 16u + 16u, sp), [&](Value pr) {
     for (uint32_t h = 0; h < 2; ++h) {
      const Value col0 = p * 32u + h * 16u, whole = col0 + 16u <= N;
      // Rows k and k + 1 of the 16 columns (zeros past K and N): each pair
      // word is a column's term of row k in the low half, of row k + 1 in
      // the high one, so rows of K×N become pair rows lane by lane.
      std::array<Value, 2> x;
      for (uint32_t e = 0; e < 2; ++e) {
        const Value k = pr * 2u + e;
        const Value at = (cast(u64, z) * cast(u64, K) + cast(u64, k)) * cast(u64, N) + cast(u64, col0);
        Var v = var(splat(constant(f32, 0.0f), 16));
        if_(k < K, [&] {
          if_(whole, [&] { v = as_f32(load_line(b, at)); }).else_([&] {
            std::vector<Value> lanes;
            for (uint32_t q = 0; q < 16; ++q) {
              Var y = var(constant(f32, 0.0f));
              if_(col0 + q < N, [&] { y = as_f32(Value(b[at + uint64_t(q)])); });
              lanes.push_back(y.get());
            }
            v = make_line(lanes);
          });
        });
        x[e] = v.get();
      }
      const auto t0 = terms_of(x[0], parts), t1 = terms_of(x[1], parts);
      for (int j = 0; j < parts; ++j) {
        const size_t ti = size_t(bf16_term_index(j, parts, Bf16TermsSide::B));
        store_line(bp, panel_word(z, np, p, kpt, sp, j, pr, constant(u32, h)), pair_word(t0[ti], t1[ti]));
      }
     }
    });
  });
}

namespace {

// A panels launch (either form): `np` panels of parts·seg bf16 rows of 32
// per batch, written into a new temporary; grid y `gy` per batch; scalars
// (the source's two sizes, seg).
int plan_panels_step(Plan& pl, size_t n_io, ir::Kernel k, int src, int64_t batch, int64_t np, int64_t gy, int64_t seg, int parts,
                     int64_t s0, int64_t s1) {
  const int y = pl.add_temp(n_io, size_t(batch * np * 32 * parts * seg) * 2);
  Step s;
  s.kernel = std::move(k);
  s.dims.grid = {groups_for(seg, 32), uint32_t(gy), uint32_t(batch)};
  s.buffers = {src, y};
  s.scalars = {ir::scalar_slot(uint32_t(s0)), ir::scalar_slot(uint32_t(s1)), ir::scalar_slot(uint32_t(seg))};
  pl.steps.push_back(std::move(s));
  return y;
}

}  // namespace

int plan_bf16_terms_kn_panels(Plan& pl, size_t n_io, int src, int64_t batch, int64_t k, int64_t n, int64_t seg, int parts,
                              ir::Type src_dt) {
  const int64_t np = (n + 31) / 32;
  return plan_panels_step(pl, n_io, bf16_terms_kn_panels_kernel(parts, src_dt), src, batch, np, np, seg, parts, k, n);
}

int plan_bf16_terms_panels(Plan& pl, size_t n_io, int src, int64_t batch, int64_t rows, int64_t cols, int64_t seg, int parts,
                           ir::Type src_dt) {
  const int64_t np = (rows + 31) / 32;
  return plan_panels_step(pl, n_io, bf16_terms_panels_kernel(parts, src_dt), src, batch, np, 2 * np, seg, parts, rows, cols);
}

int plan_bf16_terms(Plan& pl, size_t n_io, int src, int64_t rows, int64_t cols, int64_t seg, int64_t pitch, int parts,
                    Bf16TermsSide side, int up, ir::Type src_dt) {
  if (seg < cols) throw std::logic_error("plan_bf16_terms: seg < cols");
  const int y = pl.add_temp(n_io, size_t(rows * parts * seg) * 2);
  Step s;
  const bool gated = up >= 0;
  s.kernel = bf16_terms_kernel(parts, side, gated, src_dt);
  s.dims.grid = {groups_for(seg, kColsPerItem), uint32_t(rows), 1};
  s.buffers = gated ? std::vector<int>{src, up, y} : std::vector<int>{src, y};
  s.scalars = {ir::scalar_slot(uint32_t(cols)), ir::scalar_slot(uint32_t(seg)), ir::scalar_slot(uint32_t(pitch))};
  pl.steps.push_back(std::move(s));
  return y;
}

}  // namespace kgen::ops
