// GEMV for the GPU (matmul impl=3): C (M×N) = A (M×K) · Bᵀ with B as N×K
// rows (the LLM weight layout), M ≤ a few rows. A workgroup per output column
// n: its work-items stride B's row n (a subgroup reads 32 consecutive
// weights), keep one partial sum per row of A, and the workgroup reduces them
// (ops/common/gpu_reduce.h). The tiled GPU GEMM gives each work-item a 4×4 block,
// which at M = 1 leaves 3/4 of its lanes' work padding and N/16 workgroups
// (1×4096×4096 on an H200: 0.40 ms, ~170 GB/s of weights).
#include <memory>
#include <stdexcept>
#include <vector>

#include "dsl/dsl.h"
#include "ops/common/gpu_reduce.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/matmul.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel gemv_gpu_kernel(ir::Type dt, int m, int wg, bool subgroups, const EpilogueSpec* epi) {
  if (m < 1 || m > 8) throw std::invalid_argument("gemv_gpu_kernel: 1..8 rows of A");
  if (wg < 32 || wg > 1024 || (wg & (wg - 1))) throw std::invalid_argument("gemv_gpu_kernel: wg a power of two in 32..1024");
  const uint32_t WG = uint32_t(wg), M = uint32_t(m);
  std::string name = "gemv_gpu_bt_" + dt.str() + "_m" + std::to_string(m) + (subgroups ? "_sg" : "") + "_wg" + std::to_string(wg) + (epi ? epi->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto a = kb.input("a", dt);
    auto b = kb.input("b", dt);
    auto c = kb.output("c", epi ? ir::Type(epi->out) : f32);
    std::unique_ptr<EpilogueEmitter> em;
    if (epi) em = std::make_unique<EpilogueEmitter>(*epi), em->declare(kb);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    if (em) em->sizes(constant(u32, M), N);
    kb.workgroup(WG);
    auto sh = shared_array(f32, WG);
    auto f = [&](const Value& v) { return v.type().kind == ir::ScalarKind::F32 ? v : cast(f32, v); };
    Value n = wrapped_group_id(), z = group_id(2), t = local_id(0);
    if_(n < N, [&] {
      Value brow = (z * N + n) * K, arow = z * M * K;
      std::vector<Var> acc;
      for (uint32_t i = 0; i < M; ++i) acc.push_back(var(0.0f));
      for_range(t, K, [&](Value k) {
        Value bv = f(b[brow + k]);
        for (uint32_t i = 0; i < M; ++i) acc[i] = fma(f(a[arow + i * K + k]), bv, acc[i].get());
      }, WG);
      for (uint32_t i = 0; i < M; ++i) {
        Value r = group_reduce(acc[i].get(), GroupCombine::Sum, sh, WG, subgroups);
        if_(t == 0u, [&] { c[(z * M + i) * N + n] = em ? em->apply(r, z, constant(u32, i), n) : r; });
      }
    });
  });
}

}  // namespace kgen::ops
