// The int8-activation Q4_0 GEMV in row pairs, for 256-bit byte dot products
// without VNNI (AVX2): there the GGML-row form (ops/quant/int8.cpp) is bound by
// instructions, not memory (Zen 3, 1×8×4096 from L1: ~1.5 ns per block and
// row, the DRAM triad's pace), so it cannot overlap the stream it reads.
//
// Per 32-element block and pair of rows (r, r' = r + rows/2):
//   - one line of both rows' 16 code bytes (r in lanes 0-3, r' in 4-7), so
//     one mask and one shift give the low nibbles (elements 0-15) and the
//     high ones (16-31) of both rows;
//   - two dot4 against X's halves (each 16 bytes in both halves of a line,
//     loaded once per block for every row), summed: one i32 sum per lane;
//   - one conversion and one fma with [s_r·dx ×4, s_r'·dx ×4].
// The rows' f16 scales of a block are one f32 line (one conversion, one
// multiply by dx for all of them), and pairing r with r + rows/2 makes each
// pair's scales one in-lane shuffle of that line (vshufps; pairs of
// neighbours take a second, cross-lane one). Q4_0's offset
// (w = d·(u - 8)) leaves the dot products: Σ(u - 8)·q = Σu·q - 8·Σq, and
// -8·Σq·dx·d per row is one fma per block for all rows (a line of rows).
// Instructions per block and row: ~7 vector, against ~12 (where the
// heuristic takes it: ops/quant/strategy.cpp).
#include <string>
#include <vector>

#include "ops/quant/int8_lines.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

namespace {

// [v_a ×4, v_b ×4] of a line v.
Value pair_lanes(const Value& v, int a, int b) {
  Value x = extract(v, a), y = extract(v, b);
  return make_line({x, x, x, x, y, y, y, y});
}

}  // namespace

bool row_pair_gemv_format(QFormat f) { return f == QFormat::Q4_0; }

ir::Kernel qgemv_x8_row_pairs_kernel(QFormat fmt, int rows, int mb, int prefetch, bool prefetch_l1) {
  if (!row_pair_gemv_format(fmt)) throw std::invalid_argument(std::string("row-pair int8 GEMV: Q4_0 only, not ") + info(fmt).name);
  if (rows != 4 && rows != 8) throw std::invalid_argument("row-pair int8 GEMV: rows is 4 or 8");
  if (mb < 1 || mb > 2) throw std::invalid_argument("row-pair int8 GEMV: mb is 1 or 2");
  const FormatInfo& fi = info(fmt);
  const uint32_t R = uint32_t(rows), MB = uint32_t(mb), BB = uint32_t(fi.block_bytes), P = R / 2;
  const std::string name = std::string("quant_gemv_x8_") + fi.name + "_r" + std::to_string(R) + "_m" + std::to_string(MB) +
                           "_rp" + prefetch_suffix(prefetch, prefetch_l1);
  return kernel(name, [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", line(i32, 4));
    auto xd = kb.input("xd", f32);
    auto xs = kb.input("xs", i32);
    const auto [w, y, M, N, K, pb] = quant_row_params(kb);
    Value n0 = group_id(0) * R, m0 = group_id(1) * MB;
    Value nb = K / 32u, kg = K / 16u, rowbytes = nb * BB;
    // Rows of X past M (last group only) re-read row M-1: in bounds, never stored.
    std::vector<Value> xg, xb;
    for (uint32_t i = 0; i < MB; ++i) {
      Value row = min(m0 + i, M - 1u);
      xg.push_back(row * kg);
      xb.push_back(row * nb);
    }
    const Value pf_base = cast(u64, n0 + R * uint32_t(std::max(prefetch, 0))) * cast(u64, rowbytes);
    auto emit = [&](bool guarded) {
      // Byte offsets of the rows (u64; guarded: rows past N re-read row N-1).
      std::vector<Value> wrow;
      for (uint32_t r = 0; r < R; ++r) wrow.push_back(cast(u64, guarded ? min(n0 + r, N - 1u) : n0 + r) * cast(u64, rowbytes));
      std::vector<Var> acc, corr;
      for (uint32_t i = 0; i < MB * P; ++i) acc.push_back(var(splat(0.0f, 8)));
      for (uint32_t i = 0; i < MB; ++i) corr.push_back(var(splat(0.0f, int(R))));
      for_row_steps(w, pf_base, prefetch != 0, prefetch_l1, R, false, nb, BB, [&](Value b, uint32_t, uint32_t) {
        const Value bo = cast(u64, b) * uint64_t(BB);
        // The rows' scales as one line: their f16 bits gathered four to a
        // u64 word (scalar loads and shifts, off the vector ports).
        std::vector<Value> words;
        for (uint32_t r0 = 0; r0 < R; r0 += 4) {
          Value word;
          for (uint32_t r = r0; r < r0 + 4; ++r) {
            Value o = wrow[r] + bo;
            Value h = cast(u64, pb.byte(o)) | (cast(u64, pb.byte(o + 1u)) << 8u);
            word = r == r0 ? h : (word | (h << uint64_t(16 * (r - r0))));
          }
          words.push_back(word);
        }
        const Value dw = cast(line(f32, int(R)), bitcast(line(f16, int(R)), words.size() == 1 ? words[0] : make_line(words)));
        std::vector<Value> sd, xlo, xhi;
        for (uint32_t i = 0; i < MB; ++i) {
          const Value gb = cast(u64, xg[i] + b * 2u);
          sd.push_back(dw * splat(xd[cast(u64, xb[i] + b)], int(R)));
          const Value qsum = xs[gb] + xs[gb + uint64_t(1)];
          corr[i] = fma(sd[i], splat(cast(f32, qsum) * -8.0f, int(R)), corr[i].get());
          const Value lo = xq[gb], hi = xq[gb + uint64_t(1)];
          xlo.push_back(cat4(lo, lo));
          xhi.push_back(cat4(hi, hi));
        }
        for (uint32_t p = 0; p < P; ++p) {
          const Value c = cat4(u32x4(pb.line16(wrow[p] + bo + 2u)), u32x4(pb.line16(wrow[p + P] + bo + 2u)));
          const Value lo = c & 0x0f0f0f0fu, hi = (c >> 4u) & 0x0f0f0f0fu;
          for (uint32_t i = 0; i < MB; ++i) {
            const Value isum = dot4(lo, xlo[i], dot4(hi, xhi[i], splat(constant(i32, 0), 8)));
            Var& a = acc[i * P + p];
            a = fma(cast(line(f32, 8), isum), pair_lanes(sd[i], int(p), int(p + P)), a.get());
          }
        }
      });
      store_gemv_outputs(y, M, N, m0, n0, MB, R, guarded, [&](uint32_t i, uint32_t r) {
        const Value a = acc[i * P + r % P].get();
        const int h = int(r / P) * 4;
        return ((extract(a, h) + extract(a, h + 1)) + (extract(a, h + 2) + extract(a, h + 3))) + extract(corr[i].get(), int(r));
      });
    };
    if_(n0 + R <= N, [&] { emit(false); }).else_([&] { emit(true); });
  });
}

}  // namespace kgen::ops::quant
