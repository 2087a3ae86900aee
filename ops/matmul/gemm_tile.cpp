// The bf16 GEMM on a matrix engine (see ops/matmul/matmul.h gemm_tile_kernel). The
// blocks' edges (M and N off multiples of 32) and the K tail are shapes of
// the tile op itself, so the kernel is only the walk over C's blocks.
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/matmul/matmul.h"
#include "ops/layout/transpose_block.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel gemm_tile_kernel(int mc, int nc, bool swapped, int kc, int a_parts) {
  if (kc < 0 || kc % 32 || (kc && swapped)) throw std::invalid_argument("gemm_tile_kernel: kc is a multiple of 32, not swapped");
  if (a_parts < 1 || a_parts > 4 || (a_parts > 1 && swapped)) throw std::invalid_argument("gemm_tile_kernel: a_parts is 1-4, not swapped");
  const std::string name = "matmul_tile_bf16_mc" + std::to_string(mc) + "_nc" + std::to_string(nc) + (swapped ? "_sw" : "") +
                           (kc ? "_kc" + std::to_string(kc) : "") + (a_parts > 1 ? "_ap" + std::to_string(a_parts) : "");
  return kernel(name, [&](KernelBuilder& kb) {
    // Not swapped: a (M×K rows), bp (B's pair panels). Swapped: a is B's rows
    // (N×K, read in place), bp A's pair panels (32 rows of A each).
    auto a = kb.input("a", bf16);
    auto bp = kb.input("bp", u32);
    // Read too where K slices or A's parts accumulate into C.
    auto c = kc || a_parts > 1 ? kb.inout("c", f32) : kb.output("c", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value kp = K / 2u;
    // Rows of the tile op's A operand and of its pair panels.
    Value arows = swapped ? N : M, prows = swapped ? M : N;
    Value np = (prows + 31u) / 32u, mb = (arows + 31u) / 32u;
    Value p0 = group_id(0) * uint32_t(nc), r0 = group_id(1) * uint32_t(mc), bz = cast(u64, group_id(2));
    Value M64 = cast(u64, M), N64 = cast(u64, N), K64 = cast(u64, K);
    // A's rows hold a_parts segments of K, each against the same panels.
    Value lda = K * uint32_t(a_parts), lda64 = cast(u64, lda);
    Value c_base = bz * M64 * N64, a_base = bz * cast(u64, arows) * lda64;
    Value b_base = (bz * cast(u64, np)) * cast(u64, kp) * uint64_t(32);
    auto panel_at = [&](const Value& p) { return b_base + cast(u64, p) * cast(u64, kp) * uint64_t(32); };
    if (!swapped) {
      // The panel outer: it stays in L1/L2 while the mc blocks of A pass.
      // With kc, K in slices of kc (kcp pairs), the workgroup's blocks of C
      // summed over them: a long K's A block and panel slice stay in L2 (all
      // of a 33024-deep K is 2 MiB per 32 rows); else one slice of all of K.
      const Value kcp = kc ? constant(u32, uint32_t(kc / 2)) : kp;
      const Value slices = kc ? (kp + (kcp - 1u)) / kcp : constant(u32, 1u);
      for_range(0u, slices, [&](Value sl) {
        Value sp0 = sl * kcp, spn = min(kp - sp0, kcp);
        for_range(p0, min(p0 + uint32_t(nc), np), [&](Value p) {
          Value cols = min(N - p * 32u, 32u);
          for_range(r0, min(r0 + uint32_t(mc), mb), [&](Value r) {
            Value rows = min(M - r * 32u, 32u);
            Value r64 = cast(u64, r) * uint64_t(32);
            TileOperand cb{c, c_base + r64 * N64 + cast(u64, p) * uint64_t(32)};
            TileOperand bb{bp, panel_at(p) + cast(u64, sp0) * uint64_t(32)};
            for (int j = 0; j < a_parts; ++j) {
              TileOperand ab{a, a_base + r64 * lda64 + K64 * uint64_t(j) + cast(u64, sp0) * uint64_t(2)};
              auto mma = [&](bool acc) { tile_mma_bf16(cb, ab, bb, rows, cols, spn, N, lda, constant(u32, 32u), acc); };
              // The first product of the first slice starts C; the rest add to it.
              if (j) mma(true);
              else if (!kc) mma(false);
              else if_(sl == 0u, [&] { mma(false); }).else_([&] { mma(true); });
            }
          });
        });
      });
      return;
    }
    // Swapped: B's row block outer (read from memory once), A's panels (all
    // of A, small) inner; each Cᵀ block goes through a stack scratch.
    auto t = shared_array(f32, 32 * 32);
    for_range(r0, min(r0 + uint32_t(mc), mb), [&](Value r) {
      Value rows = min(N - r * 32u, 32u);
      Value r64 = cast(u64, r) * uint64_t(32);
      for_range(p0, min(p0 + uint32_t(nc), np), [&](Value p) {
        Value cols = min(M - p * 32u, 32u);
        tile_mma_bf16({t, constant(u64, uint64_t(0))}, {a, a_base + r64 * K64}, {bp, panel_at(p)}, rows, cols, kp, constant(u32, 32u),
                      K, constant(u32, 32u), false);
        store_transposed_block32(t, constant(u64, uint64_t(0)), c, c_base + cast(u64, p) * uint64_t(32) * N64 + r64, N64, rows, cols);
      });
    });
  });
}

}  // namespace kgen::ops
