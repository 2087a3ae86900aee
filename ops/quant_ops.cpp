// OpDefs of the quantized-weight family (ops/quant.h): dequantize, quantize,
// qmatmul.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "ops/matmul_plan.h"
#include "ops/op.h"
#include "ops/quant.h"
#include "ops/quant_kernels.h"
#include "ops/stream_heuristic.h"

namespace kgen::ops {

using namespace quant;

namespace {

constexpr int64_t kDefaultFormat = int64_t(QFormat::Q8_0);
enum QImpl { kGemvCpu = 0, kGemvAny = 1, kTiled = 2, kGemvX8 = 3, kGemvR16 = 4, kGemmRowsR16 = 5, kGemvBlocks = 6, kTileBf16 = 7 };

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

QFormat format_of(const Problem& p) {
  auto f = format_from_id(p.attr("format", kDefaultFormat));
  if (!f) throw std::invalid_argument("unknown format id " + std::to_string(p.attr("format", kDefaultFormat)));
  return *f;
}

std::string format_help() {
  std::string s = "format=";
  for (const auto& i : all_formats()) s += std::to_string(int(i.format)) + "(" + i.name + ")" + (i.format == QFormat::Q6_K ? "" : "|");
  return s;
}

// dims (rows, k) with k a multiple of the block size.
void validate_rows_k(const Problem& p, size_t ndims, bool quantize) {
  if (p.dims.size() != ndims) throw std::invalid_argument("expected " + std::to_string(ndims) + " dims");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("only f32");
  QFormat f = format_of(p);
  if (quantize && f != QFormat::Q8_0 && f != QFormat::Q4_0) throw std::invalid_argument("quantize supports q8_0 and q4_0");
  int64_t k = p.dims.back();
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (k % info(f).block_elems) throw std::invalid_argument("k must be a multiple of " + std::to_string(info(f).block_elems));
  // The largest tensor (rows x k; qmatmul's M x N x K: X, W or Y) must have
  // 32-bit indices.
  double elems = 1;
  for (int64_t d : p.dims) elems *= double(d);
  if (ndims == 3) elems = std::max({double(p.dim(0)) * double(p.dim(2)), double(p.dim(1)) * double(p.dim(2)),
                                    double(p.dim(0)) * double(p.dim(1))});
  if (elems >= 2e9) throw std::invalid_argument("too large: indices are 32-bit");
}

TensorSpec packed_tensor(std::string name, QFormat f, int64_t rows, int64_t k) {
  size_t b = padded_bytes(f, rows, k);
  return TensorSpec{std::move(name), ir::types::U8, b, {int64_t(b)}, 0, 255};
}

void make_packed(QFormat f, int64_t rows, int64_t k, std::vector<uint8_t>& bytes, uint64_t seed) {
  bytes.assign(padded_bytes(f, rows, k), 0);
  random_blocks(f, bytes.data(), rows * (k / info(f).block_elems), seed);
}

// The launch of a one-element-per-work-item dequantize kernel over n
// elements: workgroups of 64 numbered over (x, y) (dequant_grid_x).
Step element_dequant_launch(ir::Kernel k, std::vector<int> buffers, std::vector<uint64_t> scalars, int64_t n) {
  Step s{std::move(k), {}, std::move(buffers), std::move(scalars)};
  uint64_t groups = uint64_t(cdiv(n, 64));
  uint32_t gx = dequant_grid_x(groups);
  s.dims.grid = {gx, uint32_t(cdiv(int64_t(groups), gx)), 1};
  s.dims.workgroup = {64, 1, 1};
  return s;
}

// Steps of a generic (any-target) dequantize of n elements from `w` into `y`.
Step dequant_step(QFormat f, bool words, int w, int y, int64_t n) {
  return element_dequant_launch(dequantize_kernel(f, words), {w, y}, {u(n)}, n);
}

Step dequant_lines_step(QFormat f, int bpi, int w, int y, int64_t nblocks, bool stream = false) {
  Step s{dequantize_lines_kernel(f, bpi, stream), {}, {w, y}, {u(nblocks)}};
  s.dims.grid = {uint32_t(cdiv(nblocks, bpi)), 1, 1};
  return s;
}

// Dequantize of rows interleaved by 16 (layout=16) into rows x k f32 (any target).
Step dequant_r16_step(QFormat f, bool words, int w, int y, int64_t rows, int64_t k) {
  return element_dequant_launch(dequantize_r16_kernel(f, words), {w, y}, {u(rows), u(k)}, rows * k);
}

// ---- dequantize ----

void register_dequantize() {
  OpDef d;
  d.name = "dequantize";
  d.attr_defaults = {{"format", kDefaultFormat}};
  d.description = "GGML block-quantized bytes (Q4_0..Q8_0, Q2_K..Q6_K) to f32";
  d.dims_help = "rows k";
  d.attrs_help = format_help();
  d.validate = [](const Problem& p) { validate_rows_k(p, 2, false); };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{packed_tensor("w", format_of(p), p.dim(0), p.dim(1))}; };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("y", ir::types::F32, {p.dim(0), p.dim(1)})}; };
  d.make_input = [](const Problem& p, int, std::vector<uint8_t>& bytes, uint64_t seed) {
    make_packed(format_of(p), p.dim(0), p.dim(1), bytes, seed);
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    std::vector<Variant> c;
    if (is_cpu(caps)) {
      c.push_back(Variant{}.set("impl", 0).set("words", 0));
      if (has_line_decoder(format_of(p)))
        for (int b : {1, 4, 16})
          for (int nt : {0, 1}) c.push_back(Variant{}.set("impl", 1).set("bpi", b).set("nt", nt));
    }
    c.push_back(Variant{}.set("impl", 0).set("words", 1));
    return c;
  };
  d.heuristic = [](const Problem& p, const TargetCaps& caps) {
    if (!is_cpu(caps)) return Variant{}.set("impl", 0).set("words", 1);
    // Large outputs stream (stream_heuristic.h): 4096 x 4096 (64 MiB of f32)
    // Q4_K 2.3 -> 1.85-1.9 ms at 1 thread, 2.1 -> 0.95-1.8 at 2 (0.75-0.80 ->
    // 1.0-1.1 of the triad: the plain stores' reads for ownership were a
    // third of the traffic).
    if (has_line_decoder(format_of(p)))
      return Variant{}.set("impl", 1).set("bpi", 4).set("nt", stream_output(caps, 4.0 * double(p.dim(0) * p.dim(1))) ? 1 : 0);
    return Variant{}.set("impl", 0).set("words", 0);
  };
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    QFormat f = format_of(p);
    Plan pl;
    int64_t n = p.dim(0) * p.dim(1);
    if (v.get("impl") == 1)
      pl.steps.push_back(dequant_lines_step(f, int(v.get("bpi", 4)), 0, 1, n / info(f).block_elems, v.get("nt", 0) != 0));
    else
      pl.steps.push_back(dequant_step(f, v.get("words") != 0, 0, 1, n));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    QFormat f = format_of(p);
    dequantize_ref(f, static_cast<const uint8_t*>(in[0]), static_cast<float*>(out[0]),
                   p.dim(0) * p.dim(1) / info(f).block_elems);
  };
  // The kernels compute each weight with the reference's operations: equal
  // on the CPU (no contraction); GPUs may fuse d·q - m into an fma.
  d.tolerance = [](const Problem&) { return 1e-6; };
  d.flops = [](const Problem& p) { return double(p.dim(0) * p.dim(1)); };
  d.bytes = [](const Problem& p) {
    return double(packed_bytes(format_of(p), p.dim(0), p.dim(1))) + 4.0 * double(p.dim(0) * p.dim(1));
  };
  d.memory_bound = true;
  for (const auto& fi : all_formats()) {
    int64_t qk = fi.block_elems;
    for (auto dims : std::vector<std::vector<int64_t>>{{1, qk}, {3, 2 * qk}, {7, 5 * qk}}) {
      Problem p{"dequantize", dims, ir::ScalarKind::F32, {{"format", int64_t(fi.format)}}};
      d.test_problems.push_back(p);
    }
    d.bench_problems.push_back(Problem{"dequantize", {4096, 4096}, ir::ScalarKind::F32, {{"format", int64_t(fi.format)}}});
  }
  register_op(std::move(d));
}

// ---- quantize ----

void register_quantize() {
  OpDef d;
  d.name = "quantize";
  d.attr_defaults = {{"format", kDefaultFormat}};
  d.description = "f32 to GGML Q8_0 / Q4_0 blocks, bit-exact with GGML's reference quantizers";
  d.dims_help = "rows k";
  d.attrs_help = "format=8(q8_0)|2(q4_0)";
  d.validate = [](const Problem& p) { validate_rows_k(p, 2, true); };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("x", ir::types::F32, {p.dim(0), p.dim(1)}, -2, 2)}; };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{packed_tensor("q", format_of(p), p.dim(0), p.dim(1))}; };
  // impl=0: the any-target kernel (two blocks per work-item, scalar code);
  // impl=1: CPU lines, bpi blocks per work-item in chunks of ch.
  d.candidates = [](const Problem&, const TargetCaps& caps) {
    std::vector<Variant> c{Variant{}.set("impl", 0)};
    if (is_cpu(caps))
      for (int ch : {8, 16})
        for (int b : {16, 64}) c.push_back(Variant{}.set("impl", 1).set("bpi", b).set("ch", ch));
    return c;
  };
  d.heuristic = [](const Problem&, const TargetCaps& caps) {
    // Chunks of 8 blocks: at 2 threads 1.2-1.3 ms against 1.4-1.6 for 16
    // (Q8_0 and Q4_0 4096 x 4096, Zen 5); at 1 thread 16 are as fast (Q8_0)
    // or up to 10% faster (Q4_0).
    if (!is_cpu(caps)) return Variant{}.set("impl", 0);
    return Variant{}.set("impl", 1).set("bpi", 64).set("ch", 8);
  };
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    QFormat f = format_of(p);
    int64_t nb = p.dim(0) * p.dim(1) / 32;
    Plan pl;
    if (v.get("impl") == 1) {
      int64_t bpi = v.get("bpi", 64);
      Step s{quantize_lines_kernel(f, int(bpi), int(v.get("ch", 8))), {}, {0, 1}, {u(nb)}};
      s.dims.grid = {uint32_t(cdiv(nb, bpi)), 1, 1};
      pl.steps.push_back(std::move(s));
      return pl;
    }
    Step s{quantize_kernel(f), {}, {0, 1}, {u(nb)}};
    uint64_t groups = uint64_t(cdiv(cdiv(nb, 2), 64));
    uint32_t gx = dequant_grid_x(groups);
    s.dims.grid = {gx, uint32_t(cdiv(int64_t(groups), gx)), 1};
    s.dims.workgroup = {64, 1, 1};
    pl.steps.push_back(std::move(s));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    QFormat f = format_of(p);
    int64_t n = p.dim(0) * p.dim(1);
    auto* q = static_cast<uint8_t*>(out[0]);
    std::memset(q, 0, padded_bytes(f, p.dim(0), p.dim(1)));
    if (f == QFormat::Q8_0) quantize_q8_0_ref(static_cast<const float*>(in[0]), q, n);
    else quantize_q4_0_ref(static_cast<const float*>(in[0]), q, n);
  };
  d.tolerance = [](const Problem&) { return 0.0; };  // bytes: exact
  d.flops = [](const Problem& p) { return 3.0 * double(p.dim(0) * p.dim(1)); };
  d.bytes = [](const Problem& p) {
    return 4.0 * double(p.dim(0) * p.dim(1)) + double(packed_bytes(format_of(p), p.dim(0), p.dim(1)));
  };
  d.memory_bound = true;
  for (int64_t f : {int64_t(QFormat::Q8_0), int64_t(QFormat::Q4_0)}) {
    for (auto dims : std::vector<std::vector<int64_t>>{{1, 32}, {1, 64}, {3, 96}, {5, 4096}})
      d.test_problems.push_back(Problem{"quantize", dims, ir::ScalarKind::F32, {{"format", f}}});
    d.bench_problems.push_back(Problem{"quantize", {4096, 4096}, ir::ScalarKind::F32, {{"format", f}}});
  }
  register_op(std::move(d));
}

// ---- qmatmul ----

struct QShape {
  int64_t m, n, k;
  QFormat f;
  bool x8;   // attr xq: X may be quantized to int8 blocks (GGML's numerics)
  bool r16;  // attr layout=16: W (Q4_0, Q8_0, Q4_K, Q6_K) with rows interleaved by 16 (quant_formats.h)
  // W's bytes in its layout.
  size_t w_bytes() const { return r16 ? r16_bytes(f, n, k) : padded_bytes(f, n, k); }
};
QShape qshape(const Problem& p) {
  return {p.dim(0), p.dim(1), p.dim(2), format_of(p), p.attr("xq", 1) != 0, p.attr("layout", 0) == kR16Rows};
}

// The int8-activation GEMV applies (CPU, few rows of X; up to 64 for the
// formats without the interleaved GEMM, impl=5, whose prefill it is).
int64_t x8_gemv_max_m(const QShape& s) { return has_r16(s.f) ? 16 : 64; }
bool x8_gemv(const QShape& s) { return s.x8 && has_int8_gemv(s.f) && s.m <= x8_gemv_max_m(s); }
// The GPU GEMV with a work-item per block (impl=6): Q4_0 and Q8_0 on GGML rows.
bool gpu_block_gemv(const QShape& s) { return !s.r16 && (s.f == QFormat::Q4_0 || s.f == QFormat::Q8_0); }
// The int8 GEMV's block-pair form applies (two 32-element blocks per line):
// the nibble formats. Not Q8_0 without byte permutes: its pairs (four
// 16-byte loads per row) measured 0.68-0.72 ms against 0.45 for its 8-lane
// form (Zen 5, 1x4096x4096, 1 thread).
bool pair_gemv(const QShape& s) {
  return (s.f == QFormat::Q4_0 || s.f == QFormat::Q4_1 || s.f == QFormat::Q5_0 || s.f == QFormat::Q5_1) && s.k % 64 == 0;
}
// The 16-lane unit forms (w16; Q2_K's and Q3_K's only int8 GEMV), whose
// scales decode by byte permutes.
bool wide_gemv(const QShape& s, const TargetCaps& caps) {
  return s.x8 && s.m <= x8_gemv_max_m(s) && has_wide_int8_gemv(s.f) && caps.byte_permute;
}
// The super-block form (xk; X per 256, quant_x8k.cpp): Q2_K to Q5_K; Q2_K's
// and Q3_K's also for prefill, where it beats dequantize + the f32 GEMM
// (Zen 5, 4 rows of X
// per work-item, N = K = 4096, kgen op, 1 / 2 threads: Q2_K M = 128 17 ms
// against 28, 512 69 / 34 against 88 / 45, 2048 (2 threads) 140 against
// 156; Q3_K 128 20 against 28, 256 43 / 21 against 46 / 26, 512 83 / 41
// against 82 / 45, 2048 196 against 161).
int64_t x8k_gemv_max_m(QFormat f) { return f == QFormat::Q2_K ? 2048 : f == QFormat::Q3_K ? 512 : 64; }  // Q4_K, Q5_K: as the other int8 GEMVs
bool x8k_gemv(const QShape& s) { return s.x8 && has_x8k_gemv(s.f) && s.m <= x8k_gemv_max_m(s.f); }
// Q8_0's pairs regrouped by byte permutes (p2 on Q8_0): a tuning candidate.
// Zen 5, 1x4096x4096: from the LLC 0.34 / 0.18 ms against 0.38 / 0.20 for
// the 8-lane signed units, but from DRAM (rotating) 0.51 / 0.38 against
// 0.47 / 0.38, so the heuristic keeps the units.
bool q8_pair_gemv(const QShape& s, const TargetCaps& caps) { return s.f == QFormat::Q8_0 && s.k % 64 == 0 && caps.byte_permute; }
// ... and its block-quad form (four blocks regrouped by byte permutes).
bool quad_gemv(const QShape& s, const TargetCaps& caps) { return pair_gemv(s) && s.k % 128 == 0 && caps.byte_permute; }

// GGML rows packed into the interleaved tiles inside the GEMM (impl=5):
// the layout=16 formats, while a row group's tiles fit a 256 KiB stack scratch.
int64_t rows_r16_tiles(const QShape& s) { return cdiv(s.k / info(s.f).block_elems, rows_r16_blocks_per_tile(s.f)); }
bool rows_r16_gemm(const QShape& s) {
  return !s.r16 && has_rows_r16_gemm(s.f) && rows_r16_tiles(s) * rows_r16_tile_bytes(s.f) <= (int64_t(256) << 10);
}

// Prefill on bf16 matrix tiles (impl=7, quant_tile.cpp): GGML rows, X
// that may be rounded (xq=1), a CPU with AMX-BF16. Its default: all of X's
// 32-row panels per work-item up to 16 (512 rows), up to 8 blocks of 32 rows
// of W (fewer where the threads would lack 4 work-items each), K in slices
// of 256. A work-item's scratch (decoded W: mc·32·kc bf16; Yᵀ's blocks:
// mc·nc·32·32 f32) must fit the CPU target's 1 MiB.
bool tile_bf16_scratch_fits(int64_t mc, int64_t nc, int64_t kc) { return mc * (64 * kc + 4096 * nc) <= (int64_t(1) << 20); }
bool tile_bf16_fits(const QShape& s, const TargetCaps& caps) {
  return is_cpu(caps) && caps.matrix_tiles && s.x8 && !s.r16 && has_line_decoder(s.f) && s.k % 32 == 0;
}
int64_t tile_bf16_from(QFormat f) {
  switch (f) {
    case QFormat::Q8_0: case QFormat::Q6_K: return 16;
    case QFormat::Q4_1: return 20;
    case QFormat::Q4_0: case QFormat::Q4_K: case QFormat::Q5_K: return 24;
    case QFormat::Q5_1: case QFormat::Q3_K: return 28;
    default: return 32;  // Q5_0, Q2_K
  }
}
Variant tile_bf16_variant(const QShape& s, const TargetCaps& caps) {
  const int64_t np = cdiv(s.m, 32), rb = cdiv(s.n, 32);
  const int64_t mc = std::clamp<int64_t>(rb / (4 * std::max<int64_t>(caps.threads, 1)), 1, 8);
  return Variant{}.set("impl", kTileBf16).set("mc", mc).set("nc", std::min<int64_t>(np, 16)).set("kc", 256);
}

// Rows interleaved by 16 (layout=16): its GEMV on the CPU (int8 activations,
// any M), else dequantize + the tiled GEMM on any target.
std::vector<Variant> r16_candidates(const QShape& s, const TargetCaps& caps) {
  std::vector<Variant> c;
  if (is_cpu(caps)) {
    if (s.x8)
      for (int g : {1, 2})
        for (int mb : {1, 2, 4, 8})
          if (mb <= s.m || mb == 1)
            for (int pf : {0, 1, 2, 4, 8, 16}) {
              Variant v = Variant{}.set("impl", kGemvR16).set("groups", g).set("mb", mb);
              if (pf) v.set("pf", pf);
              c.push_back(v);
              if (pf) c.push_back(Variant(v).set("pl1", 1));
            }
    c.push_back(variant_of(default_cpu_tile(s.m, s.n, s.k, caps)).set("impl", kTiled));
    return c;
  }
  c.push_back(gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, true, 1, caps.max_shared_bytes)).set("impl", kTiled));
  return c;
}

std::vector<Variant> qmm_candidates(const Problem& p, const TargetCaps& caps) {
  QShape s = qshape(p);
  std::vector<Variant> c;
  if (s.r16) return r16_candidates(s, caps);
  // An int8 GEMV variant, and where it prefetches, its twin prefetching
  // into L1 (pl1=1), and where it also walks several rows of W, the twins
  // walking them one after another (seq=1).
  auto push_gemv = [&](Variant v) {
    c.push_back(v);
    if (!v.get("pf")) return;
    c.push_back(Variant(v).set("pl1", 1));
    if (v.get("rows") > 1) {
      c.push_back(v.set("seq", 1));
      c.push_back(Variant(v).set("pl1", 1));
    }
  };
  if (is_cpu(caps)) {
    if (x8_gemv(s))
      for (int r : {2, 4, 8})
        for (int mb : {1, 2, 4})
          if (mb <= s.m || mb == 1) {
            c.push_back(Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb));
            if (r == 8 && mb == 1)
              for (int pf : {1, 2})
                for (int sgn : {0, 1}) {
                  if (sgn && s.f != QFormat::Q8_0) continue;
                  Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("pf", pf);
                  if (sgn) v.set("sgn", 1);
                  push_gemv(v);
                }
            if (s.f == QFormat::Q8_0) c.push_back(Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("sgn", 1));
            if ((pair_gemv(s) || q8_pair_gemv(s, caps)) && r >= 4)
              for (int pf : {0, 1, 2, 4}) {
                Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("p2", 1);
                if (pf) v.set("pf", pf);
                push_gemv(v);
              }
            if (row_pair_gemv_format(s.f) && r >= 4 && mb <= 2)
              for (int pf : {0, 1, 2, 4}) {
                Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("rp", 1);
                if (pf) v.set("pf", pf);
                c.push_back(v);
                if (pf) c.push_back(Variant(v).set("pl1", 1));
              }
            if (quad_gemv(s, caps) && r >= 4)
              for (int pf : {0, 1, 2, 4}) {
                Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("p4", 1);
                if (pf) v.set("pf", pf);
                push_gemv(v);
              }
          }
    if (has_line_decoder(s.f) && s.m <= 16)
      for (int r : {1, 2, 4, 8})
        for (int mb : {1, 2, 4})
          if (mb <= std::max<int64_t>(s.m, 1) || mb == 1) c.push_back(Variant{}.set("impl", kGemvCpu).set("rows", r).set("mb", mb));
    if (wide_gemv(s, caps))
      for (int r : {2, 4, 8})
        for (int mb : {1, 2})
          if (mb <= s.m || mb == 1)
            for (int pf : {0, 1, 2}) {
              Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("w16", 1);
              if (pf) v.set("pf", pf);
              push_gemv(v);
            }
    if (x8k_gemv(s))
      for (int r : {1, 2, 4, 8})
        for (int mb : {1, 2, 4, 8})
          if (mb <= s.m || mb == 1)
            for (int pf : {0, 1, 2}) {
              Variant v = Variant{}.set("impl", kGemvX8).set("rows", r).set("mb", mb).set("xk", 1);
              if (pf) v.set("pf", pf);
              push_gemv(v);
            }
    if (s.x8 && rows_r16_gemm(s))
      for (int mb : {1, 2, 4, 8}) c.push_back(Variant{}.set("impl", kGemmRowsR16).set("mb", mb));
    if (tile_bf16_fits(s, caps)) {
      const Variant def = tile_bf16_variant(s, caps);
      c.push_back(def);
      for (int mc : {2, 4, 8})
        for (int kc : {256, 512, 1024}) {
          const Variant v = Variant(def).set("mc", mc).set("kc", kc);
          if (kc % info(s.f).block_elems == 0 && tile_bf16_scratch_fits(mc, def.get("nc"), kc) &&
              std::find(c.begin(), c.end(), v) == c.end())
            c.push_back(v);
        }
    }
    c.push_back(variant_of(default_cpu_tile(s.m, s.n, s.k, caps)).set("impl", kTiled));
  } else {
    for (int wg : {64, 128, 256})
      if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
        c.push_back(Variant{}.set("impl", kGemvAny).set("wg", wg));
    if (gpu_block_gemv(s))
      for (int wg : {32, 64, 128}) c.push_back(Variant{}.set("impl", kGemvBlocks).set("wg", wg));
    c.push_back(gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, true, 1, caps.max_shared_bytes)).set("impl", kTiled));
  }
  return c;
}

// Measured with kgen tune 1x4096x4096 (rotating inputs) on Zen 5, 1 / 2
// threads. One row group per work-item: its tiles are one contiguous stream,
// and the work-items' streams follow each other (2 or 4 groups side by side:
// Q4_0 0.30-0.40 ms against 0.27 at 1 thread). A software prefetch 4.5-7 KiB
// ahead, whatever the tile size: Q4_0 8 tiles 0.24 / 0.18 ms (none 0.27 /
// 0.20-0.29, 16 tiles 0.25 / 0.18), Q8_0 4 tiles 0.44-0.45 / 0.24 (two groups
// 0.47 / 0.24-0.31), Q4_K 2 tiles 0.27-0.28 / 0.18 (16 tiles 0.31-0.36 / 0.25;
// GGML rows 0.41 / 0.22), Q6_K 1 tile 0.84-0.87 / 0.46 (GGML rows 1.10 / 0.60;
// compute-bound on the 6-bit decode). More rows of X: 8 per work-item (M = 64,
// 1 thread: Q8_0 4.0 ms against 8.3 with 4 rows and 23 with two groups of 8,
// which spill; Q4_K 5.4 against 6.7; Q4_0 3.4 against 3.3).
// Q4_K and Q6_K prefetch a slice of the tile 4 ahead at each step of the
// tile (their tiles are 36 and 105 lines; all of them at the tile's start
// left Q6_K at 18 GB/s from DRAM, 0.76 ms against 0.26 from the LLC): Q4_K
// 0.26 ms (2 ahead 0.29), Q6_K 0.34 (1 ahead 0.40, 8 0.33).
Variant r16_heuristic(const QShape& s) {
  const int64_t pf = r16_prefetch_spread(s.f) ? 4 : std::max<int64_t>(1, 4608 / r16_tile_bytes(s.f));
  return Variant{}.set("impl", kGemvR16).set("mb", std::min<int64_t>(s.m, 8)).set("groups", 1).set("pf", pf);
}

Variant qmm_rules(const Problem& p, const TargetCaps& caps) {
  QShape s = qshape(p);
  if (s.r16) {
    // The int8 GEMV for any M: X·Wᵀ with X in row blocks of mb against the
    // tiles, W streaming once per block (from the LLC when it fits). Zen 5,
    // 1 thread, Q4_0 4096x4096: M = 64 3.3 ms, M = 512 27 ms, against 24 and
    // 113 ms dequantizing W for the packed f32 GEMM.
    if (is_cpu(caps) && s.x8) return r16_heuristic(s);
    return r16_candidates(s, caps).back();
  }
  if (is_cpu(caps)) {
    // GGML rows with several rows of X: each work-item packs its 16 rows into
    // the interleaved tiles and runs them against all of X (impl=5). Zen 5,
    // 1 thread, N = K = 4096, against the int8 GEMV (M <= 8) or dequantize +
    // the f32 GEMM: Q4_0 M = 3 0.58 ms (0.63), 8 0.75 (1.65), 16 1.18
    // (15.4), 64 3.4 (22), 512 27 (90); Q4_K M = 4 0.82 (1.05), 64 4.8 (21);
    // Q6_K M = 6 1.47 (1.59), 64 5.9 (21); Q8_0 M = 8 2.7 (3.3), 64 5.3, 512
    // 32 (84), and since its packing xors whole tile lines (session 26) M = 8
    // 1.17, 32 2.35 (3.85), 64 4.1-4.3, 512 29.7. The layout=16 repack at M =
    // 64: Q4_0 3.4, Q4_K 5.2, Q6_K 7.7.
    // Unmeasured without byte dot products: taken there where the GEMV stops.
    // With several X rows per GEMV work-item (mb below) the GEMV holds out
    // longer (kgen tune rotating, 1 thread): Q4_0 M = 4 0.61 ms against 0.83
    // for impl=5; Q4_K M = 4 0.85 (1.02), M = 5-6 even; Q6_K M = 5-6
    // 1.15-1.17 (1.61), M = 7 1.76 (1.59); Q8_0 M = 5-7 1.37-1.41 against
    // 2.3-2.4 for its units and ~1.2-1.6 for its block pairs.
    //
    // Q4_1, Q5_0, Q5_1 and Q5_K in tiles of their own (session 27; kgen op,
    // 1 thread, N = K = 4096, against the GEMVs below): Q4_1 M = 6 0.93 ms
    // (1.72), 16 1.52-1.59 (3.4), 64 4.2 (13.5); Q5_0 M = 4 0.73 (0.80), 5
    // 0.95 (1.58), 64 4.1 (11.9); Q5_1 M = 5 1.31 (2.02), 64 4.5 (17.7); Q5_K
    // 16 2.0 (2.4), 64 5.3 (9.7), but at M = 8 1.35 against 1.18 for its
    // super-block GEMV in one pass of X rows, which also beats Q4_K's here at
    // M = 5-7 (0.74 / 0.86 / 0.94 ms against 0.88 / 0.88 / 0.97).
    // Q2_K and Q3_K in tiles of codes widened to bytes with a scale per 16
    // (as Q6_K): from 9 rows, where the super-block GEMV takes 8 in one
    // pass (M = 8 Q2_K 0.80 ms against 0.89, Q3_K 0.93 against 1.00); M =
    // 12 Q2_K 1.19 (1.59), Q3_K 1.26 (1.83); 128 10.2 (13.1), 9.3 (15.3);
    // 512 48 (52), 37 (61).
    // On Intel AVX-512 with byte dot products (intel_x8: no strided_prefetch,
    // Zen 5's flag) Q5_0 keeps the GEMV's quads at 4 rows of X and Q3_K
    // takes impl=5 from 8 (Granite Rapids VM, kgen tune N = K = 4096, 1 / 2
    // threads, ms: Q5_0 M = 4 1.40-1.45 / 0.72-0.77 against 1.76 / 0.89;
    // Q3_K M = 8, three alternated runs, 2.24-2.39 / 1.15-1.17 against
    // 2.40-2.66 / 1.22-1.25 for its super-block GEMV).
    const bool intel_x8 = caps.byte_dot && caps.vector_bits >= 512 && !caps.strided_prefetch;
    const int64_t rows_r16_from = !caps.byte_dot ? 9
                                  : s.f == QFormat::Q5_0 ? (intel_x8 ? 5 : 4)
                                  : s.f == QFormat::Q4_0 || s.f == QFormat::Q8_0 || s.f == QFormat::Q4_1 || s.f == QFormat::Q5_1 ? 5
                                  : s.f == QFormat::Q6_K ? 7
                                  : s.f == QFormat::Q3_K && intel_x8 ? 8
                                  : s.f == QFormat::Q5_K || s.f == QFormat::Q2_K || s.f == QFormat::Q3_K ? 9 : 8;
    // X in blocks of 4 rows, except where for Q4_0 and Q4_K a block would be
    // mostly padding (kgen tune rotating, 1 thread: Q4_0 M = 5 0.82 ms with
    // blocks of 1 against 1.00 with 4, M = 6 0.88-0.91 with 1-2 against 1.04,
    // M = 7 0.94-0.95 with 1 against 1.00; Q4_K M = 5-6 1.16-1.17 with 2
    // against 1.30-1.36; M = 8, 16, 64 best with 4, as Q8_0 and Q6_K are).
    // Q4_1 in blocks of 2 up to 16 rows (M = 8 1.02 ms against 1.13 with 4,
    // 16 1.52 against 1.60; 64 4.47 against 4.21), Q5_1 at M = 5-6 as Q4_K.
    // Six rows in blocks of 2 in every format (Granite Rapids VM, kgen tune
    // 6x4096x4096, 1 / 2 threads, ms: Q5_0 1.81 / 1.07 against 2.15 / 1.13
    // with 4, Q8_0 2.54 / 1.41 against 2.79 / 1.51).
    const int64_t r16_mb = s.f == QFormat::Q4_1 ? (s.m <= 16 ? 2 : 4)
                           : s.m % 4 == 0 || s.m > 8 ? 4
                           : s.m == 6 ? 2
                           : s.f == QFormat::Q4_0  ? (s.m % 2 == 0 ? 2 : 1)
                           : s.f == QFormat::Q4_K || s.f == QFormat::Q5_1 ? (s.m <= 6 ? 2 : 4)
                                                   : 4;
    // On bf16 matrix tiles (AMX) from 16-32 rows of X, where the tiles' speed
    // pays for decoding W to bf16 (Granite Rapids VM, N = K = 4096, kgen op,
    // ms, 1 thread unless said, impl=5 -> impl=7): Q8_0 M = 12 2.74 -> 2.68,
    // 16 2.9 -> 2.6, 32 4.5 -> 2.9, 2 threads 16 1.65 -> 1.37; Q6_K 16 3.7
    // -> 3.5; Q4_1 16 3.1 -> 3.0, 24 3.9 -> 3.5; Q4_0 16 2.3 -> 2.8, 24 3.2
    // -> 2.9, 2 threads 24 1.64 -> 1.59, 32 2.15 -> 1.61; Q4_K 16 2.8 ->
    // 3.0, 24 3.9 -> 3.3; Q5_K 24 4.1 -> 3.5; Q5_1 24 even, 32 4.7 -> 3.8;
    // Q3_K 24 even; Q5_0 24 3.2 -> 3.7, 32 3.8 -> 3.6; Q2_K 24 4.0 -> 4.1,
    // 32 5.3 -> 4.1; M = 64 Q4_0 6.8 -> 4.0, 512 51 -> 18.
    if (tile_bf16_fits(s, caps) && s.m >= tile_bf16_from(s.f)) return tile_bf16_variant(s, caps);
    if (s.x8 && rows_r16_gemm(s) && s.m >= rows_r16_from) return Variant{}.set("impl", kGemmRowsR16).set("mb", r16_mb);
    // GEMV while the weights' decode dominates; beyond ~8 rows of X the
    // packed GEMM on dequantized weights wins (the decode is amortised).
    // With xq the byte dot products (dot4) do the decode at memory speed.
    // 8 rows for the 32-element formats (measured 1x4096x4096 and 1x32768x16384,
    // 1 thread: ~5% over 4 rows), 4 for Q5_K (its per-row scale decode needs
    // the registers).
    // With byte dot products (AVX-512 VNNI), measured on Zen 5 (kgen tune
    // 1x4096x4096, rotating inputs, 1 / 2 threads): Q6_K in 16-lane units
    // (w16) 0.44 / 0.39 ms with 2 rows and the prefetch (4 rows 0.50 / 0.40,
    // 8 rows 0.47 / 0.40); the f32 line decoder took 1.09 / 0.63 and the
    // 8-lane int8 units 1.87 / 0.98.
    // Several rows of X (M <= 8, where impl=5 does not take them): up to 4
    // per work-item, so W streams once per 4 rows instead of once per row
    // (Zen 5, 1 thread, N = K = 4096, kgen op from the LLC, against one row
    // per work-item: M = 2 Q4_0 0.34 ms (0.40), Q8_0 0.58 (0.75), Q5_0 0.54
    // (0.76), Q4_K 0.40 (0.47), Q6_K 0.37 (0.46); M = 4 Q8_0 1.12 (1.52),
    // Q5_0 0.79 (1.50), Q6_K 0.76 (0.93); M = 8 Q5_0 1.61 (3.06), Q4_1 1.94
    // (2.45)). Q4_K's 16-lane units take 2 (8 rows of W: 16 accumulators),
    // Q6_K's 2 (kgen tune rotating, M = 4-6: 2 best).
    // Unmeasured on 16-register targets (AVX2), where 8 rows of W by 4 of X
    // would spill: one row there.
    const int64_t x_rows = caps.vector_bits >= 512 ? std::min<int64_t>(s.m, 4) : 1;
    // One row of X with byte dot products on AVX-512, where the prefetchers
    // do not follow strided streams (Intel): each work-item walks its rows of
    // W one after another (seq=1), as one sequential stream, not in lockstep
    // as R streams a row apart, several of them in each 4 KiB page at the
    // rows' 2-3.5 KiB (Q4_0, Q4_K, Q6_K at K = 4096). Bench
    // quant/gemv/*/1x4096x4096 (ratio to the triad, from DRAM), Granite
    // Rapids VM, two runs each of the previous heuristic and this one,
    // alternated, 1 / 2 threads: Q4_0 0.89-0.90 / 0.86-0.88 -> 0.92-0.94 /
    // 0.90, Q4_1 0.81-0.84 / 0.80-0.82 -> 0.89-0.92 / 0.76-0.91, Q5_0 0.74
    // / 0.75 -> 0.80-0.84 / 0.66-0.81, Q5_1 0.75 / 0.74 -> 0.73-0.74 / 0.73,
    // Q4_K 0.81-0.84 / 0.81-0.82 -> 0.88-0.90 / 0.84-0.86, Q5_K 0.73-0.76 /
    // 0.75-0.77 -> 0.80-0.83 / 0.80-0.83, Q6_K 0.83-0.86 / 0.84-0.86 ->
    // 0.92-0.93 / 0.88-0.91, Q2_K 0.67-0.68 / 0.64 -> 0.68-0.71 / 0.67-0.68,
    // Q3_K 0.70-0.71 / 0.68-0.69 -> 0.74-0.78 / 0.74-0.77 (Q8_0 below). With
    // 4 rows of X the decode dominates and the shared X loads win (kgen
    // tune, Q4_0 M = 4: 0.92 ms lockstep against 1.03). Rows of a page or
    // more share no page, and X's side repeated per row costs more than the
    // single stream gains (kgen tune 1x4096x11008, 1 thread: Q4_0, 6192-byte
    // rows, 2.21 ms against 2.03-2.07 in lockstep; at 1x2048x2048, 1152-byte
    // rows, 0.19 against 0.196). Zen 5 (strided_prefetch) is not measured
    // with it.
    // Two rows of X the same (kgen tune 2x4096x4096, 1 / 2 threads, ms,
    // previous heuristic -> the best seq=1 variant of the same run, which the
    // heuristic's is within 0-4% of: Q4_0 0.86 / 0.48 -> 0.79-0.82
    // / 0.43, Q4_1 1.02 / 0.54 -> 0.83 / 0.47, Q5_0 1.14 / 0.62 -> 1.03 /
    // 0.58 (quads, where it kept pairs), Q4_K 0.98 / 0.52 -> 0.92 / 0.50,
    // Q5_K 1.19 / 0.62 -> 1.13 / 0.59, Q3_K 0.96 / 0.52 -> 0.81 / 0.44,
    // Q6_K 1.28 / 0.64 -> 1.23 / 0.64).
    const bool intel_gemv = intel_x8 && s.m == 1;
    const bool seq_rows = intel_x8 && s.m <= 2 && packed_bytes(s.f, 1, s.k) < 4096;
    const bool wide_q6k = caps.byte_dot && caps.vector_bits >= 512 && s.f == QFormat::Q6_K && x8_gemv(s);
    if (wide_q6k && seq_rows) return Variant{}.set("impl", kGemvX8).set("rows", 2).set("mb", s.m).set("w16", 1).set("pf", 2).set("seq", 1);
    // From 3 rows of X (2 per work-item) on Intel: 4 rows of W one after
    // another, two workgroups ahead; a few % (kgen tune M×4096×4096, two
    // alternated runs, 1 / 2 threads, ms, against 2 rows in lockstep one
    // ahead: M = 3 2.30-2.40 / 1.19-1.29 (2.41-2.45 / 1.26-1.27), M = 4
    // 2.42-2.49 / 1.22-1.25 (2.45-2.50 / 1.25-1.27), M = 6 3.07-3.22 /
    // 1.69-1.77 (3.17-3.20 / 1.83-1.84)).
    if (wide_q6k && intel_x8 && s.m >= 3 && s.m <= 8)
      return Variant{}.set("impl", kGemvX8).set("rows", 4).set("mb", 2).set("w16", 1).set("pf", 2).set("seq", 1);
    if (wide_q6k && s.m <= 8)
      return Variant{}.set("impl", kGemvX8).set("rows", 2).set("mb", std::min<int64_t>(x_rows, 2)).set("w16", 1).set("pf", 1);
    // The K-quants without byte dot products on 256-bit vectors (AVX2),
    // where the rules below were measured on AVX-512 with VNNI and left Q2_K
    // and Q3_K on the f32 line decoder. Zen 3, kgen tune 1x4096x4096
    // rotating, 1 / 2 threads, ms, against that heuristic:
    //   Q2_K: 16-lane units, 2 rows (1.02-1.06 / 0.54 against 5.4 / 2.6; X
    //     per super-block needs byte lookups: 11.8);
    //   Q3_K: X per super-block (xk), 4 rows one ahead (0.89 / 0.56 against
    //     6.9 / 2.8);
    //   Q4_K: xk, 4 rows one after another (0.84 / 0.51 against 1.54 / 0.93);
    //   Q5_K: 16-lane units, 4 rows (1.26-1.36 / 0.73-0.97 against 1.84-1.90
    //     / 1.02; xk 1.17-1.64 / 0.87-0.91);
    //   Q6_K: xk, the groups' signed scales in the integer domain, 4 rows
    //     one after another (1.01 / 0.63 against 4.46 / 1.75).
    // Two workgroups ahead with one thread, one with two (as below).
    if (!caps.byte_dot && caps.vector_bits < 512 && s.x8 && s.m <= 8) {
      const int ahead = caps.threads == 1 ? 2 : 1;
      auto xk = [&](int pf, bool seq) {
        Variant v = Variant{}.set("impl", kGemvX8).set("rows", 4).set("mb", 1).set("xk", 1).set("pf", pf);
        return seq ? v.set("seq", 1) : v;
      };
      auto w16 = [&](int rows) { return Variant{}.set("impl", kGemvX8).set("rows", rows).set("mb", 1).set("w16", 1).set("pf", ahead); };
      if (s.f == QFormat::Q2_K && wide_gemv(s, caps)) return w16(2);
      if (s.f == QFormat::Q3_K && x8k_gemv(s)) return xk(1, false);
      if ((s.f == QFormat::Q4_K || s.f == QFormat::Q6_K) && x8k_gemv(s)) return xk(2, true);
      if (s.f == QFormat::Q5_K && wide_gemv(s, caps)) return w16(4);
    }
    // Q3_K: its 16-lane int8 units, 8 rows (kgen tune rotating, 1 / 2
    // threads: 0.31 / 0.18 ms; 4 rows 0.33 / 0.19) where the f32 line
    // decoder took 1.2 ms from the LLC and ~11 from DRAM.
    // Q2_K the same (Zen 5, 1 thread: 0.21 ms, 4 rows 0.22, 2 rows 0.23;
    // its f32 line decoder 0.99-1.11).
    // Both also for prefill up to 64 rows, two rows of X per work-item (1
    // thread, N = K = 4096, against dequantize + the f32 GEMM: Q2_K M = 9
    // 1.57 ms (13.7), 32 5.1 (25), 64 10 (21.5); Q3_K 2.4 (21.5), 7.9 (16.5),
    // 15.6 (21.2)).
    // Q5_K in Q4_K's units plus the fifth bit, the same from 2 rows of X
    // (M = 9 2.4 ms, 32 7.8, against 3.8 and 11.6 for its 8-lane units and
    // 18 at 32 for dequantize + GEMM); one row: 4 rows of W (rotating
    // 1x4096x4096, 1 / 2 threads: 0.315 / 0.227 ms; 8 rows 0.36 / 0.31; the
    // 8-lane units 0.54 / 0.28).
    // Q2_K and Q3_K with X per super-block of 256 (xk, quant_x8k.cpp): the
    // sub-block scales apply as integers, one conversion per super-block.
    // Q2_K's products are table lookups (vpermi2b: AVX512-VBMI). Zen 5, kgen
    // tune 1x4096x4096 rotating, against the 16-lane units (w16) with X
    // blocks of 32: 1 thread Q2_K 0.179 ms (0.212), Q3_K 0.256 (0.307); 2
    // threads 0.099 and 0.137, 4 rows with pf=2 best at both (8 rows within
    // 3%). Several rows of X (kgen op, 1 thread): M = 32 Q2_K 3.8 ms with 4
    // per work-item (2: 4.1; w16 5.5), Q3_K 5.3 (6.0; 8.2); M = 64 2 per
    // work-item: Q2_K 8.2 (10.3), Q3_K 11.9 (16.5). From 8 rows of X, 8 per
    // work-item against one row of W (more rows of W spill), against 4 × 4
    // (before dot2_i16 took Q3_K's scale multiply and add): Q2_K M = 8 0.81
    // ms (1.04), 16 1.7 (2.0), 64 6.7 (12.1), 512 52 (65); Q3_K 8 1.06
    // (1.19), 16 2.2 (2.6), 64 8.6 (9.9), 512 68 (77); with dot2_i16 Q3_K M
    // = 64 7.5, 512 61. Q2_K's 4-7 rows also on one row of W (M = 4 0.47
    // against 0.53).
    // Q4_K and Q5_K the same (their sub-block scales by dot2_i16; Q4_K from
    // 5 rows of X takes impl=5 above): kgen tune 1x4096x4096 rotating, 1
    // thread, against w16: Q4_K 0.238-0.246 ms (0.256), Q5_K 0.29 (0.316);
    // 2 threads within the noise (0.14-0.18 either way); kgen op M = 2 / 4:
    // Q4_K 0.35 / 0.69 (0.41 / 0.82), Q5_K 0.40 / 0.68 (0.49 / 0.97); Q5_K
    // M = 64 9.7 ms (15.5). From 8 rows of X, the rows split evenly into
    // groups of at most 8 (9 rows: 5 + 4, not 8 + 1).
    // One or two rows of X, rows one after another (seq_rows): Q3_K in its 16-lane
    // units (0.58 / 0.33 ms against 0.63 / 0.34 with X per super-block),
    // the others with X per super-block, 4 rows of W, 2 workgroups ahead.
    if (seq_rows && s.f == QFormat::Q3_K && wide_gemv(s, caps))
      return Variant{}.set("impl", kGemvX8).set("rows", 2).set("mb", s.m).set("w16", 1).set("pf", 2).set("seq", 1);
    if (x8k_gemv(s) && caps.byte_dot && caps.vector_bits >= 512 && (s.f != QFormat::Q2_K || caps.byte_lookup)) {
      if (seq_rows) return Variant{}.set("impl", kGemvX8).set("rows", 4).set("mb", s.m).set("xk", 1).set("pf", 2).set("seq", 1);
      // 4 rows of X on Intel: 2 rows of W one after another, two workgroups
      // ahead, except for Q2_K (kgen tune 4x4096x4096, 1 / 2 threads, ms,
      // against 4 rows in lockstep one ahead: Q3_K 1.25 / 0.65 (1.40 /
      // 0.81), Q4_K 1.35-1.37 / 0.70 (1.41 / 0.79), Q5_K 1.62 / 0.86 (1.70
      // / 0.93); Q2_K's one row of W is within 4%).
      if (intel_x8 && s.m == 4 && s.f != QFormat::Q2_K)
        return Variant{}.set("impl", kGemvX8).set("rows", 2).set("mb", 4).set("xk", 1).set("pf", 2).set("seq", 1);
      // Up to 8 rows of X in one pass over W (session 27, kgen op, 1 thread,
      // against 4 then the rest: M = 5 Q2_K 0.55 ms (0.91), Q3_K 0.62
      // (1.67), Q5_K 0.81 (1.40); M = 7 Q3_K 0.79 (1.45); M = 3, 4 rows of
      // W, against 2 then 1: Q2_K 0.35 (0.49), Q3_K 0.48 (0.72), Q4_K 0.43
      // (0.60), Q5_K 0.53 (0.74)).
      const int64_t xm = s.m > 8 ? cdiv(s.m, cdiv(s.m, 8)) : s.m;
      const int64_t rows = xm > 4 || (xm == 4 && s.f == QFormat::Q2_K) ? 1 : 4;
      Variant v = Variant{}.set("impl", kGemvX8).set("rows", rows).set("mb", xm).set("xk", 1).set("pf", xm == 1 ? 2 : 1);
      return v;
    }
    const bool wide_only = s.f == QFormat::Q3_K || s.f == QFormat::Q2_K || s.f == QFormat::Q5_K;
    if (wide_only && wide_gemv(s, caps) && caps.byte_dot && caps.vector_bits >= 512)
      return Variant{}.set("impl", kGemvX8).set("rows", s.f == QFormat::Q5_K && s.m == 1 ? 4 : 8).set("mb", s.m >= 2 ? 2 : 1)
          .set("w16", 1).set("pf", 1);
    // The other formats without impl=5 (Q4_1, Q5_0, Q5_1; Q5_K without VNNI): the 8-lane
    // int8 GEMV with 4 rows of X per work-item up to 32 rows (M = 32: Q4_1
    // 9.5 ms against 17.2, Q5_0 11.9 against 18.7, Q5_K 12.1 against 18.1;
    // at 64 they break even). Measured with byte dot products (VNNI) only.
    // On AVX-512 the nibble formats' block pairs (p2), 8 rows of W and 4 of
    // X, up to 64 rows of X (1 thread, N = K = 4096: Q5_1 M = 9 3.2 ms
    // against 6.3 for the 8-lane rule; Q5_0 M = 16 3.4 (5.3), 48 9.4 (18.7,
    // the GEMM path); Q4_1 M = 32 6.8-7.1 (10.1), 64 14.4 (22.8)).
    // Q4_1 and Q5_1 in block quads there (session 15, 1 thread: Q4_1 M = 16
    // 3.4 ms against 3.6, 64 13.5 against 14.2; Q5_1 3.8 against 4.4-5.2,
    // 32 9.1 against 8.8, 64 17.7 against 20.1); Q5_0 broke even.
    if (caps.byte_dot && caps.vector_bits >= 512 && x8_gemv(s) && pair_gemv(s) && !has_r16(s.f) && s.m > 8) {
      const bool quads = (s.f == QFormat::Q4_1 || s.f == QFormat::Q5_1) && quad_gemv(s, caps);
      return Variant{}.set("impl", kGemvX8).set("rows", 8).set("mb", 4).set(quads ? "p4" : "p2", 1);
    }
    if (caps.byte_dot && x8_gemv(s) && !has_r16(s.f) && s.m > 8 && s.m <= 32)
      return Variant{}.set("impl", kGemvX8).set("rows", 4).set("mb", 4);
    if (caps.byte_dot && s.m == 1 && s.f == QFormat::Q6_K && has_line_decoder(s.f))
      return Variant{}.set("impl", kGemvCpu).set("rows", 1).set("mb", 1);
    if (x8_gemv(s) && s.m <= 8) {
      // Q6_K: 2 rows (its 16-lane scale and offset lines per row fill the
      // registers; kgen tune 1x4096x4096 on the EPYC, 1 thread: 2.10 ms
      // against 2.41 with 4 rows and 2.45 with 8). Q4_K: 8 rows since its
      // unit scales are one line per row (1 thread 1.19-1.27 ms against
      // 1.38-1.73 with 4; 2 threads 0.68-0.73 against 0.86-1.04); with byte
      // dot products 4 rows, hence no prefetch (Zen 5: 0.40 / 0.23 ms against
      // 0.97 / 0.47 for 8 rows with it).
      const int q4k_rows = caps.byte_dot ? 4 : 8;
      const int rows = info(s.f).block_elems == 32 ? 8 : s.f == QFormat::Q4_K ? q4k_rows : s.f == QFormat::Q6_K ? 2 : 4;
      Variant v = Variant{}.set("impl", kGemvX8).set("rows", rows).set("mb", x_rows);
      // Q8_0 with signed codes, also where a u8·i8 byte dot exists: on Zen 5
      // (kgen tune 1x4096x4096 rotating, 1 / 2 threads) 0.45-0.47 / 0.44 ms
      // against 0.52-0.72 / 0.48 for unsigned codes (sign flip and offset),
      // though the unsigned loop is faster from cache (0.34 against 0.39).
      // On the hosts where short rows are walked one after another
      // (intel_gemv) Q8_0 keeps its units in lockstep, with unsigned codes
      // and the next workgroup prefetched (its rows span a page from K =
      // 3840, and at 2048 the pairs one row after another were even, 0.343
      // ms against 0.335; 1x4096x11008: 3.35 ms against 3.65 two
      // workgroups ahead, 3.55 signed): bench 1x4096x4096, 1 / 2 threads,
      // two runs, 0.82-0.85 / 0.89-0.90 of the triad signed, 0.94 / 0.93
      // unsigned, 0.94-0.95 / 0.89-0.91 for the pairs one row after another
      // (the A/B above: signed 0.84-0.85 / 0.89-0.91, unsigned 0.94-0.95 /
      // 0.93).
      if (s.f == QFormat::Q8_0 && !intel_gemv) v.set("sgn", 1);
      // Q8_0 with 2-4 rows of X: the block pairs regrouped by byte permutes,
      // 4 rows of W (kgen tune rotating, 1 thread: M = 2 0.47 ms against
      // 0.63 for the signed units, M = 4 0.77 against 1.16 (which spill at
      // 8 x 4 accumulators); 2 threads M = 4 0.44 against 0.62).
      if (s.f == QFormat::Q8_0 && s.m >= 2 && caps.vector_bits >= 512 && q8_pair_gemv(s, caps))
        return Variant{}.set("impl", kGemvX8).set("rows", 4).set("mb", x_rows).set("p2", 1).set("pf", 2);
      // Q4_0 on AVX-512: block pairs, two blocks per zmm dot4 (1 thread
      // 0.33-0.36 -> 0.28 ms); on AVX2 a 16-lane line is two ymm anyway.
      // Block quads where K allows (their two byte permutes have word-aligned
      // patterns: vpermt2w, AVX512-BW): 15 instructions per row and 128
      // weights against 30 (Zen 5, rotating 1x4096x4096: see README).
      // Q4_1, Q5_0 and Q5_1 as quads too (bench 1x4096x4096 from DRAM, 1
      // thread: Q4_1 0.78 -> 0.93 of the triad, Q5_1 0.71 -> 0.87, Q5_0 0.74
      // either way; kgen tune rotating: 0.37 ms against 0.41). From 2 rows of
      // X Q5_0 keeps its pairs (M = 4: 0.78 ms against 0.84; for Q4_1 and
      // Q5_1 the best of two tuning runs disagreed on mb and pf, 0.80-1.05 ms
      // against 0.86-1.13 for this choice).
      // On Intel (intel_x8) Q5_0 takes quads for several rows of X too
      // (kgen tune 2x4096x4096, 1 / 2 threads: 1.03 / 0.58 ms with rows one
      // after another against 1.14 / 0.62 for pairs).
      const bool quads = caps.vector_bits >= 512 && quad_gemv(s, caps) && !(s.f == QFormat::Q5_0 && s.m >= 2 && !intel_x8);
      if (quads) v.set("p4", 1);
      else if (caps.vector_bits >= 512 && pair_gemv(s)) v.set("p2", 1);
      // Each row is a short stream of K/32 blocks, R side by side, which the
      // hardware prefetcher picks up late: prefetching the same block of the
      // next workgroup's rows (kgen tune 1x4096x4096 rotating, EPYC, 1
      // thread) took Q4_0 1.16-1.21 -> 0.84-0.87 ms, Q8_0 1.41 -> 1.14,
      // Q4_K 1.31 -> 1.17-1.21; Q6_K (2 rows, compute-bound) showed no gain.
      // Two workgroups ahead with one thread; with two, the next workgroup
      // (Zen 5, kgen tune 1x4096x4096 rotating, pf=1 against pf=2: 1 thread
      // Q4_0 0.232-0.237 against 0.220-0.223 ms, Q4_1 0.252-0.260 against
      // 0.242, Q8_0 0.441-0.465 against 0.437-0.458, Q4_K 0.247 against
      // 0.239-0.241, Q5_0 even; 2 threads Q8_0 0.339 against 0.366, Q4_K
      // 0.177 against 0.190).
      const int ahead = caps.threads == 1 && !(s.f == QFormat::Q8_0 && intel_gemv) ? 2 : 1;
      if (rows == 8) v.set("pf", ahead);
      // Q4_0 on 256-bit vectors without byte dot products: row pairs
      // (quant_row_pairs.cpp), one line of two rows' codes per block (Zen 3,
      // kgen op 1x128x8192 --profile from L2: 1.3-1.8 -> 1.04 ns per block
      // and row; bench 1x4096x4096 from DRAM, 2 threads: 14.2-14.9 -> 15.4-16.6
      // GB/s; 1 thread even, ~0.7 of the triad for every form on the day).
      if (!quads && caps.vector_bits < 512 && !caps.byte_dot && row_pair_gemv_format(s.f) && rows == 8 && x_rows <= 2)
        v.set("rp", 1);
      // Quads for one row of X: 4 rows of W per work-item (kgen tune
      // rotating, Zen 5, 1x4096x4096, 2 threads, pf=1: Q4_0 0.175-0.184 ms
      // against 0.179-0.192 for 8 rows over three runs, Q4_1 0.193 against
      // 0.211, Q5_0 0.225 against 0.256, Q5_1 0.249 against 0.252). Since X
      // comes prepared (quad_x8_kernel) fewer rows no longer repeat its
      // decode, and one thread takes 4 rows too, 4 work-items (the same 16
      // rows) ahead (Intel, bench 1x4096x4096 from DRAM, 1 thread, 5 runs:
      // Q4_0 0.89-0.91 of the triad against 0.85-0.88 for 8 rows 2 ahead;
      // Zen 5 kept 8 rows when X was decoded per work-item, 0.239 against
      // 0.262 ms, and is not re-measured).
      if (quads && s.m == 1) v.set("rows", 4).set("pf", caps.threads == 1 ? 4 : 1);
      // Rows one after another (seq_rows): the next work-item's rows ahead.
      if (quads && seq_rows) v.set("rows", 4).set("pf", 1).set("seq", 1);
      // Quads for 4 rows of X on Intel: 4 rows of W (8 by 4 rows of X spill:
      // kgen tune 4x4096x4096, 1 / 2 threads, ms, against 8 rows: Q4_0 1.00
      // / 0.54 (1.09 / 0.58), Q4_1 1.19 / 0.68 (1.47 / 0.71)), two
      // workgroups ahead, and for the five-bit formats, whose rows are
      // longer, one after another (Q5_0 1.45-1.46 / 0.77 against 1.45-1.50
      // / 0.81 in lockstep, Q5_1 1.49 / 0.78-0.80 against 1.62 / 0.86;
      // Q4_0 and Q4_1 lose 2-12% that way).
      if (quads && intel_x8 && s.m == 4) {
        v.set("rows", 4).set("pf", 2);
        if (s.f == QFormat::Q5_0 || s.f == QFormat::Q5_1) v.set("seq", 1);
      }
      // Q4_K on AVX-512 with byte dot products: two sub-blocks per zmm dot4
      // and the scales decoded as lines, 8 rows, the one-workgroup-ahead
      // prefetch (kgen tune 1x4096x4096 rotating, Zen 5, medians of 3, 1 / 2
      // threads: 0.26 / 0.20 ms; 4 rows 0.30 / 0.21; 2 rows 0.34 / 0.19;
      // 8-lane units 0.38 / 0.22).
      if (s.f == QFormat::Q4_K && caps.byte_dot && caps.vector_bits >= 512)
        v.set("w16", 1).set("pf", ahead).set("rows", 8).set("mb", std::min<int64_t>(x_rows, 2));
      return v;
    }
    if (has_line_decoder(s.f) && s.m <= 8)
      return Variant{}.set("impl", kGemvCpu).set("rows", 4).set("mb", std::min<int64_t>(s.m, 4));
    return variant_of(default_cpu_tile(s.m, s.n, s.k, caps)).set("impl", kTiled);
  }
  if (s.m <= 4 && gpu_block_gemv(s)) return Variant{}.set("impl", kGemvBlocks).set("wg", 64);
  // 256 work-items per row: H200, 1x4096x4096, Q4_0 0.051 ms and Q8_0 0.046
  // against 0.058 and 0.056 with 64 (kgen tune).
  if (s.m <= 4) return Variant{}.set("impl", kGemvAny).set("wg", !caps.max_workgroup_threads || caps.max_workgroup_threads >= 256 ? 256 : 64);
  return gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, true, 1, caps.max_shared_bytes)).set("impl", kTiled);
}

// The rules' choice, with an int8 GEMV's prefetches (GGML rows or rows
// interleaved by 16) into L1 where the target pays for it
// (TargetCaps::prefetch_l1_streams), whatever its form.
Variant qmm_heuristic(const Problem& p, const TargetCaps& caps) {
  Variant v = qmm_rules(p, caps);
  if (caps.prefetch_l1_streams && (v.get("impl") == kGemvX8 || v.get("impl") == kGemvR16) && v.get("pf")) v.set("pl1", 1);
  return v;
}

Plan qmm_plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  QShape s = qshape(p);
  Plan pl;
  const size_t nio = 3;  // x, w, y
  const int64_t impl = v.get("impl");
  if (s.r16 != (impl == kGemvR16) && impl != kTiled)
    throw std::invalid_argument(s.r16 ? "qmatmul: layout=16 runs impl=4 (its GEMV) or impl=2 (tiled)"
                                      : "qmatmul: impl=4 needs layout=16");
  // X quantized once per call into temporaries (bytes, block scales, Σq per
  // 16) for the int8 GEMVs; returns their slots.
  auto quantize_x = [&]() {
    const int64_t nx = s.m * s.k / 32, bpi = 64;
    int xq = pl.add_temp(nio, size_t(s.m * s.k)), xd = pl.add_temp(nio, size_t(nx) * 4),
        xs = pl.add_temp(nio, size_t(2 * nx) * 4);
    Step q{quantize_x8_kernel(int(bpi)), {}, {0, xq, xd, xs}, {u(nx)}};
    q.dims.grid = {uint32_t(cdiv(nx, bpi)), 1, 1};
    pl.steps.push_back(std::move(q));
    return std::array<int, 3>{xq, xd, xs};
  };
  switch (impl) {
    case kGemvR16: {
      if (!is_cpu(caps)) throw std::invalid_argument("qmatmul: impl=4 (the layout=16 GEMV) is for the CPU");
      if (!s.x8) throw std::invalid_argument("qmatmul: the layout=16 GEMV needs attr xq=1");
      int g = int(v.get("groups", 2)), mb = int(v.get("mb", 1));
      if (g < 1 || g > 8 || mb < 1 || mb > 8) throw std::invalid_argument("qmatmul: groups in 1..8, mb in 1..8");
      auto [xq, xd, xs] = quantize_x();
      const int pf = int(v.get("pf"));
      if (pf < 0 || pf > 64) throw std::invalid_argument("qmatmul: pf (tiles ahead to prefetch) in 0..64");
      Step st{qgemv_r16_kernel(s.f, g, mb, pf, v.get("pl1") != 0), {}, {xq, xd, xs, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
      st.dims.grid = {uint32_t(cdiv(cdiv(s.n, kR16Rows), g)), uint32_t(cdiv(s.m, mb)), 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kGemmRowsR16: {
      if (!is_cpu(caps) || !s.x8 || !rows_r16_gemm(s))
        throw std::invalid_argument("qmatmul: impl=5 (GGML rows packed in the kernel) is for the CPU, xq=1, "
                                    "any GGML format, and K up to the stack scratch bound");
      int mb = int(v.get("mb", 4));
      if (mb < 1 || mb > 8) throw std::invalid_argument("qmatmul: mb in 1..8");
      auto [xq, xd, xs] = quantize_x();
      Step st{qgemm_rows_r16_kernel(s.f, mb, int(rows_r16_tiles(s))), {}, {xq, xd, xs, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
      st.dims.grid = {uint32_t(cdiv(s.n, kR16Rows)), 1, 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kGemvCpu: {
      if (!has_line_decoder(s.f)) throw std::invalid_argument(std::string("qmatmul: no CPU GEMV for ") + info(s.f).name);
      int r = int(v.get("rows", 4)), mb = int(v.get("mb", 1));
      if (r < 1 || r > 16 || mb < 1 || mb > 8) throw std::invalid_argument("qmatmul: rows in 1..16, mb in 1..8");
      Step st{qgemv_cpu_kernel(s.f, r, mb), {}, {0, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
      st.dims.grid = {uint32_t(cdiv(s.n, r)), uint32_t(cdiv(s.m, mb)), 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kGemvX8: {
      if (v.get("xk")) {
        // X per super-block of 256 (quant_x8k.cpp): Q2_K to Q5_K.
        if (!has_x8k_gemv(s.f)) throw std::invalid_argument("qmatmul: xk=1 (X per super-block of 256) is for Q2_K, Q3_K, Q4_K, Q5_K and Q6_K");
        if (!s.x8) throw std::invalid_argument("qmatmul: the int8 GEMV needs attr xq=1");
        if (!is_cpu(caps)) throw std::invalid_argument("qmatmul: xk=1 is a CPU GEMV");
        int r = int(v.get("rows", 8)), mb = int(v.get("mb", 1)), pf = int(v.get("pf"));
        if (r < 1 || r > 16 || mb < 1 || mb > 8) throw std::invalid_argument("qmatmul: rows in 1..16, mb in 1..8");
        if (pf < 0 || pf > 16) throw std::invalid_argument("qmatmul: pf (workgroups ahead to prefetch) in 0..16");
        const int64_t ns = s.m * s.k / 256, spi = 16;
        int xq = pl.add_temp(nio, size_t(s.m * s.k)), xd = pl.add_temp(nio, size_t(ns) * 4),
            xs = pl.add_temp(nio, size_t(ns) * 64);
        Step q{quantize_x8k_kernel(int(spi), x8k_units(s.f)), {}, {0, xq, xd, xs}, {u(ns)}};
        q.dims.grid = {uint32_t(cdiv(ns, spi)), 1, 1};
        pl.steps.push_back(std::move(q));
        Step st{qgemv_x8k_kernel(s.f, r, mb, pf, v.get("seq") != 0, v.get("pl1") != 0), {}, {xq, xd, xs, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
        st.dims.grid = {uint32_t(cdiv(s.n, r)), uint32_t(cdiv(s.m, mb)), 1};
        pl.steps.push_back(std::move(st));
        return pl;
      }
      const bool w16 = v.get("w16") != 0;
      if (w16 ? !has_wide_int8_gemv(s.f) : !has_int8_gemv(s.f))
        throw std::invalid_argument(std::string("qmatmul: no int8 GEMV for ") + info(s.f).name +
                                    (w16 ? " in 16-lane units (w16=1: Q3_K, Q4_K, Q6_K)" : ""));
      if (!s.x8) throw std::invalid_argument("qmatmul: the int8 GEMV needs attr xq=1");
      int r = int(v.get("rows", 4)), mb = int(v.get("mb", 1));
      if (r < 1 || r > 16 || mb < 1 || mb > 8) throw std::invalid_argument("qmatmul: rows in 1..16, mb in 1..8");
      auto [xq, xd, xs] = quantize_x();
      const bool sgn = v.get("sgn") != 0;
      const int pf = int(v.get("pf"));
      if (pf < 0 || pf > 16) throw std::invalid_argument("qmatmul: pf (workgroups ahead to prefetch) in 0..16");
      if (sgn && s.f != QFormat::Q8_0) throw std::invalid_argument("qmatmul: sgn=1 (signed codes) is for Q8_0");
      if (v.get("rp")) {
        if (!row_pair_gemv_format(s.f) || sgn || v.get("p2") || v.get("p4") || w16 || v.get("seq"))
          throw std::invalid_argument("qmatmul: rp=1 (row pairs) is a Q4_0 form of its own, without sgn, p2, p4, w16 or seq: " + v.str());
        if ((r != 4 && r != 8) || mb > 2) throw std::invalid_argument("qmatmul: rp=1 takes rows 4 or 8 and mb 1 or 2: " + v.str());
        Step st{qgemv_x8_row_pairs_kernel(s.f, r, mb, pf, v.get("pl1") != 0), {}, {xq, xd, xs, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
        st.dims.grid = {uint32_t(cdiv(s.n, r)), uint32_t(cdiv(s.m, mb)), 1};
        pl.steps.push_back(std::move(st));
        return pl;
      }
      const bool pairs = v.get("p2") != 0, quads = v.get("p4") != 0;
      if (pairs && !pair_gemv(s) && !q8_pair_gemv(s, caps))
        throw std::invalid_argument("qmatmul: p2=1 (block pairs) needs Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 and k % 64 == 0");
      if (quads && (pairs || !quad_gemv(s, caps)))
        throw std::invalid_argument("qmatmul: p4=1 (block quads) needs Q4_0, Q4_1, Q5_0 or Q5_1, k % 128 == 0 and byte permutes, without p2");
      // The quads and Q6_K's/Q3_K's 16-lane units read X rearranged once per
      // call: three line buffers of `bytes` per unit (a quad of 4 blocks, a
      // super-block), `per_item` units per work-item.
      std::array<int, 3> x_in = {xq, xd, xs};
      auto prepare_x = [&](ir::Kernel k, int64_t units, int64_t per_item, std::array<size_t, 3> bytes) {
        for (size_t i = 0; i < 3; ++i) x_in[i] = pl.add_temp(nio, size_t(units) * bytes[i]);
        Step q{std::move(k), {}, {xq, xd, xs, x_in[0], x_in[1], x_in[2]}, {u(units)}};
        q.dims.grid = {uint32_t(cdiv(units, per_item)), 1, 1};
        pl.steps.push_back(std::move(q));
      };
      if (w16 && has_prepared_wide_x(s.f)) prepare_x(superblock_x8_kernel(s.f, 16), s.m * s.k / 256, 16, {256, 256, 64});
      if (quads) prepare_x(quad_x8_kernel(s.f, 64), s.m * s.k / 128, 64, {128, 64, quad_x_has_min(s.f) ? 128u : 64u});
      Step st{qgemv_x8_kernel(s.f, r, mb, sgn, pf, quads ? 4 : pairs ? 2 : 1, w16, v.get("seq") != 0, v.get("pl1") != 0),
              {}, {x_in[0], x_in[1], x_in[2], 1, 2},
              {u(s.m), u(s.n), u(s.k)}};
      st.dims.grid = {uint32_t(cdiv(s.n, r)), uint32_t(cdiv(s.m, mb)), 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kTileBf16: {
      if (!tile_bf16_fits(s, caps))
        throw std::invalid_argument("qmatmul: impl=7 (bf16 matrix tiles) needs GGML rows, xq=1 and a CPU with AMX-BF16");
      const int mc = int(v.get("mc", 1)), nc = int(v.get("nc", 1)), kc = int(v.get("kc", 1024));
      if (mc < 1 || mc > 64 || nc < 1 || nc > 16 || kc < 32 || kc > 4096 || kc % 32 || kc % info(s.f).block_elems)
        throw std::invalid_argument("qmatmul: impl=7 needs mc in 1..64, nc in 1..16 and kc in 32..4096, a multiple of 32 and of the block: " +
                                    v.str());
      if (!tile_bf16_scratch_fits(mc, nc, kc))
        throw std::invalid_argument("qmatmul: impl=7's scratch (mc·(64·kc + 4096·nc) bytes) must fit 1 MiB: " + v.str());
      const int64_t np = cdiv(s.m, 32);
      int xp = pl.add_temp(nio, size_t(np * s.k / 2 * 32) * 4);
      Step px{x_pair_panels_kernel(), {}, {0, xp}, {u(s.m), u(s.k)}};
      px.dims.grid = {uint32_t(s.k / 32), uint32_t(2 * np), 1};
      pl.steps.push_back(std::move(px));
      Step st{qgemm_tile_kernel(s.f, mc, nc, kc), {}, {xp, 1, 2}, {u(s.m), u(s.n), u(s.k)}};
      st.dims.grid = {uint32_t(cdiv(cdiv(s.n, 32), mc)), uint32_t(cdiv(np, nc)), 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kGemvAny:
    case kGemvBlocks: {
      const bool blocks = v.get("impl") == kGemvBlocks;
      if (blocks && !gpu_block_gemv(s)) throw std::invalid_argument("qmatmul: impl=6 (block GEMV) needs Q4_0 or Q8_0");
      int wg = int(v.get("wg", 64));
      if (wg < 1 || (wg & (wg - 1))) throw std::invalid_argument("qmatmul: wg must be a power of two");
      if (caps.subgroups && wg < int(caps.subgroup_size)) throw std::invalid_argument("qmatmul: wg below the subgroup size");
      const auto grid = wrapped_grid(s.n, uint32_t(s.m));
      Step st{blocks ? qgemv_gpu_blocks_kernel(s.f, wg, caps.subgroups) : qgemv_gpu_kernel(s.f, wg, caps.subgroups), {}, {0, 1, 2}, {u(s.n), u(s.k)}};
      st.dims.grid = grid;
      st.dims.workgroup = {uint32_t(wg), 1, 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kTiled: {
      // W (N×K) dequantized once into an f32 temporary, then a GEMM with
      // B = Wᵀ (trans_b) reusing it for every row block of X.
      int wt = pl.add_temp(nio, size_t(s.n * s.k) * 4);
      if (s.r16 && is_cpu(caps) && info(s.f).block_elems == 32) {
        Step st{dequantize_r16_lines_kernel(s.f), {}, {1, wt}, {u(s.n), u(s.k)}};
        st.dims.grid = {uint32_t(cdiv(s.k, 64)), uint32_t(cdiv(s.n, kR16Rows)), 1};
        pl.steps.push_back(std::move(st));
      } else if (s.r16) {
        pl.steps.push_back(dequant_r16_step(s.f, !is_cpu(caps), 1, wt, s.n, s.k));
      } else if (is_cpu(caps)) {
        if (has_line_decoder(s.f)) pl.steps.push_back(dequant_lines_step(s.f, 4, 1, wt, s.n * s.k / info(s.f).block_elems));
        else pl.steps.push_back(dequant_step(s.f, false, 1, wt, s.n * s.k));
      } else {
        pl.steps.push_back(dequant_step(s.f, true, 1, wt, s.n * s.k));
      }
      if (is_cpu(caps)) {
        GemmTile t = tile_of(v);
        int ap = plan_pack_a(pl, nio, ir::types::F32, 0, 1, s.m, s.k, s.k, t.mr, t.ak);
        int bp = plan_pack_b(pl, nio, ir::types::F32, true, wt, 1, s.n, s.k, t.nl);
        plan_gemm_cpu(pl, t, ap, bp, 2, 1, s.m, s.n, s.k);
      } else {
        plan_gemm_gpu(pl, ir::types::F32, true, gpu_tile_of(v), 0, wt, 2, 1, s.m, s.n, s.k, nio);
      }
      return pl;
    }
    default: break;
  }
  throw std::invalid_argument("qmatmul: unknown impl " + std::to_string(v.get("impl")));
}

// Calls f(n, row) with each row of W dequantized (f32, K values).
template <class F>
void for_each_weight_row(const QShape& s, const uint8_t* w, F&& f) {
  std::vector<uint8_t> ggml;
  if (s.r16) {  // back to GGML rows
    ggml.resize(packed_bytes(s.f, s.n, s.k));
    unpack_r16(s.f, w, ggml.data(), s.n, s.k);
    w = ggml.data();
  }
  const int64_t nb = s.k / info(s.f).block_elems;
  const size_t row_bytes = packed_bytes(s.f, 1, s.k);
  std::vector<float> wr(size_t(s.k));
  for (int64_t n = 0; n < s.n; ++n) {
    dequantize_ref(s.f, w + size_t(n) * row_bytes, wr.data(), nb);
    f(n, wr);
  }
}

void qmm_reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  QShape s = qshape(p);
  const float* x = static_cast<const float*>(in[0]);
  float* y = static_cast<float*>(out[0]);
  for_each_weight_row(s, static_cast<const uint8_t*>(in[1]), [&](int64_t n, const std::vector<float>& wr) {
    for (int64_t m = 0; m < s.m; ++m) {
      double acc = 0;
      for (int64_t k = 0; k < s.k; ++k) acc += double(x[m * s.k + k]) * double(wr[size_t(k)]);
      y[m * s.n + n] = float(acc);
    }
  });
}

// sqrt(K · mean(x²) · mean(w²)): the size of a random-sign dot product of a
// row of X and a row of W. The errors the tolerance allows (f32 rounding;
// with xq=1 X's 8-bit rounding, ~1/254 of it) scale with it, also where an
// output happens to cancel to near zero: with few outputs their own rms can
// be that small (a 1x2x256 Q4_K check read 0.37 "relative error" for an
// absolute error of 0.04 against outputs of ~0.1).
double qmm_error_scale(const Problem& p, const std::vector<std::vector<uint8_t>>& in) {
  QShape s = qshape(p);
  const float* x = reinterpret_cast<const float*>(in[0].data());
  double xx = 0, ww = 0;
  for (int64_t i = 0; i < s.m * s.k; ++i) xx += double(x[i]) * double(x[i]);
  for_each_weight_row(s, in[1].data(), [&](int64_t, const std::vector<float>& wr) {
    for (float v : wr) ww += double(v) * double(v);
  });
  const double mx = xx / double(std::max<int64_t>(s.m * s.k, 1)), mw = ww / double(std::max<int64_t>(s.n * s.k, 1));
  return std::sqrt(double(s.k) * mx * mw);
}

Problem qmm(int64_t m, int64_t n, int64_t k, QFormat f, int64_t xq = 1) {
  return Problem{"qmatmul", {m, n, k}, ir::ScalarKind::F32, {{"format", int64_t(f)}, {"xq", xq}}};
}

void register_qmatmul() {
  OpDef d;
  d.name = "qmatmul";
  d.attr_defaults = {{"format", kDefaultFormat}, {"xq", 1}, {"layout", 0}};
  d.description = "Y = X·Wᵀ with W rows of GGML quantized blocks: GEMV decoding blocks in registers, packed int8 or bf16 matrix-tile GEMM, or dequantize + GEMM";
  d.dims_help = "M N K";
  d.attrs_help = format_help() + ", xq=1|0 (1: X may be rounded: to int8 blocks of 32 like GGML's Q8 activations, of 256 for Q2_K..Q6_K like its Q8_K, or with the decoded weights to bf16 on AMX tiles)" +
                 ", layout=0|16 (16: Q4_0/Q8_0/Q4_K/Q6_K W repacked with rows interleaved by 16, ops/quant_formats.h)";
  d.validate = [](const Problem& p) {
    validate_rows_k(p, 3, false);
    const int64_t layout = p.attr("layout", 0);
    if (layout != 0 && layout != kR16Rows) throw std::invalid_argument("layout must be 0 (GGML rows) or 16 (rows interleaved by 16)");
    if (layout && !has_r16(format_of(p))) throw std::invalid_argument("layout=16 is for q4_0, q8_0, q4_K and q6_K");
  };
  d.inputs = [](const Problem& p) {
    QShape s = qshape(p);
    TensorSpec w = packed_tensor("w", s.f, s.n, s.k);
    if (s.r16) w.bytes = s.w_bytes(), w.shape = {int64_t(w.bytes)};
    return std::vector<TensorSpec>{tensor("x", ir::types::F32, {s.m, s.k}), w};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("y", ir::types::F32, {p.dim(0), p.dim(1)})}; };
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    QShape s = qshape(p);
    if (input == 1) {
      make_packed(s.f, s.n, s.k, bytes, seed);
      if (s.r16) {
        std::vector<uint8_t> ggml = std::move(bytes);
        bytes.resize(s.w_bytes());
        repack_r16(s.f, ggml.data(), bytes.data(), s.n, s.k);
      }
      return;
    }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    bytes.resize(size_t(s.m * s.k) * 4);
    float* x = reinterpret_cast<float*>(bytes.data());
    for (int64_t i = 0; i < s.m * s.k; ++i) x[i] = dist(rng);
  };
  d.candidates = qmm_candidates;
  d.heuristic = qmm_heuristic;
  d.plan = qmm_plan;
  d.reference = qmm_reference;
  d.error_scale = qmm_error_scale;
  // xq=0: weights equal the reference's (to one rounding); what differs is
  // the f32 summation of K products (lane-blocked on the CPU, strided + tree
  // on GPUs) against the reference's double sum: the matmul bound, 2x margin
  // for the GEMM path's blocking.
  // xq=1: X is rounded to 8 bits per block of 32 (|x - x̂| <= amax/254; Q2_K
  // to Q5_K per 256, GGML's Q8_K, the same bound with the super-block's amax), so
  // Σ w·(x - x̂) has a relative rms (against the rms of Y) of about 1/254 for
  // zero-mean X, independent of K; for K = 32 the worst case is ~0.03. 0.05
  // covers both with a margin; the int8 kernel itself is checked against the
  // exact product with x̂ at the f32 bound in tests/ops/quant_test.cpp.
  d.tolerance = [](const Problem& p) {
    double t = 2 * dot_tolerance(p.dim(2));
    return qshape(p).x8 ? std::max(t, 0.05) : t;
  };
  d.flops = [](const Problem& p) { return 2.0 * double(p.dim(0) * p.dim(1) * p.dim(2)); };
  // Compulsory traffic: the packed weights once, X and Y.
  d.bytes = [](const Problem& p) {
    QShape s = qshape(p);
    return double(s.r16 ? s.w_bytes() : packed_bytes(s.f, s.n, s.k)) + 4.0 * double(s.m * s.k + s.m * s.n);
  };
  d.memory_bound = true;
  for (const auto& fi : all_formats()) {
    int64_t qk = fi.block_elems;
    for (int64_t m : {1, 3, 5}) d.test_problems.push_back(qmm(m, 7, qk, fi.format));
    d.test_problems.push_back(qmm(1, 33, 3 * qk, fi.format));
    d.test_problems.push_back(qmm(2, 9, qk == 32 ? 1024 : 512, fi.format));
    // 3 and 6 rows of X over 4 blocks: the heuristic's several-row GEMV
    // forms (block pairs, X blocks of 2-4) and impl=5 with X blocks of 2.
    d.test_problems.push_back(qmm(3, 11, 4 * qk, fi.format));
    d.test_problems.push_back(qmm(6, 9, 4 * qk, fi.format));
    d.test_problems.push_back(qmm(17, 13, 2 * qk, fi.format));  // the tiled path
    // The exact (f32 X) paths at their tight tolerance.
    d.test_problems.push_back(qmm(1, 33, 3 * qk, fi.format, 0));
    d.test_problems.push_back(qmm(3, 9, qk == 32 ? 1024 : 512, fi.format, 0));
  }
  // Rows interleaved by 16: N not a multiple of 16 (padding rows), K/32
  // odd (a half tile), several X rows, the tiled path, exact activations.
  for (QFormat f : {QFormat::Q4_0, QFormat::Q8_0, QFormat::Q4_K, QFormat::Q6_K})
    for (auto [m, n, k, xq] : {std::array<int64_t, 4>{1, 7, 1, 1}, {3, 33, 3, 1}, {2, 48, 32, 1}, {5, 20, 2, 1},
                               {17, 13, 2, 1}, {1, 33, 3, 0}}) {
      Problem p = qmm(m, n, k * info(f).block_elems, f, xq);  // k in blocks
      p.attrs["layout"] = kR16Rows;
      d.test_problems.push_back(p);
    }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K}) d.bench_problems.push_back(qmm(1, 4096, 4096, f));
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0, QFormat::Q4_K, QFormat::Q6_K}) {
    Problem r16 = qmm(1, 4096, 4096, f);
    r16.attrs["layout"] = kR16Rows;
    d.bench_problems.push_back(r16);
  }
  register_op(std::move(d));
}

}  // namespace

void register_quant_ops() {
  register_dequantize();
  register_quantize();
  register_qmatmul();
}

}  // namespace kgen::ops
