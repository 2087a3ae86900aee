// OpDefs of the quantized-weight family (ops/quant/quant.h): dequantize, quantize,
// qmatmul.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "ops/matmul/plan.h"
#include "ops/core/op.h"
#include "ops/quant/quant.h"
#include "ops/quant/kernels.h"
#include "ops/quant/problem.h"
#include "ops/quant/strategy.h"

namespace kgen::ops {

using namespace quant;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }

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
  d.heuristic = dequantize_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {0, 1}, "0: one element per work-item (any target), 1: whole blocks as f32 lines (CPU)"),
      key_set("words", "word_reads", {0, 1}, "impl=0: read the packed bytes as u32 words (GPUs: WGSL has no 8-bit storage)"),
      key_range("bpi", "blocks_per_item", 1, 65536, "impl=1: blocks decoded per work-item"),
      key_set("nt", "streaming_stores", {0, 1}, "impl=1: write the f32 output with nontemporal stores"),
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
  d.heuristic = quantize_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {0, 1}, "0: two blocks per work-item, scalar code (any target), 1: f32 lines (CPU)"),
      key_range("bpi", "blocks_per_item", 8, 65536, "impl=1: blocks quantized per work-item, a multiple of ch"),
      key_set("ch", "chunk_blocks", {8, 16}, "impl=1: blocks whose scales are computed as one line"),
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
  }
  c.push_back(tiled_variant(s, caps));
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
  } else {
    for (int wg : {64, 128, 256})
      if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
        c.push_back(Variant{}.set("impl", kGemvAny).set("wg", wg));
    if (gpu_block_gemv(s))
      for (int wg : {32, 64, 128}) c.push_back(Variant{}.set("impl", kGemvBlocks).set("wg", wg));
  }
  c.push_back(tiled_variant(s, caps));
  return c;
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
        // X per super-block of 256 (ops/quant/x8k.cpp): Q2_K to Q5_K.
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

// impl and the keys of its forms; impl=2 takes the matmul family's CPU tile
// (ops/matmul/plan.h: tile_of) or GPU tile (gpu_tile_of) keys.
std::vector<VariantKey> qmatmul_variant_keys() {
  return {
      key_set("impl", "implementation", {kGemvCpu, kGemvAny, kTiled, kGemvX8, kGemvR16, kGemmRowsR16, kGemvBlocks, kTileBf16},
              "0 CPU f32 GEMV, 1 any-target GEMV, 2 dequantize + GEMM, 3 int8 GEMV, 4 layout=16 GEMV, "
              "5 int8 GEMM packing rows by 16, 6 GPU GEMV per block, 7 bf16 matrix tiles"),
      key_range("rows", "weight_rows", 1, 16, "impl=0|3: rows of W (outputs) per work-item"),
      key_range("mb", "x_rows", 1, 8, "impl=0|3|4|5: rows of X per work-item (or per block of X)"),
      key_range("pf", "prefetch_ahead", 0, 64, "impl=3: workgroups ahead to prefetch (0..16); impl=4: tiles ahead (0..64)"),
      key_set("pl1", "prefetch_into_l1", {0, 1}, "impl=3|4: the prefetches go into L1, not L2 only"),
      key_set("seq", "rows_in_sequence", {0, 1}, "impl=3: walk the rows of W one after another, not in lockstep"),
      key_set("sgn", "signed_codes", {0, 1}, "impl=3, Q8_0: signed weight codes (no sign flip and offset)"),
      key_set("p2", "block_pairs", {0, 1}, "impl=3: two 32-element blocks per 16-lane line"),
      key_set("p4", "block_quads", {0, 1}, "impl=3: four blocks regrouped by byte permutes"),
      key_set("rp", "row_pairs", {0, 1}, "impl=3, Q4_0: two rows' codes per line (AVX2 without VNNI)"),
      key_set("w16", "wide_units", {0, 1}, "impl=3, K-quants: 16-lane units"),
      key_set("xk", "x_per_superblock", {0, 1}, "impl=3, K-quants: X quantized per super-block of 256"),
      key_range("groups", "row_groups", 1, 8, "impl=4: groups of 16 rows of W per work-item"),
      key_range("wg", "workgroup", 1, 1024, "impl=1|6: work-items per output (a power of two); impl=2 GPU: the tile's"),
      key_range("mc", "row_panels", 1, 65536, "impl=7: blocks of 32 rows of W per work-item; impl=2 CPU: row panels per block"),
      key_range("nc", "column_panels", 1, 65536, "impl=7: 32-row panels of X per work-item; impl=2 CPU: column panels per block"),
      key_range("kc", "k_slice", 0, 65536, "impl=7: K per slice (32..4096); impl=2 CPU: K per pass (0: all of K)"),
      key_range("mr", "register_rows", 1, 64, "impl=2 CPU: rows of A per microkernel"),
      key_range("nl", "register_lines", 1, 16, "impl=2 CPU: f32x16 lines of B per microkernel"),
      key_set("ak", "a_layout", {0, 1, 2, 16}, "impl=2 CPU: packed A's layout"),
      key_range("ks", "k_split", 1, 16, "impl=2: K split across workgroups"),
      key_set("gm", "m_blocks_fastest", {0, 1}, "impl=2 CPU: grid order, M blocks fastest"),
      key_range("bpf", "b_prefetch", 0, 16, "impl=2 CPU: prefetch of the next B panel"),
      key_range("apf", "a_prefetch", 0, 16, "impl=2 CPU: prefetch of the next A panel"),
      key_set("pb", "pack_b_inside", {0, 1}, "impl=2 CPU: pack B panels inside the macro-kernel"),
      key_set("bf2", "bf16_pairs", {0, 1}, "impl=2 CPU: bf16 pairs per step"),
      key_range("tm", "thread_rows", 1, 16, "impl=2 GPU: rows per work-item"),
      key_range("tn", "thread_cols", 1, 16, "impl=2 GPU: columns per work-item"),
      key_range("tk", "tile_depth", 1, 64, "impl=2 GPU: K per shared-memory tile"),
      key_set("vec", "line_tiles", {0, 1, 2, 3}, "impl=2 GPU: f32x4 line tiles (2: next tile in registers, 3: double-buffered)"),
      key_set("sw", "swapped", {0, 1}, "impl=2 GPU: the swapped product"),
  };
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
                 ", layout=0|16 (16: Q4_0/Q8_0/Q4_K/Q6_K W repacked with rows interleaved by 16, ops/quant/formats.h)";
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
  d.heuristic = qmatmul_heuristic;
  d.variant_keys = qmatmul_variant_keys();
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
