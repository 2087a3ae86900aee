// GEMV kernels reading packed GGML blocks (Y = X·Wᵀ, W: N rows of blocks).
//
// CPU: memory-bound on the weights (LLM decode), so each weight byte is read
// once and decoded in registers: a work-item takes `rows` output rows (that
// many independent byte streams in flight) and `mb` rows of X (which stay in
// L1), decodes each 16-element group of a block to an f32x16 line
// (ops/quant/lines.h) and accumulates x·w in f32x16 lines, reduced across lanes
// once per output. X stays f32 (no Q8 quantization of the activations): the
// result differs from Σ x·dequant(w) only by f32 summation rounding.
#include <functional>
#include <string>
#include <vector>

#include "ops/common/gpu_reduce.h"
#include "ops/quant/kernels.h"
#include "ops/quant/lines.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

QuantRowParams quant_row_params(KernelBuilder& kb) {
  auto w = kb.input("w", u8);
  auto y = kb.output("y", f32);
  Value M = kb.scalar("m", u32), N = kb.scalar("n", u32), K = kb.scalar("k", u32);
  kb.workgroup(1);
  return {w, y, M, N, K, PackedBytes{w, false, true}};
}

void store_gemv_outputs(const Array& y, const Value& M, const Value& N, const Value& m0, const Value& n0, uint32_t mb,
                        uint32_t rows, bool guarded, const std::function<Value(uint32_t i, uint32_t r)>& out) {
  for (uint32_t i = 0; i < mb; ++i)
    for (uint32_t r = 0; r < rows; ++r) {
      Value n = n0 + r;
      Value ok = m0 + i < M;
      if (guarded) ok = ok && n < N;
      if_(ok, [&] { y[(m0 + i) * N + n] = out(i, r); });
    }
}

ir::Kernel qgemv_cpu_kernel(QFormat fmt, int rows, int mb) {
  const FormatInfo& fi = info(fmt);
  const uint32_t R = uint32_t(rows), MB = uint32_t(mb), BB = uint32_t(fi.block_bytes);
  const uint32_t L = uint32_t(fi.block_elems / 16);
  std::string name = std::string("quant_gemv_") + fi.name + "_r" + std::to_string(R) + "_m" + std::to_string(MB);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    const auto [w, y, M, N, K, pb] = quant_row_params(kb);
    Value n0 = group_id(0) * R, m0 = group_id(1) * MB;
    Value nb = K / uint32_t(fi.block_elems), kl = K / 16u, rowbytes = nb * BB;
    // Rows of X past M (last group only) re-read row M-1: in bounds, never stored.
    std::vector<Value> xrow;
    for (uint32_t i = 0; i < MB; ++i) xrow.push_back(min(m0 + i, M - 1u) * kl);
    auto emit = [&](bool guarded) {
      std::vector<Var> acc;
      for (uint32_t i = 0; i < MB * R; ++i) acc.push_back(var(splat(0.0f, 16)));
      // Rows past N (last group only) re-read row N-1, never stored.
      std::vector<Value> wrow;
      for (uint32_t r = 0; r < R; ++r) wrow.push_back((guarded ? min(n0 + r, N - 1u) : n0 + r) * rowbytes);
      std::vector<BlockLines> dec(R, BlockLines(fmt, pb));
      for_range(0u, nb, [&](Value b) {
        for (uint32_t r = 0; r < R; ++r) dec[r].load(wrow[r] + b * BB);
        for (uint32_t g = 0; g < L; ++g) {
          std::vector<Value> xs;
          for (uint32_t i = 0; i < MB; ++i) xs.push_back(x[xrow[i] + b * L + g]);
          for (uint32_t r = 0; r < R; ++r) {
            Value wv = dec[r].line(int(g));
            for (uint32_t i = 0; i < MB; ++i) acc[i * R + r] = fma(wv, xs[i], acc[i * R + r]);
          }
        }
      });
      store_gemv_outputs(y, M, N, m0, n0, MB, R, guarded,
                         [&](uint32_t i, uint32_t r) { return reduce_add(acc[i * R + r].get()); });
    };
    if_(n0 + R <= N, [&] { emit(false); }).else_([&] { emit(true); });
  });
}

namespace {

// The GPU GEMVs' frame: buffers (x: f32 or f32x4, w: u32 words, y: f32),
// scalars (n, k), output y[m][n] for group (n = wrapped_group_id(), m = z); `row`
// accumulates this work-item's share of the dot product of W's row n (its
// byte offset given) with X's row m, and the workgroup reduces the shares.
ir::Kernel gpu_gemv(const std::string& name, QFormat fmt, int wg, bool subgroups, int x_lanes,
                    const std::function<void(const PackedBytes&, const Array& x, const Value& rowbase, const Value& m,
                                             const Value& K, Var& acc)>& row) {
  const uint32_t WG = uint32_t(wg), BB = uint32_t(info(fmt).block_bytes), QK = uint32_t(info(fmt).block_elems);
  return kernel(name + (subgroups ? "_sg" : "") + "_wg" + std::to_string(WG), [&](KernelBuilder& kb) {
    auto x = kb.input("x", x_lanes == 1 ? f32 : line(f32, x_lanes));
    auto w = kb.input("w", u32);
    auto y = kb.output("y", f32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(WG);
    auto sh = shared_array(f32, WG);
    PackedBytes pb{w, true, false};
    Value n = wrapped_group_id(), m = group_id(2), t = local_id(0);
    if_(n < N, [&] {
      Var acc = var(0.0f);
      row(pb, x, n * (K / QK) * BB, m, K, acc);
      Value r = group_reduce(acc.get(), GroupCombine::Sum, sh, WG, subgroups);
      if_(t == 0u, [&] { y[m * N + n] = r; });
    });
  });
}

}  // namespace

ir::Kernel qgemv_gpu_kernel(QFormat fmt, int wg, bool subgroups) {
  const FormatInfo& fi = info(fmt);
  const uint32_t BB = uint32_t(fi.block_bytes), QK = uint32_t(fi.block_elems);
  return gpu_gemv(std::string("quant_gemv_gpu_") + fi.name, fmt, wg, subgroups, 1,
                  [&](const PackedBytes& pb, const Array& x, const Value& rowbase, const Value& m, const Value& K, Var& acc) {
    // Neighbouring work-items take neighbouring elements (coalesced bytes).
    for_range(local_id(0), K, [&](Value e) {
      Value wv = dequant_element(fmt, pb, rowbase + (e / QK) * BB, e % QK);
      acc = fma(wv, Value(x[m * K + e]), acc.get());
    }, uint32_t(wg));
  });
}

ir::Kernel qgemv_gpu_blocks_kernel(QFormat fmt, int wg, bool subgroups) {
  if (fmt != QFormat::Q4_0 && fmt != QFormat::Q8_0)
    throw std::invalid_argument("qgemv_gpu_blocks_kernel: Q4_0 or Q8_0");
  const FormatInfo& fi = info(fmt);
  const uint32_t BB = uint32_t(fi.block_bytes);
  const bool q4 = fmt == QFormat::Q4_0;
  return gpu_gemv(std::string("quant_gemv_gpu_blocks_") + fi.name, fmt, wg, subgroups, 4,
                  [&](const PackedBytes& pb, const Array& x, const Value& rowbase, const Value& m, const Value& K, Var& acc) {
    // A work-item per block: its quant bytes as whole u32 words (blocks are
    // 2-byte aligned: u32le reads the two words a straddling one spans),
    // codes times X's lines, then one multiply by the scale.
    Value xrow = m * (K / 4u);
    for_range(local_id(0), K / 32u, [&](Value b) {
      Value o = rowbase + b * BB, xb = xrow + b * 8u;
      Var s = var(0.0f);
      for (uint32_t i = 0; i < (q4 ? 4u : 8u); ++i) {
        Value q = pb.u32le(o + 2u + 4u * i);
        Value xl = x[xb + i];
        Value xh = q4 ? Value(x[xb + 4u + i]) : Value();
        for (int j = 0; j < 4; ++j) {
          if (q4) {
            s = fma(cast(f32, (q >> uint32_t(8 * j)) & 0xFu) - 8.0f, xl.lane(j), s.get());
            s = fma(cast(f32, (q >> uint32_t(8 * j + 4)) & 0xFu) - 8.0f, xh.lane(j), s.get());
          } else {
            s = fma(cast(f32, bitcast(i32, q << uint32_t(24 - 8 * j)) >> 24), xl.lane(j), s.get());
          }
        }
      }
      acc = fma(pb.half(o), s.get(), acc.get());
    }, uint32_t(wg));
  });
}

}  // namespace kgen::ops::quant
