// The CPU GEMM macro-kernel over packed panels (see ops/matmul.h). One
// single-work-item workgroup owns an MC×NC block of C and walks
//   for each KC slice of K:            (the B micropanel KC×NR stays in L1)
//     for each NR panel of the block:
//       for each MR panel of the block: (the A block MC×KC stays in L2)
//         acc[MR][NR/16] = slice == 0 ? 0 : C;  acc += Ap·Bp over the slice;  C = acc
// The accumulators are C++ locals that clang keeps in zmm registers
// (MR·NR/16 of the 32, plus NR/16 for the B lines); the loops over rows and
// lines are unrolled here, at record time. Edges never reach the inner loop:
// the packed panels are zero-padded, and only the C loads/stores are guarded,
// in a separate copy of the store code used by edge tiles only.
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/fast_exp.h"
#include "ops/matmul.h"

namespace kgen::ops {

using namespace kgen::dsl;

std::string GemmTile::str() const {
  return "mr" + std::to_string(mr) + "_nr" + std::to_string(nr()) + "_kc" + std::to_string(kc) + "_mc" +
         std::to_string(mc) + "_nc" + std::to_string(nc);
}

namespace {

// silu(g)·u on lines: g / (1 + exp(-g)) · u.
Value silu_mul(const Value& g, const Value& u) {
  Value e = fast_exp(-g);
  return g / (e + 1.0f) * u;
}

}  // namespace

ir::Kernel gemm_cpu_kernel(const GemmTile& t, bool c_lines, GemmEpilogue ep) {
  const bool gated = ep == GemmEpilogue::GatedSilu;
  if (gated && (!c_lines || t.nl % 2 || t.kc != 0))
    throw std::invalid_argument("gemm_cpu_kernel: the gated epilogue needs line-aligned C, an even nl and kc = 0");
  const uint32_t MR = uint32_t(t.mr), NL = uint32_t(t.nl);
  const uint32_t OL = gated ? NL / 2 : NL;  // output lines per panel
  const uint32_t NRO = 16 * OL;             // output columns per panel
  std::string name = std::string(gated ? "gated_mlp_gemm_" : "matmul_gemm_") + t.str() + (c_lines ? "_cl" : "_cs");
  return kernel(name, [&](KernelBuilder& kb) {
    auto ap = kb.input("ap", f32);
    auto bp = kb.input("bp", line(f32, 16));
    auto c = t.kc ? kb.inout("c", c_lines ? line(f32, 16) : f32) : kb.output("c", c_lines ? line(f32, 16) : f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);  // output columns
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value bz = group_id(2);
    Value np = (N + (NRO - 1)) / NRO, mp = (M + (MR - 1)) / MR;
    Value p0 = group_id(0) * uint32_t(t.nc), p1 = min(p0 + uint32_t(t.nc), np);
    Value q0 = group_id(1) * uint32_t(t.mc), q1 = min(q0 + uint32_t(t.mc), mp);
    Value abase = bz * mp * K * MR, bbase = bz * np * K * NL;
    Value cbase = bz * M * N;  // in elements
    Value nlines = N / 16u;    // C row length in lines (c_lines only)

    auto slice = [&](const Value& k0, const Value& k1) {
      for_range(p0, p1, [&](Value p) {
        for_range(q0, q1, [&](Value q) {
          Value row0 = q * MR, col0 = p * NRO;
          std::vector<Var> acc;
          for (uint32_t i = 0; i < MR * NL; ++i) acc.push_back(var(splat(0.0f, 16)));
          auto A = [&](uint32_t r, uint32_t l) -> Var& { return acc[r * NL + l]; };
          // C element/line addressing and the guarded/unguarded walk over the
          // tile's output lines: fn(r, l, row, col, guard_cols).
          auto each_out = [&](bool edge, auto&& fn) {
            for (uint32_t r = 0; r < MR; ++r) {
              Value row = row0 + r;
              auto body = [&] {
                for (uint32_t l = 0; l < OL; ++l) {
                  Value col = col0 + 16u * l;
                  if (!edge) fn(r, l, row, col, false);
                  else if (c_lines) if_(col < N, [&] { fn(r, l, row, col, false); });
                  else if_(col + 16u <= N, [&] { fn(r, l, row, col, false); }).else_([&] { fn(r, l, row, col, true); });
                }
              };
              if (edge) if_(row < M, body);
              else body();
            }
          };
          Value full = row0 + MR <= M && col0 + NRO <= N;
          if (t.kc) {
            // Later slices continue from C.
            auto load = [&](uint32_t r, uint32_t l, const Value& row, const Value& col, bool guard_cols) {
              if (c_lines) {
                A(r, l) = c[cbase / 16u + row * nlines + col / 16u];
                return;
              }
              Value base = cbase + row * N + col;
              for (int i = 0; i < 16; ++i) {
                if (guard_cols) if_(col + uint32_t(i) < N, [&] { A(r, l) = insert(A(r, l), i, c[base + uint32_t(i)]); });
                else A(r, l) = insert(A(r, l), i, c[base + uint32_t(i)]);
              }
            };
            if_(k0 > 0u, [&] {
              if_(full, [&] { each_out(false, load); }).else_([&] { each_out(true, load); });
            });
          }
          // 64-bit indices in the inner loop: u32 arithmetic must wrap before
          // it is widened, which stops clang from folding the per-row offsets
          // into the addressing modes (an extra lea per broadcast).
          Value a_at = cast(u64, abase + q * K * MR), b_at = cast(u64, bbase + p * K * NL);
          for_range(cast(u64, k0), cast(u64, k1), [&](Value k) {
            std::vector<Value> bl;
            for (uint32_t l = 0; l < NL; ++l) bl.push_back(bp[b_at + k * uint64_t(NL) + uint64_t(l)]);
            for (uint32_t r = 0; r < MR; ++r) {
              Value av = splat(ap[a_at + k * uint64_t(MR) + uint64_t(r)], 16);
              for (uint32_t l = 0; l < NL; ++l) A(r, l) = fma(av, bl[l], A(r, l));
            }
          }, 1, t.unroll);
          auto store = [&](uint32_t r, uint32_t l, const Value& row, const Value& col, bool guard_cols) {
            Value v = gated ? silu_mul(A(r, 2 * l).get(), A(r, 2 * l + 1).get()) : A(r, l).get();
            if (c_lines) {
              c[cbase / 16u + row * nlines + col / 16u] = v;
              return;
            }
            Value base = cbase + row * N + col;
            for (int i = 0; i < 16; ++i) {
              if (guard_cols) if_(col + uint32_t(i) < N, [&] { c[base + uint32_t(i)] = v.lane(i); });
              else c[base + uint32_t(i)] = v.lane(i);
            }
          };
          if_(full, [&] { each_out(false, store); }).else_([&] { each_out(true, store); });
        });
      });
    };
    if (t.kc) {
      const uint32_t KC = uint32_t(t.kc);
      for_range(0u, K, [&](Value k0) { slice(k0, min(k0 + KC, K)); }, KC);
    } else {
      slice(constant(u32, 0u), K);
    }
  });
}

}  // namespace kgen::ops
