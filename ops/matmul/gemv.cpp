// GEMV-like products for a few rows of A (LLM decode: 1×4096 · 4096×4096ᵀ).
// Memory-bound: every weight is read once, in f32x16 lines, straight from
// the unpacked B (packing would read and write it once more). A's few rows
// stay in L1. A work-item takes `rows` outputs so that several independent
// streams (trans_b: rows of B) are in flight; the CPU pool hands contiguous
// runs of work-items to its threads, which split N.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/k_split.h"
#include "ops/matmul/matmul.h"
#include "ops/common/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {
// A line of B or A as the product takes it: f32, and u32 bf16 pair words, as
// they are; f16/bf16 widened.
Value to_f32(const Value& v) { return v.type().kind == ir::ScalarKind::U32 ? v : as_f32(v); }
}  // namespace

ir::Kernel gemv_kernel(ir::Type dt, bool trans_b, int rows, int m, int pf, bool pairs, int mg, ir::Type a_dt, int kp, bool tail,
                       const EpilogueSpec* epi) {
  if (a_dt == ir::ScalarKind::Void) a_dt = dt;
  if (epi && kp > 1) throw std::invalid_argument("gemv_kernel: K parts (kp) leave the epilogue to their sum");
  if (tail && (!trans_b || pairs || kp > 1)) throw std::invalid_argument("gemv_kernel: tail (any K) is for Bᵀ, without pairs or K parts");
  if (kp < 1 || (kp > 1 && !trans_b)) throw std::invalid_argument("gemv_kernel: K parts (kp) are for Bᵀ");
  if (pairs && (!trans_b || dt.kind != ir::ScalarKind::BF16))
    throw std::invalid_argument("gemv_kernel: bf16 pairs need bf16 inputs and Bᵀ");
  if (mg < 0 || (mg && !trans_b)) throw std::invalid_argument("gemv_kernel: row groups (mg) are for Bᵀ");
  const uint32_t R = uint32_t(rows), MM = uint32_t(m), MG = mg ? uint32_t(mg) : MM;
  std::string name = "matmul_gemv_" + dt.str() + (trans_b ? "_t" : "_n") + "_r" + std::to_string(R) + "_m" + std::to_string(MM) +
                     (pf ? "_pf" + std::to_string(pf) : "") + (pairs ? "_bf2" : "") + (mg ? "_g" + std::to_string(mg) : "") + (a_dt != dt ? "_a" + a_dt.str() : "") + (kp > 1 ? "_kp" + std::to_string(kp) : "") + (tail ? "_tail" : "") + (epi ? epi->tag() : "");
  const ir::Type lt = pairs ? line(u32, 16) : line(dt, 16);  // pairs: 32 bf16 per line
  const uint32_t LK = pairs ? 32 : 16;                          // k per line
  return kernel(name, [&](KernelBuilder& kb) {
    // tail: A and B are scalar buffers whose rows (any K from 16) are
    // walked in lines from any element offset, and the last 16 k of each
    // row as one more line with the k already walked masked off.
    auto a = kb.input("a", tail ? a_dt : pairs ? lt : line(a_dt, 16));
    auto b = kb.input("b", tail ? dt : lt);
    // An epilogue's f16/bf16 C: scalar elements, lines by store_line.
    const bool narrow_c = epi && epi->out != ir::ScalarKind::F32;
    auto c = kb.output("c", narrow_c ? ir::Type(epi->out) : trans_b ? f32 : line(f32, 16));
    std::unique_ptr<EpilogueEmitter> em;
    if (epi) em = std::make_unique<EpilogueEmitter>(*epi), em->declare(kb);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    if (em) em->sizes(constant(u32, MM), N);
    kb.workgroup(1);
    Value bz = group_id(2);
    if (trans_b) {
      // C[i][n] = Σ_k A[i][k]·B[n][k]: dot products of lines, one per (i, row),
      // reduced across lanes at the end.
      Value kl = K / LK;  // whole lines per row
      Value pitch = tail ? K : kl;  // row pitch, in elements or lines
      Value n0 = group_id(0) * R;
      Value abase = bz * MM * pitch, bbase = bz * N * pitch, cbase = bz * MM * N;
      // K parts (kp > 1): group y takes lines [j0, j1) of every row and
      // writes its partial C (part[batch][part][M][N]); the groups of a part
      // run in a row, so its slice of A stays in L1 while B streams past.
      Value j0 = constant(u32, 0u), j1 = kl;
      if (kp > 1) {
        const KRange r = k_split_range(kl, uint32_t(kp), 1, group_id(1));
        j0 = r.begin, j1 = r.end;
        cbase = (bz * uint32_t(kp) + group_id(1)) * MM * N;
      }
      auto emit = [&](bool guarded) {
        // Rows past N (last group only) re-read row n0: in bounds, never stored.
        // Row bases in u64 and the line index widened from the loop's
        // counter: clang folds base + j into a pointer that steps by a line.
        // With u32 sums (which may wrap) it recomputed every address, and the
        // extra instructions cut the misses in flight (rows=2 at half speed).
        std::vector<Value> rowbase;
        for (uint32_t r = 0; r < R; ++r)
          rowbase.push_back(cast(u64, bbase) + cast(u64, guarded ? min(n0 + r, N - 1u) : n0 + r) * cast(u64, pitch));
        const Value abase64 = cast(u64, abase);
        // A's rows in groups of MG, one pass over the R rows of B each (mg):
        // the later passes read those rows from the cache, and MG × R
        // accumulators stay in registers for any M.
        for (uint32_t g0 = 0; g0 < MM; g0 += MG) {
          const uint32_t GN = std::min(MG, MM - g0);
          std::vector<Var> acc;
          for (uint32_t i = 0; i < GN * R; ++i) acc.push_back(var(splat(0.0f, 16)));
          auto ld = [&](const Array& arr, const Value& at) { return to_f32(tail ? load_line(arr, at) : Value(arr[at])); };
          // One step: the line at offset `off` (lines, or elements with tail)
          // of every row; `mask` zeroes the lanes of A and B a tail line
          // shares with the last whole line (zero times zero: no NaN from an
          // infinity counted already).
          auto step = [&](const Value& off, const Value* mask) {
            std::vector<Value> av;
            for (uint32_t i = 0; i < GN; ++i) {
              av.push_back(ld(a, abase64 + cast(u64, (g0 + i) * pitch) + off));
              if (mask) av.back() = select(*mask, av.back(), splat(0.0f, 16));
            }
            for (uint32_t r = 0; r < R; ++r) {
              // pf > 0: the same line of the rows `pf` workgroups ahead. Each
              // row is a short stream (K·4 bytes) that the hardware prefetcher
              // only picks up after a few misses; this starts it a group early.
              if (pf && g0 == 0 && !mask) b[rowbase[r] + cast(u64, uint32_t(pf) * R * pitch) + off].prefetch();
              Value bv = ld(b, rowbase[r] + off);
              if (mask) bv = select(*mask, bv, splat(0.0f, 16));
              for (uint32_t i = 0; i < GN; ++i)
                acc[i * R + r] = pairs ? dot2_bf16(av[i], bv, acc[i * R + r]) : fma(av[i], bv, acc[i * R + r]);
            }
          };
          for_range(j0, j1, [&](Value j) { step(tail ? cast(u64, j) * 16u : cast(u64, j), nullptr); });
          if (tail)
            if_(K % 16u != 0u, [&] {
              Value mask = lane_index(16) >= splat(cast(i32, 16u - K % 16u), 16);
              step(cast(u64, K - 16u), &mask);
            });
          for (uint32_t i = 0; i < GN; ++i)
            for (uint32_t r = 0; r < R; ++r) {
              Value n = n0 + r;
              auto st = [&] {
                Value sum = reduce_add(acc[i * R + r].get());
                c[cbase + (g0 + i) * N + n] = em ? em->apply(sum, bz, constant(u32, g0 + i), n) : sum;
              };
              if (guarded) if_(n < N, st);
              else st();
            }
        }
      };
      if_(n0 + R <= N, [&] { emit(false); }).else_([&] { emit(true); });
    } else {
      // C[i][cols] = Σ_k A[i][k]·B[k][cols] for `rows` lines of columns: a
      // broadcast of A[i][k] times B's row k, streamed down K.
      Value nl = N / 16u, kl = K / 16u;
      Value l0 = group_id(0) * R;
      Value abase = bz * MM * kl, bbase = bz * K * nl, cbase = bz * MM * nl;
      auto emit = [&](bool guarded) {
        std::vector<Var> acc;
        for (uint32_t i = 0; i < MM * R; ++i) acc.push_back(var(splat(0.0f, 16)));
        std::vector<Value> col;
        for (uint32_t r = 0; r < R; ++r) col.push_back(guarded ? min(l0 + r, nl - 1u) : l0 + r);
        // A is read in lines of 16 k's; lane t multiplies row k0 + t of B.
        for_range(0u, kl, [&](Value j) {
          std::vector<Value> av;
          for (uint32_t i = 0; i < MM; ++i) av.push_back(to_f32(a[abase + i * kl + j]));
          for (int t = 0; t < 16; ++t) {
            Value krow = bbase + (j * 16u + uint32_t(t)) * nl;
            for (uint32_t r = 0; r < R; ++r) {
              Value bv = to_f32(b[krow + col[r]]);
              for (uint32_t i = 0; i < MM; ++i)
                acc[i * R + r] = fma(splat(av[i].lane(t), 16), bv, acc[i * R + r]);
            }
          }
        });
        for (uint32_t i = 0; i < MM; ++i)
          for (uint32_t r = 0; r < R; ++r) {
            auto st = [&] {
              if (!em) {
                c[cbase + i * nl + l0 + r] = acc[i * R + r].get();
                return;
              }
              Value v = em->apply(acc[i * R + r].get(), bz, constant(u32, i), (l0 + r) * 16u), at = cbase + i * nl + l0 + r;
              if (narrow_c) store_line(c, at * 16u, v);
              else c[at] = v;
            };
            if (guarded) if_(l0 + r < nl, st);
            else st();
          }
      };
      if_(l0 + R <= nl, [&] { emit(false); }).else_([&] { emit(true); });
    }
  });
}

ir::Kernel gemv_kn_split_kernel(ir::Type dt, int m, ir::Type a_dt, bool tail, bool shifted, int kr, int lb) {
  if (a_dt == ir::ScalarKind::Void) a_dt = dt;
  if (kr < 1 || kr > 8) throw std::invalid_argument("gemv_kn_split_kernel: kr (rows of B per pass) must be 1..8");
  if (lb != 1 && lb != 2 && lb != 4) throw std::invalid_argument("gemv_kn_split_kernel: lb (lines per block) must be 1, 2 or 4");
  if (lb > 1 && shifted) throw std::invalid_argument("gemv_kn_split_kernel: lb > 1 is for unshifted rows");
  const uint32_t KR = uint32_t(kr), LB = uint32_t(lb);
  if (shifted && (!tail || dt.bytes() != 4)) throw std::invalid_argument("gemv_kn_split_kernel: shifted rows need tail and 32-bit B");
  const uint32_t MM = uint32_t(m);
  return kernel("matmul_gemv_kn_split_" + dt.str() + "_m" + std::to_string(MM) + (a_dt != dt ? "_a" + a_dt.str() : "") + (tail ? "_tail" : "") +
                    (shifted ? "_sh" : "") + (kr > 1 ? "_kr" + std::to_string(kr) : "") + (lb > 1 ? "_lb" + std::to_string(lb) : ""),
                [&](KernelBuilder& kb) {
    auto a = kb.input("a", a_dt);
    // Line buffers (N % 16 == 0), or scalars (tail): B's rows then start
    // anywhere and are walked in lines from any element offset, while the
    // partial rows keep a pitch of whole lines, so that all but their last
    // line are read and written aligned.
    auto b = kb.input("b", tail ? dt : line(dt, 16));
    auto part = kb.inout("part", tail ? f32 : line(f32, 16));  // zeroed here, then accumulated
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    auto KC = kb.scalar("kc", u32);
    kb.workgroup(1);
    Value s = group_id(0), S = num_groups(0), bz = group_id(2);
    // Whole lines per row, and the partial rows' pitch (lines, or elements
    // rounded up to whole lines with tail).
    Value nl = N / 16u, pitch = tail ? (N + 15u) / 16u * 16u : nl;
    auto ld = [&](const Array& arr, const Value& at) { return tail ? load_line(arr, at) : Value(arr[at]); };
    auto st = [&](const Array& arr, const Value& at, const Value& v) {
      if (tail) store_line(arr, at, v);
      else arr[at] = v;
    };
    Value k0 = min(s * KC, K), k1 = min(k0 + KC, K);
    // This split's partial rows of C, in the cache while B's rows stream.
    Value pbase = cast(u64, (bz * S + s) * MM) * cast(u64, pitch);
    auto prow = [&](uint32_t i) { return pbase + cast(u64, i) * cast(u64, pitch); };
    for (uint32_t i = 0; i < MM; ++i) {
      // (with tail, the padding too)
      for_range(0u, tail ? pitch / 16u : nl, [&](Value l) { st(part, prow(i) + cast(u64, tail ? l * 16u : l), splat(0.0f, 16)); });
    }
    // A pass adds rows k .. k + nr - 1 of B to the partial rows: one load
    // and store of each partial line per nr rows of B, which matters once
    // the partial rows leave L1 (50257 columns).
    auto pass = [&](const Value& k, uint32_t nr) {
      std::vector<std::vector<Value>> ak(nr);  // [row of B][row of A]
      std::vector<Value> brow;                 // B's rows (elements, or lines)
      for (uint32_t j = 0; j < nr; ++j) {
        for (uint32_t i = 0; i < MM; ++i) ak[j].push_back(splat(to_f32(Value(a[(bz * MM + i) * K + k + j])), 16));
        brow.push_back(cast(u64, bz * K + k + j) * cast(u64, tail ? N : nl));
      }
      // part[i][offs[q] ..] += Σ_j A[i][k + j] · bv[q][j] for every row i
      // of A and line q: each of A's broadcasts serves every line given.
      auto accumulate = [&](const std::vector<Value>& offs, const std::vector<std::vector<Value>>& bv) {
        for (uint32_t i = 0; i < MM; ++i) {
          std::vector<Value> acc;
          for (const Value& off : offs) acc.push_back(ld(part, prow(i) + off));
          for (uint32_t j = 0; j < nr; ++j)
            for (size_t q = 0; q < offs.size(); ++q) acc[q] = fma(ak[j][i], bv[q][j], acc[q]);
          for (size_t q = 0; q < offs.size(); ++q) st(part, prow(i) + offs[q], acc[q]);
        }
      };
      // B's nr lines at `off` (lanes outside `mask` as 0).
      auto b_lines = [&](const Value& off, const Value* mask) {
        std::vector<Value> bv;
        for (uint32_t j = 0; j < nr; ++j) {
          bv.push_back(to_f32(ld(b, brow[j] + off)));
          if (mask) bv[j] = select(*mask, bv[j], splat(0.0f, 16));  // lanes the whole lines took: add 0
        }
        return bv;
      };
      auto fold = [&](const Value& off, const Value* mask) { accumulate({off}, {b_lines(off, mask)}); };
      auto line_at = [&](const Value& l) { return cast(u64, tail ? l * 16u : l); };
      if (shifted) {
        // B's rows from aligned lines: line l is lanes r.. of aligned lines
        // j and j + 1 (r = the row's start mod 16), one two-table byte
        // permute with an index built once per row. Unaligned loads from a
        // DRAM stream split cache lines and ran a quarter slower on Zen 5. The
        // last whole line loads unaligned: its second aligned line may pass
        // the buffer's end.
        std::vector<Value> q0, idx;
        std::vector<Var> prev;
        for (uint32_t j = 0; j < nr; ++j) {
          const Value r64 = brow[j] % uint64_t(16);
          q0.push_back(brow[j] - r64);
          idx.push_back((cast(line(u32, 16), lane_index(16)) + splat(cast(u32, r64), 16)) * 0x04040404u + 0x03020100u);
          prev.push_back(var(load_line(b, q0[j])));
        }
        for_range(0u, nl - 1u, [&](Value l) {
          const Value off = cast(u64, l) * 16u;
          std::vector<Value> bv;
          for (uint32_t j = 0; j < nr; ++j) {
            const Value next = load_line(b, q0[j] + off + 16u);
            bv.push_back(bitcast(line(f32, 16), permute_bytes(prev[j].get(), next, idx[j])));
            prev[j] = next;
          }
          accumulate({off}, {bv});
        });
        fold(cast(u64, (nl - 1u) * 16u), nullptr);
      } else {
        // LB lines at a time (loads per fma 1 + 1/nr + 1/M -> 1/LB + 1/nr,
        // the B lines reused from registers or L1 across the rows of A),
        // then the lines left one at a time.
        const Value whole = LB > 1 ? nl / LB * LB : nl;
        for_range(0u, whole, [&](Value l) {
          std::vector<Value> offs;
          std::vector<std::vector<Value>> bv;
          for (uint32_t q = 0; q < LB; ++q) {
            offs.push_back(line_at(q ? l + q : l));
            bv.push_back(b_lines(offs[q], nullptr));
          }
          accumulate(offs, bv);
        }, LB);
        if (LB > 1) for_range(whole, nl, [&](Value l) { fold(line_at(l), nullptr); });
      }
      // The rows' last 16 columns, those already walked masked off.
      if (tail)
        if_(N % 16u != 0u, [&] {
          Value mask = lane_index(16) >= splat(cast(i32, 16u - N % 16u), 16);
          fold(cast(u64, N - 16u), &mask);
        });
    };
    // Passes of KR rows, then the rows left one at a time.
    Value kmain = k0 + (k1 - k0) / KR * KR;
    for_range(k0, kmain, [&](Value k) { pass(k, KR); }, KR);
    if (KR > 1) for_range(kmain, k1, [&](Value k) { pass(k, 1); });
  });
}

}  // namespace kgen::ops
