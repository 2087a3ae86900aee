// Dequantize and quantize kernels of the quantized-weight family.
#include <algorithm>
#include <string>

#include "ops/quant_kernels.h"
#include "ops/quant_lines.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

namespace {
int log2i(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}
}  // namespace

uint32_t dequant_grid_x(uint64_t groups) { return uint32_t(std::min<uint64_t>(std::max<uint64_t>(groups, 1), 32768)); }

ir::Kernel dequantize_kernel(QFormat fmt, bool words) {
  const FormatInfo& fi = info(fmt);
  std::string name = std::string("quant_dequant_") + fi.name + (words ? "_w32" : "_u8");
  return kernel(name, [&](KernelBuilder& kb) {
    auto w = kb.input("w", words ? u32 : u8);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(64);
    // Grids are limited to 65535 groups per axis on GPUs: number groups
    // over (x, y).
    Value g = (group_id(1) * num_groups(0) + group_id(0)) * 64u + local_id(0);
    PackedBytes pb{w, words, false};
    if_(g < n, [&] {
      Value b = g >> uint32_t(log2i(fi.block_elems));
      Value e = g & uint32_t(fi.block_elems - 1);
      y[g] = dequant_element(fmt, pb, b * uint32_t(fi.block_bytes), e);
    });
  });
}

ir::Kernel dequantize_lines_kernel(QFormat fmt, int blocks_per_item) {
  const FormatInfo& fi = info(fmt);
  const uint32_t BPI = uint32_t(blocks_per_item), L = uint32_t(fi.block_elems / 16);
  std::string name = std::string("quant_dequant_lines_") + fi.name + "_b" + std::to_string(BPI);
  return kernel(name, [&](KernelBuilder& kb) {
    auto w = kb.input("w", u8);
    auto y = kb.output("y", line(f32, 16));
    auto nb = kb.scalar("nblocks", u32);
    kb.workgroup(1);
    PackedBytes pb{w, false, true};
    BlockLines dec(fmt, pb);
    Value b0 = group_id(0) * BPI;
    for_range(b0, min(b0 + BPI, nb), [&](Value b) {
      dec.load(b * uint32_t(fi.block_bytes));
      for (uint32_t gi = 0; gi < L; ++gi) y[b * L + gi] = dec.line(int(gi));
    });
  });
}

namespace {

// round() of C: halfway cases away from zero (the IR's round is to even).
Value round_away(const Value& v) {
  Value t = trunc(v);
  return select(abs(v - t) >= 0.5f, t + select(v < 0.0f, -1.0f, 1.0f), t);
}

// The bytes (u32 values) of one block quantized from xs (32 f32 values).
std::vector<Value> quantize_block(QFormat fmt, const std::vector<Value>& xs) {
  std::vector<Value> bytes;
  auto put_half = [&](const Value& d) {
    Value h = f32_to_half_bits(d);
    bytes.push_back(h & 0xFFu);
    bytes.push_back(h >> 8u);
  };
  if (fmt == QFormat::Q8_0) {
    Value amax = abs(xs[0]);
    for (int j = 1; j < 32; ++j) amax = max(amax, abs(xs[j]));
    Value d = amax / 127.0f;
    Value id = select(d != 0.0f, 1.0f / d, 0.0f);
    put_half(d);
    for (int j = 0; j < 32; ++j) bytes.push_back(bitcast(u32, cast(i32, round_away(xs[j] * id))) & 0xFFu);
  } else {  // Q4_0: d from the first element of largest magnitude, with its sign
    Value amax = constant(f32, 0.0f), mx = constant(f32, 0.0f);
    for (int j = 0; j < 32; ++j) {
      Value a = abs(xs[j]);
      Value gt = amax < a;
      amax = select(gt, a, amax);
      mx = select(gt, xs[j], mx);
    }
    Value d = mx / -8.0f;
    Value id = select(d != 0.0f, 1.0f / d, 0.0f);
    put_half(d);
    for (int j = 0; j < 16; ++j) {
      Value q0 = min(cast(i32, xs[j] * id + 8.5f), 15);
      Value q1 = min(cast(i32, xs[j + 16] * id + 8.5f), 15);
      bytes.push_back(bitcast(u32, q0 | (q1 << 4)));
    }
  }
  return bytes;
}

}  // namespace

ir::Kernel quantize_kernel(QFormat fmt) {
  if (fmt != QFormat::Q8_0 && fmt != QFormat::Q4_0) throw std::invalid_argument("quantize: only q8_0 and q4_0");
  const FormatInfo& fi = info(fmt);
  const uint32_t BB = uint32_t(fi.block_bytes), PW = 2 * BB / 4, HW = (BB + 3) / 4;
  return kernel(std::string("quant_quantize_") + fi.name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto q = kb.output("q", u32);
    auto nb = kb.scalar("nblocks", u32);
    kb.workgroup(64);
    Value p = (group_id(1) * num_groups(0) + group_id(0)) * 64u + local_id(0);  // pair of blocks
    if_(p * 2u < nb, [&] {
      Value second = p * 2u + 1u < nb;
      std::vector<Value> bytes;
      for (uint32_t blk = 0; blk < 2; ++blk) {
        Value src = min(p * 2u + blk, nb - 1u) * 32u;  // a missing second block re-reads the first
        std::vector<Value> xs;
        for (uint32_t j = 0; j < 32; ++j) xs.push_back(x[src + j]);
        for (Value b : quantize_block(fmt, xs)) bytes.push_back(blk ? select(second, b, 0u) : b);
      }
      auto word = [&](uint32_t i) {
        return bytes[4 * i] | (bytes[4 * i + 1] << 8u) | (bytes[4 * i + 2] << 16u) | (bytes[4 * i + 3] << 24u);
      };
      for (uint32_t i = 0; i < HW; ++i) q[p * PW + i] = word(i);
      if_(second, [&] {
        for (uint32_t i = HW; i < PW; ++i) q[p * PW + i] = word(i);
      });
    });
  });
}

}  // namespace kgen::ops::quant
