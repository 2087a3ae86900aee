// GPU GEMM: the classic shared-memory tiling with a register block per
// work-item. A (wg·tm)×tk tile of A and a tk×(wg·tn) tile of B are staged in
// shared memory by all wg² work-items (zero outside the matrices, so any M,
// N, K work and the inner loop has no guards); each work-item then
// accumulates tm×tn outputs, taking rows ty + wg·i and columns tx + wg·j so
// neighbouring work-items read neighbouring shared words and write
// neighbouring C elements. f16/bf16 inputs become f32 on their way to shared
// memory (f32 accumulation, f32 C).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/matmul/bf16_round.h"
#include "ops/common/fast_exp.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/k_split.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// Both GEMM kernels' parameters: buffers a, b (dt), c (f32, or the
// epilogue's type) and the epilogue's operands; scalars m, n, k.
struct GemmArgs {
  Array A, B, C;
  Value M, N, K;
  std::shared_ptr<EpilogueEmitter> em;  // null: C stored as summed
  // C's element (row, col) of batch bz from the sum v.
  void store(const Value& at, const Value& v, const Value& bz, const Value& row, const Value& col) const {
    if (em) C[at] = em->apply(v, bz, row, col);
    else C[at] = v;
  }
};
GemmArgs gemm_args(KernelBuilder& kb, ir::Type dt, const EpilogueSpec* epi) {
  GemmArgs g;
  g.A = kb.input("a", dt);
  g.B = kb.input("b", dt);
  g.C = kb.output("c", epi ? ir::Type(epi->out) : f32);
  if (epi) g.em = std::make_shared<EpilogueEmitter>(*epi), g.em->declare(kb);
  g.M = kb.scalar("m", u32);
  g.N = kb.scalar("n", u32);
  g.K = kb.scalar("k", u32);
  if (epi) g.em->sizes(g.M, g.N);
  return g;
}

// The vec forms (ops/matmul/matmul.h: GpuTile) over A and B (or Bᵀ) in memory: interior
// tiles stage without bounds checks, edge tiles check each element. A K
// split's group z = batch·ks + split takes K range [kbeg, kend) (whole tk
// steps) and writes its partial C at group z's M×N slab. Swapped (Bᵀ): the
// tile's rows are B's rows, its columns A's rows, and C is stored transposed.
ir::Kernel gemm_gpu_vec_kernel(ir::Type dt, bool trans_b, const GpuTile& t, const EpilogueSpec* epi) {
  const uint32_t TK = uint32_t(t.tk), TN = uint32_t(t.tn), KS = uint32_t(t.ks);
  const bool prefetch = t.vec >= 2, double_buffer = t.vec == 3, swapped = t.sw == 1;
  std::string name = "matmul_gpu_vec_" + dt.str() + (trans_b ? "_t" : "_n") + "_tk" + std::to_string(TK) +
                     (TN != 8 ? "_tn" + std::to_string(TN) : "") + (prefetch ? "_pf" : "") + (double_buffer ? "_db" : "") +
                     (KS > 1 ? "_ks" + std::to_string(KS) : "") + (swapped ? "_sw" : "") + (epi ? epi->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    const GemmArgs g = gemm_args(kb, dt, epi);
    auto [A, B, C, M, N, K, em] = g;
    kb.workgroup(16, 16);
    Value bz = KS > 1 ? group_id(2) / KS : group_id(2);
    Value kbeg = constant(u32, 0u), klen = K;
    if (KS > 1) {
      const KRange r = k_split_range(K, KS, TK, group_id(2) % KS);
      kbeg = r.begin, klen = r.end - r.begin;
    }
    Value abase = bz * M * K + kbeg, bbase = bz * K * N, cbase = group_id(2) * M * N;
    auto f = [&](const Value& v) { return v.type() == f32 ? v : cast(f32, v); };
    auto element = [&](const Array& buf, const Value& at, const Value& ok, bool guarded) {
      if (!guarded) return f(buf[at]);
      Var v = var(f32, 0.0f);
      if_(ok, [&] { v = f(buf[at]); });
      return v.get();
    };
    // A's row r and B's column c (Bᵀ's row c) at k of this split.
    auto a_at = [&](const Value& r, const Value& k, bool g) { return element(A, abase + r * K + k, r < M && k < klen, g); };
    auto b_at = [&](const Value& c, const Value& k, bool g) {
      return element(B, trans_b ? bbase + c * K + kbeg + k : bbase + (kbeg + k) * N + c, c < N && k < klen, g);
    };
    LineTileOperands io;
    if (swapped) {
      io.a = b_at;
      io.b = a_at;
      io.store = [&](const Value& row, const Value& col, const Value& v) { g.store(cbase + col * N + row, v, bz, col, row); };
      io.b_k_fastest = true;
      line_tile_gemm(io, N, M, klen, TK, TN, prefetch, double_buffer);
    } else {
      io.a = a_at;
      io.b = b_at;
      io.store = [&](const Value& row, const Value& col, const Value& v) { g.store(cbase + row * N + col, v, bz, row, col); };
      io.b_k_fastest = trans_b;
      line_tile_gemm(io, M, N, klen, TK, TN, prefetch, double_buffer);
    }
  });
}

}  // namespace

ir::Kernel gemm_gpu_kernel(ir::Type dt, bool trans_b, const GpuTile& t, const EpilogueSpec* epi) {
  if (epi && t.ks > 1) throw std::invalid_argument("gemm_gpu_kernel: a K split leaves the epilogue to the sum of its partials");
  if (t.vec) return gemm_gpu_vec_kernel(dt, trans_b, t, epi);
  const uint32_t WG = uint32_t(t.wg), TM = uint32_t(t.tm), TN = uint32_t(t.tn), TK = uint32_t(t.tk);
  const uint32_t BM = WG * TM, BN = WG * TN, NT = WG * WG;
  std::string name = "matmul_gpu_" + dt.str() + (trans_b ? "_t" : "_n") + "_wg" + std::to_string(WG) + "_tm" +
                     std::to_string(TM) + "_tn" + std::to_string(TN) + "_tk" + std::to_string(TK) + (epi ? epi->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    const GemmArgs g = gemm_args(kb, dt, epi);
    auto [A, B, C, M, N, K, em] = g;
    kb.workgroup(WG, WG);
    auto As = shared_array(f32, int64_t(TK * BM));  // [k][row]
    auto Bs = shared_array(f32, int64_t(TK * BN));  // [k][col]
    Value tx = local_id(0), ty = local_id(1), tid = ty * WG + tx;
    Value bz = group_id(2);
    Value row0 = group_id(1) * BM, col0 = group_id(0) * BN;
    Value abase = bz * M * K, bbase = bz * K * N, cbase = bz * M * N;
    auto f = [&](const Value& v) { return v.type() == f32 ? v : cast(f32, v); };
    std::vector<Var> acc;
    for (uint32_t i = 0; i < TM * TN; ++i) acc.push_back(var(f32, 0.0f));
    for_range(0u, K, [&](Value k0) {
      // Stage the tiles: consecutive work-items take consecutive source
      // elements (k fastest for A and for Bᵀ, n fastest for B).
      for (uint32_t e = 0; e < (BM * TK + NT - 1) / NT; ++e) {
        Value idx = tid + e * NT;
        Value r = idx / TK, kk = idx % TK;
        if_(idx < BM * TK, [&] {
          Value row = row0 + r, k = k0 + kk;
          if_(row < M && k < K, [&] { As[kk * BM + r] = f(A[abase + row * K + k]); }).else_([&] { As[kk * BM + r] = 0.0f; });
        });
      }
      for (uint32_t e = 0; e < (BN * TK + NT - 1) / NT; ++e) {
        Value idx = tid + e * NT;
        Value n = trans_b ? idx / TK : idx % BN, kk = trans_b ? idx % TK : idx / BN;
        if_(idx < BN * TK, [&] {
          Value col = col0 + n, k = k0 + kk;
          Value at = trans_b ? bbase + col * K + k : bbase + k * N + col;
          if_(col < N && k < K, [&] { Bs[kk * BN + n] = f(B[at]); }).else_([&] { Bs[kk * BN + n] = 0.0f; });
        });
      }
      barrier();
      for_range(0u, TK, [&](Value kk) {
        std::vector<Value> av, bv;
        for (uint32_t i = 0; i < TM; ++i) av.push_back(As[kk * BM + ty + i * WG]);
        for (uint32_t j = 0; j < TN; ++j) bv.push_back(Bs[kk * BN + tx + j * WG]);
        for (uint32_t i = 0; i < TM; ++i)
          for (uint32_t j = 0; j < TN; ++j) acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
      });
      barrier();
    }, TK);
    for (uint32_t i = 0; i < TM; ++i)
      for (uint32_t j = 0; j < TN; ++j) {
        Value row = row0 + ty + i * WG, col = col0 + tx + j * WG;
        if_(row < M && col < N, [&] {
          Value v = acc[i * TN + j].get();  // (before the index: the order the plain store records)
          g.store(cbase + row * N + col, v, bz, row, col);
        });
      }
  });
}

ir::Kernel gated_silu_gpu_kernel(bool round_bf16, bool store_bf16) {
  if (store_bf16 && !round_bf16) throw std::invalid_argument("gated_silu_gpu_kernel: H stored as bf16 is H rounded to bf16");
  return kernel(std::string("gated_mlp_silu_mul") + (store_bf16 ? "_hbf16" : round_bf16 ? "_hbf" : ""), [&](KernelBuilder& kb) {
    auto g = kb.input("g", f32);
    auto u = kb.input("u", f32);
    auto h = kb.output("h", store_bf16 ? bf16 : f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(256);
    Value i = wrapped_group_id() * 256u + local_id(0);
    if_(i < n, [&] {
      Value gv = g[i];
      Value hv = gv / (exp(-gv) + 1.0f) * u[i];
      if (store_bf16) h[i] = bitcast(bf16, cast(u16, bf16_upper_bits(hv) >> 16u));
      else h[i] = round_bf16 ? bitcast(f32, bf16_upper_bits(hv)) : hv;
    });
  });
}

}  // namespace kgen::ops
