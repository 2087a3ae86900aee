// Packing kernels of the CPU GEMM: copy A and B into the layouts the
// microkernel streams (zero-padded to whole panels, converted to f32), so its
// inner loop is one line load per 16 columns of B, one broadcast per row of A
// and nothing else: no edges, no strides, no conversions. Packing is O(MK +
// KN) against the O(MNK) product, and it also removes the cache-set conflicts
// of power-of-two row strides (A rows 8 KiB apart all map to one L1 set).
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/matmul/gemm_panels.h"
#include "ops/matmul/matmul.h"
#include "ops/layout/transpose_block.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// A packed element: f32, and u32 words of bf16 pairs (GemmTile::bf2), as
// they are; f16 and bf16 widened to f32.
Value to_panel(const Value& v) { return v.type() == u32 ? v : as_f32(v); }
Value zero_line(bool pairs) { return pairs ? splat(constant(u32, 0u), 16) : splat(0.0f, 16); }

}  // namespace

void pack_b_panel(const Array& b, bool trans_b, int nl, const Value& N, const Value& K, const Value& src,
                  const Value& panel, const Value& k0, const Value& k1, const PanelLineStore& store, bool pairs) {
  const uint32_t NR = uint32_t(16 * nl);
  Value col0 = panel * NR;
  // B(k, n) in the source layout.
  auto at = [&](const Value& k, const Value& n) { return trans_b ? src + n * K + k : src + k * N + n; };
  // A K×N source of bf16 pairs: pair k of column n is rows 2k (low half) and
  // 2k + 1 of the u16 bits, joined; a line of them from two row lines.
  const bool row_pairs = pairs && !trans_b;
  auto pair_of = [](const Value& lo, const Value& hi) {
    const ir::Type t = lo.type().lanes > 1 ? line(u32, lo.type().lanes) : ir::Type(u32);
    return cast(t, lo) | (cast(t, hi) << 16u);
  };
  auto low_row = [&](const Value& k, const Value& n) {  // u16 index of (row 2k, column n); u64 k (pairs), u32 n
    return cast(u64, src) * uint64_t(2) + k * uint64_t(2) * cast(u64, N) + cast(u64, n);
  };
  auto emit = [&](bool guarded) {
    // Interior panels index in 64 bits from one base per k (and, for Bᵀ,
    // one per column), so the offsets fold into the addressing modes.
    Value K64 = cast(u64, K);
    Value cbase = cast(u64, src + col0 * K);  // Bᵀ: column col0 at k = 0
    Value kt = k0;  // where the per-k loop starts
    if (trans_b && !guarded) {
      // Bᵀ rows run along K: 16×16 blocks transposed in registers, one
      // 16-row group at a time (16 row streams; all nl groups at once were
      // 48-64 streams, 2.2x slower from DRAM).
      kt = k0 + (k1 - k0) / 16u * 16u;
      for (int l = 0; l < nl; ++l) {
        for_range(cast(u64, k0), cast(u64, kt), [&](Value kb) {
          auto lines = transposed_block16(b, cbase + K64 * uint64_t(16 * l) + kb, K64);
          for (int j = 0; j < 16; ++j) store(kb + uint64_t(j), l, lines[j]);
        }, 16);
      }
    }
    for_range(kt, k1, [&](Value k) {
      Value rbase = trans_b ? cbase + cast(u64, k) : cast(u64, src + k * N + col0);
      for (int l = 0; l < nl; ++l) {
        if (row_pairs && !guarded) {  // two row lines of 16 bf16 -> one line of pairs
          Value lo = low_row(cast(u64, k), col0 + uint32_t(16 * l));
          store(cast(u64, k), l, pair_of(load_line(b, lo), load_line(b, lo + cast(u64, N))));
          continue;
        }
        Var v = var(zero_line(pairs));
        for (int i = 0; i < 16; ++i) {
          const uint32_t j = uint32_t(16 * l + i);
          Value n = col0 + j;
          if (row_pairs) if_(n < N, [&] {
            Value lo = low_row(cast(u64, k), n);
            v = insert(v, i, pair_of(b[lo], b[lo + cast(u64, N)]));
          });
          else if (guarded) if_(n < N, [&] { v = insert(v, i, to_panel(b[at(k, n)])); });
          else v = insert(v, i, to_panel(b[trans_b ? rbase + K64 * uint64_t(j) : rbase + uint64_t(j)]));
        }
        store(cast(u64, k), l, v.get());
      }
    });
  };
  if_(col0 + NR <= N, [&] { emit(false); }).else_([&] { emit(true); });
}

void pack_gate_up_panel(const Array& g, const Array& u, int nl, const Value& F, const Value& K, const Value& panel,
                        const Value& k0, const Value& k1, const PanelLineStore& store, bool pairs) {
  const uint32_t FPP = uint32_t(8 * nl);  // features per panel
  Value f0 = panel * FPP;
  auto emit = [&](bool guarded) {
    Value kt = k0;  // where the per-k loop starts
    if (!guarded) {
      // Whole 16-step blocks of K: G and U rows run along K, so each 16×16
      // block is read as row lines and transposed in registers (one 16-row
      // group at a time, as pack_b_panel).
      kt = k0 + (k1 - k0) / 16u * 16u;
      Value K64 = cast(u64, K);
      for (int l = 0; l < nl; ++l) {
        const Array& w = l % 2 ? u : g;
        Value f = cast(u64, f0 + uint32_t(16 * (l / 2)));
        for_range(cast(u64, k0), cast(u64, kt), [&](Value kb) {
          auto lines = transposed_block16(w, f * K64 + kb, K64);
          for (int j = 0; j < 16; ++j) store(kb + uint64_t(j), l, lines[j]);
        }, 16);
      }
    }
    for_range(kt, k1, [&](Value k) {
      for (int l = 0; l < nl; ++l) {
        const Array& w = l % 2 ? u : g;
        Var v = var(zero_line(pairs));
        for (int i = 0; i < 16; ++i) {
          Value f = f0 + uint32_t(16 * (l / 2) + i);
          if (guarded) if_(f < F, [&] { v = insert(v, i, to_panel(w[f * K + k])); });
          else v = insert(v, i, to_panel(w[f * K + k]));
        }
        store(cast(u64, k), l, v.get());
      }
    });
  };
  if_(f0 + FPP <= F, [&] { emit(false); }).else_([&] { emit(true); });
}

// Bp[b][panel][k][l] = B(k, panel·NR + 16·l + i) as lane i, 0 past N.
// One work-item per (panel, chunk of K, batch); see pack_chunk.
ir::Kernel pack_b_kernel(ir::Type dt, bool trans_b, int nl, bool pairs) {
  const uint32_t NR = uint32_t(16 * nl);
  std::string name = "matmul_pack_b_" + dt.str() + (trans_b ? "_t" : "_n") + "_nr" + std::to_string(NR) + (pairs ? "_bf2" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto b = kb.input("b", dt);
    auto bp = kb.output("bp", line(pairs ? u32 : f32, 16));
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    const uint32_t CH = uint32_t(pack_chunk(trans_b));
    Value panel = group_id(trans_b ? 1 : 0), bz = group_id(2);
    Value np = (N + (NR - 1)) / NR;
    Value k0 = group_id(trans_b ? 0 : 1) * CH;
    Value k1 = min(k0 + CH, K);
    Value dst = cast(u64, (bz * np + panel) * K * uint32_t(nl));  // this panel, in lines
    pack_b_panel(b, trans_b, nl, N, K, bz * N * K, panel, k0, k1,
                 [&](const Value& k, int l, const Value& v) { bp[dst + k * uint64_t(nl) + uint64_t(l)] = v; }, pairs);
  });
}

namespace {

// Ap[b][panel][k/16][r] (f32x16 lines) = A(panel·MR + r, k/16·16 + i) as lane
// i, 0 past M and K: per row, consecutive 16-element pieces of A become
// lines MR apart. Same grid as the k-major packer.
ir::Kernel pack_a_lines_kernel(ir::Type dt, int mr) {
  const uint32_t MR = uint32_t(mr);
  std::string name = "matmul_pack_a_" + dt.str() + "_mr" + std::to_string(MR) + "_ak16";
  return kernel(name, [&](KernelBuilder& kb) {
    auto a = kb.input("a", dt);
    const ir::Type et = dt == u32 ? u32 : f32;  // u32: bf16 pairs, copied
    auto ap = kb.output("ap", line(et, 16));
    auto M = kb.scalar("m", u32);
    auto K = kb.scalar("k", u32);
    auto lda = kb.scalar("lda", u32);
    kb.workgroup(1);
    const uint32_t CH = uint32_t(pack_chunk(true));  // a multiple of 16
    Value panel = group_id(1), bz = group_id(2);
    Value mp = (M + (MR - 1)) / MR, kl = (K + 15u) / 16u;  // lines per row
    Value c0 = group_id(0) * (CH / 16u), c1 = min(c0 + CH / 16u, kl);  // this group's lines
    Value row0 = panel * MR;
    Value src64 = cast(u64, bz * M * lda + row0 * lda), lda64 = cast(u64, lda);
    Value dst64 = cast(u64, (bz * mp + panel) * kl * MR);
    // Rows in a runtime loop: the unrolled form is 14 copies of the guarded
    // code below for no speed (each row is a long sequential copy).
    for_range(0u, MR, [&](Value r) {
      Value in = src64 + lda64 * cast(u64, r), out = dst64 + cast(u64, r);
      auto copy = [&](bool guard_k) {
        for_range(cast(u64, c0), cast(u64, c1), [&](Value c) {
          Var v = var(zero_line(et == u32));
          Value k0 = c * uint64_t(16);
          for (int i = 0; i < 16; ++i) {
            if (guard_k) if_(k0 + uint64_t(i) < cast(u64, K), [&] { v = insert(v, i, to_panel(a[in + k0 + uint64_t(i)])); });
            else v = insert(v, i, to_panel(a[in + k0 + uint64_t(i)]));
          }
          ap[out + c * uint64_t(MR)] = v.get();
        });
      };
      auto zero = [&] {
        for_range(cast(u64, c0), cast(u64, c1), [&](Value c) { ap[out + c * uint64_t(MR)] = zero_line(et == u32); });
      };
      // Whole lines inside K take the unguarded copy; only the group holding
      // the last, partial line of a row guards its lanes.
      if_(row0 + r < M, [&] { if_(c1 * 16u <= K, [&] { copy(false); }).else_([&] { copy(true); }); }).else_(zero);
    });
  });
}

}  // namespace

// Ap[b][panel][k][r] = A(panel·MR + r, k), 0 past M.
ir::Kernel pack_a_kernel(ir::Type dt, int mr, int ak) {
  if (ak == 16) return pack_a_lines_kernel(dt, mr);
  if (ak != 0) throw std::invalid_argument("pack_a_kernel: A layout ak must be 0 or 16");
  const uint32_t MR = uint32_t(mr);
  std::string name = "matmul_pack_a_" + dt.str() + "_mr" + std::to_string(MR);
  return kernel(name, [&](KernelBuilder& kb) {
    auto a = kb.input("a", dt);
    const ir::Type et = dt == u32 ? u32 : f32;  // u32: bf16 pairs, copied
    auto ap = kb.output("ap", et);
    auto M = kb.scalar("m", u32);
    auto K = kb.scalar("k", u32);
    auto lda = kb.scalar("lda", u32);  // A's row stride (>= k): gated_mlp packs a row-padded H
    kb.workgroup(1);
    const uint32_t CH = uint32_t(pack_chunk(true));
    Value panel = group_id(1), bz = group_id(2);
    Value mp = (M + (MR - 1)) / MR;
    Value k0 = group_id(0) * CH;
    Value k1 = min(k0 + CH, K);
    Value row0 = panel * MR;
    Value src = bz * M * lda + row0 * lda;
    Value dst = (bz * mp + panel) * K * MR;
    Value lda64 = cast(u64, lda), src64 = cast(u64, src), dst64 = cast(u64, dst);
    // Row by row: a chunk of one row is a sequential read. (k-outer would
    // read MR rows at once, which for power-of-two strides all fall in one
    // L1 set and thrash it.) Register-block panels unroll the rows; wider
    // ones (the swapped product's 64 rows, which took 6 s to compile
    // unrolled) loop over them at run time, a fifth slower.
    auto row = [&](const Value& r) {
      Value in = src64 + lda64 * cast(u64, r), out = dst64 + cast(u64, r);
      if_(row0 + r < M, [&] {
        for_range(cast(u64, k0), cast(u64, k1), [&](Value k) { ap[out + k * uint64_t(MR)] = to_panel(a[in + k]); });
      }).else_([&] {
        for_range(cast(u64, k0), cast(u64, k1), [&](Value k) { ap[out + k * uint64_t(MR)] = constant(et, 0); });
      });
    };
    if (MR <= 16)
      for (uint32_t r = 0; r < MR; ++r) row(constant(u32, r));
    else
      for_range(0u, MR, row);
  });
}

}  // namespace kgen::ops
