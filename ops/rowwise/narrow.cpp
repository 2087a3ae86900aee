// Row ops of narrow rows, 16 rows at a time with a row per lane: softmax
// and log-softmax of 2-32 columns (a mixture-of-experts router over 8
// experts, 10 classes), rmsnorm and layernorm of 2-16. A row-per-work-item
// walk spends a line's horizontal max and sum on every row (~75 cycles a row
// at 16 columns); here the n lines holding 16 rows are regrouped into n
// column lines (ops/layout/transpose_block.h: n - 1 shuffles a line), the
// statistics are lane-wise across them, and the outputs are regrouped back.
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/common/fast_exp.h"
#include "ops/common/fast_math.h"
#include "ops/rowwise/rowwise.h"
#include "ops/layout/transpose_block.h"

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
    auto rows_out = [&](const std::vector<Value>& cols, int lanes) {
      const bool lines = lanes > 1;
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
    // Blocks of 16 rows, two per step up to 8 columns: each block is one
    // dependency chain (regroup, max, exp, sum, divide or log, regroup), and
    // two independent chains in one step let the core overlap them. Wider
    // blocks have enough independent work of their own, and two spill.
    const Value zero = constant(u64, 0);
    map_rows_in_lanes(x, zero, N, y, zero, N, r0, r_end, rows_out, N <= 8 ? 2 : 1);
  });
}

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
    std::vector<Value> wv, bv;  // the weights (and biases): a value per column
    for (uint32_t c = 0; c < N; ++c) {
      wv.push_back(f32_of(w[c]));
      if (!rms) bv.push_back(f32_of(b[c]));
    }
    // The outputs of one row per lane from its n columns (lines or scalars).
    auto rows_out = [&](const std::vector<Value>& cols, int lanes) {
      auto bc = [&](const Value& v) { return lanes > 1 ? splat(v, 16) : v; };
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
    const Value zero = constant(u64, 0);
    map_rows_in_lanes(x, zero, N, y, zero, N, r0, r_end, rows_out);
  });
}

}  // namespace kgen::ops
