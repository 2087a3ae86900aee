// Dequantize and quantize kernels of the quantized-weight family.
#include <algorithm>
#include <array>
#include <string>

#include "ops/quant/kernels.h"
#include "ops/quant/lines.h"
#include "ops/common/wrapped_group.h"

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
    Value g = wrapped_group_id() * 64u + local_id(0);
    PackedBytes pb{w, words, false};
    if_(g < n, [&] {
      Value b = g >> uint32_t(log2i(fi.block_elems));
      Value e = g & uint32_t(fi.block_elems - 1);
      y[g] = dequant_element(fmt, pb, b * uint32_t(fi.block_bytes), e);
    });
  });
}

ir::Kernel dequantize_lines_kernel(QFormat fmt, int blocks_per_item, bool stream) {
  const FormatInfo& fi = info(fmt);
  const uint32_t BPI = uint32_t(blocks_per_item), L = uint32_t(fi.block_elems / 16);
  std::string name = std::string("quant_dequant_lines_") + fi.name + "_b" + std::to_string(BPI) + (stream ? "_nt" : "");
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
      for (uint32_t gi = 0; gi < L; ++gi) {
        if (stream) y[b * L + gi].stream(dec.line(int(gi)));
        else y[b * L + gi] = dec.line(int(gi));
      }
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
    Value p = wrapped_group_id() * 64u + local_id(0);  // pair of blocks
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

namespace {

// f32 lanes holding integers with |v| <= 2^22 to i32: adding 1.5·2^23 puts
// the integer in the low mantissa bits (exact). A float->int cast saturates
// and lowers to a per-lane loop.
Value small_int_lanes(const Value& v) {
  return bitcast(line(i32, 16), v + 12582912.0f) - 0x4b400000;
}

}  // namespace

ir::Kernel quantize_lines_kernel(QFormat fmt, int blocks_per_item, int chunk) {
  if (fmt != QFormat::Q8_0 && fmt != QFormat::Q4_0) throw std::invalid_argument("quantize: only q8_0 and q4_0");
  if ((chunk != 8 && chunk != 16) || blocks_per_item % chunk)
    throw std::invalid_argument("quantize lines: chunks of 8 or 16 blocks, blocks per item a multiple of the chunk");
  const FormatInfo& fi = info(fmt);
  const uint32_t CH = uint32_t(chunk), C = uint32_t(blocks_per_item / chunk), PX = 128 / CH;
  const uint64_t BB = uint64_t(fi.block_bytes);
  std::string name = std::string("quant_quantize_lines_") + fi.name + "_b" + std::to_string(blocks_per_item) + "_c" + std::to_string(chunk);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    auto q = kb.output("q", u8);
    auto nb = kb.scalar("nblocks", u32);
    kb.workgroup(1);
    // Chunks of CH blocks: the per-block scales are computed as CH-lane lines
    // (lane i = block i: one tree for the chunk's maxima, one division for
    // its scales). Blocks are addressed from one base (c·CH + i), so their
    // addresses are displacements of it, where an offset per block took a
    // register each (clang spilled them). The last chunk, if partial, clamps
    // its indices instead: blocks past the end repeat the last one, rewriting
    // its bytes with the same values.
    auto chunk_body = [&](const Value& c, bool clamp) {
      std::vector<Value> xi, off, m, keys;  // x line index and q byte offset of block i
      // 64-bit indices: u32 sums may wrap (-fwrapv), so clang could not fold
      // them into displacements from one base.
      Value x0 = cast(u64, c) * uint64_t(CH * 2), o0 = cast(u64, c) * (uint64_t(CH) * BB);
      for (uint32_t i = 0; i < CH; ++i) {
        Value b = clamp ? min(c * CH + i, nb - 1u) : Value{};
        xi.push_back(clamp ? cast(u64, b) * uint64_t(2) : x0 + uint64_t(2 * i));
        off.push_back(clamp ? cast(u64, b) * BB : o0 + uint64_t(i) * BB);
      }
      // x[block i], half hf, and its |x| as integers: non-negative floats
      // order as their bits, and an integer max is one instruction (a float
      // max also orders NaNs; inputs with NaNs quantize to garbage either way).
      auto xv = [&](int i, uint32_t hf) { return x[xi[size_t(i)] + uint64_t(hf)]; };
      auto bits = [&](const Value& v) { return bitcast(line(i32, 16), abs(v)); };
      // Prefetch: x 8 KiB ahead and q two chunks ahead (for the stores). A
      // chunk's loads all come first and its stores wait on all of them, so
      // out-of-order execution cannot reach the next chunk's loads, and the
      // hardware prefetchers did not run far enough ahead: DRAM latency per
      // chunk, 2-3x slower.
      for (uint32_t l = 0; l < 2 * CH; ++l) x[x0 + uint64_t(2 * CH * PX + l)].prefetch();
      Value ahead = o0 + uint64_t(2 * CH) * BB;
      for (uint64_t o = 0; o < CH * BB + 63; o += 64) q[ahead + o].prefetch();
      Value d;
      if (fmt == QFormat::Q8_0) {
        for (int i = 0; i < int(CH); ++i) m.push_back(max(bits(xv(i, 0)), bits(xv(i, 1))));
        d = bitcast(line(f32, int(CH)), tree_max_lanes(m)) / 127.0f;
      } else {
        // GGML takes the first element of largest magnitude, with its sign.
        // The maxima of x's bits as signed integers (the largest x >= 0,
        // negative if there is none) and as unsigned ones (with the sign bit
        // set, the negative x of largest magnitude) give both magnitudes;
        // the sign is the larger one's. Only where they are equal (and not
        // zero) does the order decide: then the smallest key 2·index + sign
        // bit among the lanes equal to amax, for the whole chunk.
        const int L = int(CH);
        std::vector<Value> sm, um;
        for (int i = 0; i < L; ++i) {
          Value r0 = bitcast(line(i32, 16), xv(i, 0)), r1 = bitcast(line(i32, 16), xv(i, 1));
          sm.push_back(max(r0, r1));
          um.push_back(max(bitcast(line(u32, 16), r0), bitcast(line(u32, 16), r1)));
        }
        Value P = tree_max_lanes(sm), U = tree_max_lanes(um);
        Value minus1 = splat(constant(i32, -1), L), one = splat(constant(i32, 1), L), zero = splat(constant(i32, 0), L);
        Value pmag = select(P >= 0, P, minus1);
        Value nmag = select((U >> 31u) != 0u, bitcast(line(i32, L), U & 0x7fffffffu), minus1);
        Value amax_bits = max(pmag, nmag);
        Value tie = (pmag == nmag) & (amax_bits > 0);
        Var negative = var(select(nmag > pmag, one, zero));
        if_(tree_max(select(tie, one, zero)) != 0, [&] {
          Value none = splat(constant(i32, 64), 16);
          for (int i = 0; i < L; ++i) {
            Value am = splat(extract(amax_bits, i), 16), k[2];
            for (uint32_t hf = 0; hf < 2; ++hf) {
              Value v = xv(i, hf);
              Value sign = bitcast(line(i32, 16), bitcast(line(u32, 16), v) >> 31u);
              k[hf] = select(bits(v) == am, (lane_index(16) + 16 * int(hf)) * 2 + sign, none);
            }
            keys.push_back(min(k[0], k[1]));
          }
          negative = select(tie, tree_min_lanes(keys) & 1, negative.get());
        });
        // An all-zero block keeps GGML's +0 (d = -0), whatever its signs.
        Value amax = bitcast(line(f32, L), amax_bits);
        d = select((negative.get() != 0) & (amax != 0.0f), -amax, amax) / -8.0f;
      }
      Value id = select(d != 0.0f, 1.0f / d, splat(constant(f32, 0.0f), int(CH)));
      Value dh = bitcast(line(u16, int(CH)), cast(line(f16, int(CH)), d));  // round to nearest even, as GGML
      for (int i = 0; i < int(CH); ++i) {
        Value h = extract(dh, i), idi = splat(extract(id, i), 16);
        q[off[size_t(i)]] = cast(u8, h);
        q[off[size_t(i)] + uint64_t(1)] = cast(u8, h >> 8);
        if (fmt == QFormat::Q8_0) {
          for (uint32_t hf = 0; hf < 2; ++hf) {
            // roundf: halfway cases away from zero (|x·id| <= 127)
            Value s = xv(i, hf) * idi, t = trunc(s);
            Value sgn = select(s < 0.0f, splat(constant(f32, -1.0f), 16), splat(constant(f32, 1.0f), 16));
            Value r = select(abs(s - t) >= 0.5f, t + sgn, t);
            store_line(q, off[size_t(i)] + uint64_t(2 + 16 * hf), bitcast(line(u8, 16), cast(line(i8, 16), small_int_lanes(r))));
          }
        } else {
          // (int8_t)(x·id + 8.5f) truncates a positive value, capped at 15
          Value n[2];
          for (uint32_t hf = 0; hf < 2; ++hf) n[hf] = min(small_int_lanes(trunc(xv(i, hf) * idi + 8.5f)), 15);
          store_line(q, off[size_t(i)] + uint64_t(2), bitcast(line(u8, 16), cast(line(i8, 16), n[0] | (n[1] << 4))));
        }
      }
    };
    Value c0 = group_id(0) * C, chunks = (nb + (CH - 1)) / CH;
    for_range(c0, min(c0 + C, chunks), [&](Value c) {
      if_((c + 1u) * CH <= nb, [&] { chunk_body(c, false); }).else_([&] { chunk_body(c, true); });
      // The packed tensor is padded to whole u32 words (as quantize_kernel
      // writes it): zeros after an odd count of 34- or 18-byte blocks.
      if_((c + 1u) * CH >= nb && (nb & 1u) != 0u, [&] {
        Value end = cast(u64, nb) * BB;
        q[end] = constant(u8, 0);
        q[end + uint64_t(1)] = constant(u8, 0);
      });
    });
  });
}

}  // namespace kgen::ops::quant
