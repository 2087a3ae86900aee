// C = A·B (or A·Bᵀ) with K and N of at most 16, f32, on the CPU: 16 rows of
// A at a time with a row per lane. The K lines holding 16 rows become K
// column lines (ops/layout/transpose_block.h), each output column is K fmas of them
// with B's values broadcast, and the N column lines are regrouped into the
// 16 output rows. The packed GEMM spends a register block and its packing on
// products this thin (Zen 5, 100000 × 3 × 3: 11.6 GB/s).
#include "ops/matmul/narrow.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/layout/transpose_block.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel matmul_narrow_kernel(int k, int n, bool trans_b) {
  if (k < 1 || k > 16 || n < 1 || n > 16) throw std::invalid_argument("matmul_narrow_kernel: K and N in 1..16");
  const uint32_t K = uint32_t(k), N = uint32_t(n);
  const std::string name = "matmul_narrow_k" + std::to_string(k) + "_n" + std::to_string(n) + (trans_b ? "_bt" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto a = kb.input("a", f32);
    auto b = kb.input("b", f32);
    auto c = kb.output("c", f32);
    auto M = kb.scalar("m", u32);
    kb.workgroup(1);
    Value z = group_id(1);
    Value abase = cast(u64, z * M) * uint64_t(K), cbase = cast(u64, z * M) * uint64_t(N);
    Value bbase = cast(u64, z) * uint64_t(K * N);
    Value r0 = group_id(0) * kNarrowMatmulRows, r_end = min(r0 + kNarrowMatmulRows, M);
    // B's K·N values, read once per work-item.
    std::vector<std::vector<Value>> bv(K);
    for (uint32_t i = 0; i < K; ++i)
      for (uint32_t j = 0; j < N; ++j) bv[i].push_back(b[bbase + uint64_t(trans_b ? j * K + i : i * N + j)]);
    auto product = [&](const std::vector<Value>& cols, int lanes) {
      std::vector<Value> out;
      for (uint32_t j = 0; j < N; ++j) {
        auto bc = [&](uint32_t i) { return lanes > 1 ? splat(bv[i][j], lanes) : bv[i][j]; };
        Value o = cols[0] * bc(0);
        for (uint32_t i = 1; i < K; ++i) o = fma(cols[i], bc(i), o);
        out.push_back(o);
      }
      return out;
    };
    map_rows_in_lanes(a, abase, K, c, cbase, N, r0, r_end, product);
  });
}

}  // namespace kgen::ops
