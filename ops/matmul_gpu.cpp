// GPU GEMM: the classic shared-memory tiling with a register block per
// work-item. A (wg·tm)×tk tile of A and a tk×(wg·tn) tile of B are staged in
// shared memory by all wg² work-items (zero outside the matrices, so any M,
// N, K work and the inner loop has no guards); each work-item then
// accumulates tm×tn outputs, taking rows ty + wg·i and columns tx + wg·j so
// neighbouring work-items read neighbouring shared words and write
// neighbouring C elements. f16/bf16 inputs become f32 on their way to shared
// memory (f32 accumulation, f32 C).
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/fast_exp.h"
#include "ops/matmul.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// The vec = 1 form (matmul.h: GpuTile): 256 work-items, a 128×128 C tile,
// A and B staged as f32x4 lines of 4 rows (A) or 4 columns (B) at one k, so
// the inner loop reads its operands 16 bytes at a time. Work-item (tx, ty)
// owns rows {4·ty, 64 + 4·ty} + 0..3 and columns {4·tx, 64 + 4·tx} + 0..3:
// a quarter-warp's 16-byte reads are 128 contiguous bytes (no bank
// conflicts; the A reads of a warp are two broadcasts). Interior tiles stage
// without bounds checks; edge tiles check each element (zero outside).
ir::Kernel gemm_gpu_vec_kernel(ir::Type dt, bool trans_b, uint32_t TK, bool prefetch) {
  constexpr uint32_t WG = 16, NT = 256, BM = 128, BN = 128, L = 32;  // L: lines per k row of a tile
  const uint32_t E = TK * L / NT;                                     // lines of A (and of B) per work-item
  std::string name = "matmul_gpu_vec_" + dt.str() + (trans_b ? "_t" : "_n") + "_tk" + std::to_string(TK) + (prefetch ? "_pf" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto A = kb.input("a", dt);
    auto B = kb.input("b", dt);
    auto C = kb.output("c", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(WG, WG);
    auto As = shared_array(line(f32, 4), int64_t(TK * L));  // [k][4-row line]
    auto Bs = shared_array(line(f32, 4), int64_t(TK * L));  // [k][4-column line]
    Value tx = local_id(0), ty = local_id(1), tid = ty * WG + tx;
    Value bz = group_id(2);
    Value row0 = group_id(1) * BM, col0 = group_id(0) * BN;
    Value abase = bz * M * K, bbase = bz * K * N, cbase = bz * M * N;
    auto f = [&](const Value& v) { return v.type() == f32 ? v : cast(f32, v); };
    std::vector<Var> acc;
    for (uint32_t i = 0; i < 64; ++i) acc.push_back(var(f32, 0.0f));
    // Work-item line e of a tile: A's (and Bᵀ's) k runs fastest across
    // work-items, so each row's run of k is one 32-byte sector; B (K×N):
    // columns fastest.
    auto a_pos = [&](uint32_t e) { Value idx = tid + e * NT; return std::pair{idx % TK, idx / TK}; };
    auto b_pos = [&](uint32_t e) {
      Value idx = tid + e * NT;
      return trans_b ? std::pair{idx % TK, idx / TK} : std::pair{idx / L, idx % L};
    };
    auto a_at = [&](const Value& r, const Value& k) { return abase + r * K + k; };
    auto b_at = [&](const Value& c, const Value& k) { return trans_b ? bbase + c * K + k : bbase + k * N + c; };
    // The tile at k0 into registers: E lines of A and of B (zero outside).
    std::vector<Var> ra, rb;
    for (uint32_t e = 0; e < E; ++e) {
      ra.push_back(var(line(f32, 4), splat(0.0f, 4)));
      rb.push_back(var(line(f32, 4), splat(0.0f, 4)));
    }
    auto load = [&](const Value& k0, bool guarded) {
      for (uint32_t e = 0; e < E; ++e) {
        auto [akk, ali] = a_pos(e);
        auto [bkk, bli] = b_pos(e);
        std::vector<Value> av, bv;
        for (uint32_t q = 0; q < 4; ++q) {
          Value r = row0 + ali * 4u + q, ka = k0 + akk;
          Value c = col0 + bli * 4u + q, kb2 = k0 + bkk;
          if (!guarded) {
            av.push_back(f(A[a_at(r, ka)]));
            bv.push_back(f(B[b_at(c, kb2)]));
            continue;
          }
          Var va = var(f32, 0.0f), vb = var(f32, 0.0f);
          if_(r < M && ka < K, [&] { va = f(A[a_at(r, ka)]); });
          if_(c < N && kb2 < K, [&] { vb = f(B[b_at(c, kb2)]); });
          av.push_back(va.get());
          bv.push_back(vb.get());
        }
        ra[e] = make_line(av);
        rb[e] = make_line(bv);
      }
    };
    auto load_tile = [&](const Value& k0) {
      if_(row0 + BM <= M && col0 + BN <= N && k0 + TK <= K, [&] { load(k0, false); }).else_([&] { load(k0, true); });
    };
    auto store_tile = [&] {
      for (uint32_t e = 0; e < E; ++e) {
        auto [akk, ali] = a_pos(e);
        auto [bkk, bli] = b_pos(e);
        As[akk * L + ali] = ra[e].get();
        Bs[bkk * L + bli] = rb[e].get();
      }
    };
    auto compute = [&] {
      for (uint32_t kk = 0; kk < TK; ++kk) {
        Value a[2] = {As[kk * L + ty], As[kk * L + 16u + ty]};
        Value b[2] = {Bs[kk * L + tx], Bs[kk * L + 16u + tx]};
        for (uint32_t i = 0; i < 8; ++i)
          for (uint32_t j = 0; j < 8; ++j)
            acc[i * 8 + j] = fma(a[i / 4].lane(int(i % 4)), b[j / 4].lane(int(j % 4)), acc[i * 8 + j].get());
      }
    };
    if (prefetch) {
      // The next tile's global loads are issued before this tile's FMAs and
      // land in registers, so DRAM/L2 latency hides behind the arithmetic;
      // they go to shared memory after the closing barrier.
      load_tile(constant(u32, 0));
      for_range(0u, K, [&](Value k0) {
        store_tile();
        barrier();
        if_(k0 + TK < K, [&] { load_tile(k0 + TK); });
        compute();
        barrier();
      }, TK);
    } else {
      for_range(0u, K, [&](Value k0) {
        load_tile(k0);
        store_tile();
        barrier();
        compute();
        barrier();
      }, TK);
    }
    for (uint32_t i = 0; i < 8; ++i) {
      Value row = row0 + (i / 4) * 64u + ty * 4u + (i % 4);
      for (uint32_t j = 0; j < 8; ++j) {
        Value col = col0 + (j / 4) * 64u + tx * 4u + (j % 4);
        if_(row < M && col < N, [&] { C[cbase + row * N + col] = acc[i * 8 + j].get(); });
      }
    }
  });
}

}  // namespace

ir::Kernel gemm_gpu_kernel(ir::Type dt, bool trans_b, const GpuTile& t) {
  if (t.vec) return gemm_gpu_vec_kernel(dt, trans_b, uint32_t(t.tk), t.vec == 2);
  const uint32_t WG = uint32_t(t.wg), TM = uint32_t(t.tm), TN = uint32_t(t.tn), TK = uint32_t(t.tk);
  const uint32_t BM = WG * TM, BN = WG * TN, NT = WG * WG;
  std::string name = "matmul_gpu_" + dt.str() + (trans_b ? "_t" : "_n") + "_wg" + std::to_string(WG) + "_tm" +
                     std::to_string(TM) + "_tn" + std::to_string(TN) + "_tk" + std::to_string(TK);
  return kernel(name, [&](KernelBuilder& kb) {
    auto A = kb.input("a", dt);
    auto B = kb.input("b", dt);
    auto C = kb.output("c", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
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
        if_(row < M && col < N, [&] { C[cbase + row * N + col] = acc[i * TN + j].get(); });
      }
  });
}

ir::Kernel gated_silu_gpu_kernel() {
  return kernel("gated_mlp_silu_mul", [&](KernelBuilder& kb) {
    auto g = kb.input("g", f32);
    auto u = kb.input("u", f32);
    auto h = kb.output("h", f32);
    auto n = kb.scalar("n", u32);
    Value i = global_id(0);
    if_(i < n, [&] {
      Value gv = g[i];
      h[i] = gv / (exp(-gv) + 1.0f) * u[i];
    });
  });
}

}  // namespace kgen::ops
