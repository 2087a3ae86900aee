// Where the quantized-weight family's kernel forms apply (ops/quant/problem.h).
#include "ops/quant/problem.h"

#include <stdexcept>
#include <string>

#include "ops/matmul/plan.h"
#include "ops/quant/kernels.h"

namespace kgen::ops::quant {

QFormat format_of(const Problem& p) {
  auto f = format_from_id(p.attr("format", kDefaultFormat));
  if (!f) throw std::invalid_argument("unknown format id " + std::to_string(p.attr("format", kDefaultFormat)));
  return *f;
}

QShape qshape(const Problem& p) {
  return {p.dim(0), p.dim(1), p.dim(2), format_of(p), p.attr("xq", 1) != 0, p.attr("layout", 0) == kR16Rows};
}

int64_t x8_gemv_max_m(const QShape& s) { return has_r16(s.f) ? 16 : 64; }
bool x8_gemv(const QShape& s) { return s.x8 && has_int8_gemv(s.f) && s.m <= x8_gemv_max_m(s); }
bool gpu_block_gemv(const QShape& s) { return !s.r16 && (s.f == QFormat::Q4_0 || s.f == QFormat::Q8_0); }
// Not Q8_0 without byte permutes: its pairs (four 16-byte loads per row)
// lost to its 8-lane form (0.68-0.72 ms against 0.45, 1x4096x4096).
bool pair_gemv(const QShape& s) {
  return (s.f == QFormat::Q4_0 || s.f == QFormat::Q4_1 || s.f == QFormat::Q5_0 || s.f == QFormat::Q5_1) && s.k % 64 == 0;
}
bool wide_gemv(const QShape& s, const TargetCaps& caps) {
  return s.x8 && s.m <= x8_gemv_max_m(s) && has_wide_int8_gemv(s.f) && caps.byte_permute;
}
// Q4_K, Q5_K and Q6_K: as the other int8 GEMVs.
int64_t x8k_gemv_max_m(QFormat f) { return f == QFormat::Q2_K ? 2048 : f == QFormat::Q3_K ? 512 : 64; }
bool x8k_gemv(const QShape& s) { return s.x8 && has_x8k_gemv(s.f) && s.m <= x8k_gemv_max_m(s.f); }
bool q8_pair_gemv(const QShape& s, const TargetCaps& caps) { return s.f == QFormat::Q8_0 && s.k % 64 == 0 && caps.byte_permute; }
bool quad_gemv(const QShape& s, const TargetCaps& caps) { return pair_gemv(s) && s.k % 128 == 0 && caps.byte_permute; }

int64_t rows_r16_tiles(const QShape& s) { return cdiv(s.k / info(s.f).block_elems, rows_r16_blocks_per_tile(s.f)); }
bool rows_r16_gemm(const QShape& s) {
  return !s.r16 && has_rows_r16_gemm(s.f) && rows_r16_tiles(s) * rows_r16_tile_bytes(s.f) <= (int64_t(256) << 10);
}

bool tile_bf16_scratch_fits(int64_t mc, int64_t nc, int64_t kc) { return mc * (64 * kc + 4096 * nc) <= (int64_t(1) << 20); }
bool tile_bf16_fits(const QShape& s, const TargetCaps& caps) {
  return is_cpu(caps) && caps.matrix_tiles && s.x8 && !s.r16 && has_line_decoder(s.f) && s.k % 32 == 0;
}

Variant tiled_variant(const QShape& s, const TargetCaps& caps) {
  if (is_cpu(caps)) return variant_of(default_cpu_tile(s.m, s.n, s.k, caps)).set("impl", kTiled);
  return gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, true, 1, caps.max_shared_bytes)).set("impl", kTiled);
}

}  // namespace kgen::ops::quant
