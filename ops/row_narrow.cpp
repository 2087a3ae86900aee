// Row ops of narrow rows, 16 rows at a time with a row per lane.
// Softmax and log-softmax of 2-32 columns (a
// mixture-of-experts router over 8 experts, 10 classes): 16 rows at a time
// with a row per lane. A row-per-work-item walk spends a line's horizontal
// max and sum on every row (~75 cycles a row at 16 columns: 131072 × 16 at
// 6.8 GB/s); here the n lines holding 16 rows are regrouped into n column
// lines (transpose_block.h: n - 1 shuffles a line), the max, exps and sum
// are lane-wise across them, and the outputs are regrouped back.
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/fast_exp.h"
#include "ops/fast_math.h"
#include "ops/rowwise.h"
#include "ops/transpose_block.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel softmax_narrow_rows(ir::Type dt, int n, bool log_softmax, int rpg) {
  if (n < 2 || n > 32) throw std::invalid_argument("softmax_narrow_rows: 2..32 columns");
  if (rpg < 16 || rpg % 16) throw std::invalid_argument("softmax_narrow_rows: rows per group a multiple of 16");
  if (dt != f32 && dt != f16 && dt != bf16) throw std::invalid_argument("softmax_narrow_rows: f32, f16 or bf16");
  const uint32_t N = uint32_t(n);
  const std::string name = std::string(log_softmax ? "log_softmax" : "softmax") + "_narrow" + std::to_string(n) + "_" + dt.str() +
                           "_r" + std::to_string(rpg);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto nrows = kb.scalar("nrows", u32);
    kb.workgroup(1);
    Value r0 = group_id(0) * uint32_t(rpg), r_end = min(r0 + uint32_t(rpg), nrows);
    auto widen = [&](const Value& v) { return dt == f32 ? v : cast(line(f32, v.type().lanes), v); };
    auto narrow = [&](const Value& v) { return dt == f32 ? v : cast(line(dt, v.type().lanes), v); };
    // The outputs of one row per lane from its n columns (lines or scalars).
    auto rows_out = [&](const std::vector<Value>& cols, bool lines) {
      auto bc = [&](float f) { return lines ? splat(constant(f32, f), 16) : constant(f32, f); };
      Value m = cols[0];
      for (uint32_t c = 1; c < N; ++c) m = select(cols[c] > m, cols[c], m);  // as the row kernels' grow_max
      std::vector<Value> d, e, out;
      Value s = bc(0.0f);
      for (uint32_t c = 0; c < N; ++c) {
        d.push_back(cols[c] - m);
        e.push_back(fast_exp(d.back(), true));
        s = s + e.back();
      }
      if (log_softmax) {
        Value lg = lines ? fast_log(s) : log(s);
        for (uint32_t c = 0; c < N; ++c) out.push_back(d[c] - lg);
      } else {
        Value inv = bc(1.0f) / s;
        for (uint32_t c = 0; c < N; ++c) out.push_back(e[c] * inv);
      }
      return out;
    };
    Value full = (r_end - r0) / 16u;
    // Blocks of 16 rows, two per step up to 8 columns: each block is one
    // dependency chain (regroup, max, exp, sum, divide or log, regroup), and
    // two independent chains in one step let the core overlap them (Zen 5, 1
    // thread, 65536 × 3: softmax 39 -> 45 GB/s, log-softmax 21.6 -> 24.4).
    // Wider blocks have enough independent work of their own, and two
    // spilled (× 16: 25 -> 33 GB/s with one; × 20: 19.6 -> 25.4).
    auto block = [&](const std::vector<Value>& ats) {
      std::vector<std::vector<Value>> outs;
      for (const Value& at : ats) {
        std::vector<Value> in;
        for (uint32_t k = 0; k < N; ++k) in.push_back(widen(load_line(x, at + k * 16u)));
        outs.push_back(interleave_lines(rows_out(deinterleave_lines(in), true)));
      }
      for (size_t b = 0; b < ats.size(); ++b)
        for (uint32_t k = 0; k < N; ++k) store_line(y, ats[b] + k * 16u, narrow(outs[b][k]));
    };
    if (N <= 8) {
      for_range(0u, full / 2u, [&](Value b) {
        Value at = (r0 + b * 32u) * N;
        block({at, at + 16u * N});
      });
      if_(full % 2u != 0u, [&] { block({(r0 + (full - 1u) * 16u) * N}); });
    } else {  // one block has enough independent work (and compiles in half the time)
      for_range(0u, full, [&](Value b) { block({(r0 + b * 16u) * N}); });
    }
    // The group's last rows (fewer than 16), one at a time.
    for_range(r0 + full * 16u, r_end, [&](Value r) {
      std::vector<Value> cols;
      for (uint32_t c = 0; c < N; ++c) cols.push_back(dt == f32 ? Value(x[r * N + c]) : cast(f32, x[r * N + c]));
      std::vector<Value> out = rows_out(cols, false);
      for (uint32_t c = 0; c < N; ++c) y[r * N + c] = dt == f32 ? out[c] : cast(dt, out[c]);
    });
  });
}

// rmsnorm / layernorm of 2..16 columns: the statistics lane-wise across the
// column lines, the weights (and biases) a broadcast value per column.
ir::Kernel norm_narrow_rows(ir::Type dt, int n, bool rms, int rpg) {
  if (n < 2 || n > 16) throw std::invalid_argument("norm_narrow_rows: 2..16 columns");
  if (rpg < 16 || rpg % 16) throw std::invalid_argument("norm_narrow_rows: rows per group a multiple of 16");
  if (dt != f32 && dt != f16 && dt != bf16) throw std::invalid_argument("norm_narrow_rows: f32, f16 or bf16");
  const uint32_t N = uint32_t(n);
  const std::string name = std::string(rms ? "rmsnorm" : "layernorm") + "_narrow" + std::to_string(n) + "_" + dt.str() + "_r" +
                           std::to_string(rpg);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto w = kb.input("w", dt);
    Array b;
    if (!rms) b = kb.input("b", dt);
    auto y = kb.output("y", dt);
    auto eps = kb.scalar("eps", f32);
    auto nrows = kb.scalar("nrows", u32);
    kb.workgroup(1);
    Value r0 = group_id(0) * uint32_t(rpg), r_end = min(r0 + uint32_t(rpg), nrows);
    auto f32_of = [&](const Value& v) { return dt == f32 ? v : cast(f32, v); };
    std::vector<Value> wv, bv;
    for (uint32_t c = 0; c < N; ++c) {
      wv.push_back(f32_of(w[c]));
      if (!rms) bv.push_back(f32_of(b[c]));
    }
    // The outputs of one row per lane from its n columns (lines or scalars).
    auto rows_out = [&](const std::vector<Value>& cols, bool lines) {
      auto bc = [&](const Value& v) { return lines ? splat(v, 16) : v; };
      const Value inv_n = bc(constant(f32, 1.0f / float(N)));
      std::vector<Value> d;
      if (rms) {
        d = cols;
      } else {
        Value s = cols[0];
        for (uint32_t c = 1; c < N; ++c) s = s + cols[c];
        Value mean = s * inv_n;
        for (uint32_t c = 0; c < N; ++c) d.push_back(cols[c] - mean);
      }
      Value ss = d[0] * d[0];
      for (uint32_t c = 1; c < N; ++c) ss = fma(d[c], d[c], ss);
      Value r = rsqrt(ss * inv_n + bc(eps));
      std::vector<Value> out;
      for (uint32_t c = 0; c < N; ++c) out.push_back(rms ? d[c] * r * bc(wv[c]) : fma(d[c] * r, bc(wv[c]), bc(bv[c])));
      return out;
    };
    Value full = (r_end - r0) / 16u;
    for_range(0u, full, [&](Value blk) {
      Value at = (r0 + blk * 16u) * N;
      std::vector<Value> in;
      for (uint32_t k = 0; k < N; ++k) {
        Value v = load_line(x, at + k * 16u);
        in.push_back(dt == f32 ? v : cast(line(f32, 16), v));
      }
      std::vector<Value> out = interleave_lines(rows_out(deinterleave_lines(in), true));
      for (uint32_t k = 0; k < N; ++k) store_line(y, at + k * 16u, dt == f32 ? out[k] : cast(line(dt, 16), out[k]));
    });
    for_range(r0 + full * 16u, r_end, [&](Value r) {
      std::vector<Value> cols;
      for (uint32_t c = 0; c < N; ++c) cols.push_back(f32_of(x[r * N + c]));
      std::vector<Value> out = rows_out(cols, false);
      for (uint32_t c = 0; c < N; ++c) y[r * N + c] = dt == f32 ? out[c] : cast(dt, out[c]);
    });
  });
}

}  // namespace kgen::ops
