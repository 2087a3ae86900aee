// The int8-activation GEMV (GGML's vec_dot with Q8 activations): X is
// quantized once per call to signed bytes in blocks of 32 (one f32 scale per
// block), then each weight group of 16 is a byte dot product with dot4
// (vpdpbusd on AVX512-VNNI: 64 multiply-adds per instruction) instead of
// byte -> f32 conversions and f32 FMAs. That removes the decode cost which
// kept the f32 GEMV (ops/quant/matmul.cpp) below memory bandwidth.
//
// dot4 needs one operand unsigned: weights are used as unsigned codes u with
// w = scale·(u - o) (+ a per-unit min), o the format's offset (Q4_0 8, Q8_0
// 128 by flipping the sign bit, Q6_K 32). Σ (u - o)·q = Σ u·q - o·Σq, and Σq
// per 16 activations comes with X's quantization, so the offset costs one
// integer accumulator start value per unit. The exact result for the
// quantized X is then Σ_units scale·dx·isum (f32 lanes) + min·dx·Σq (scalar).
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "ops/quant/int8_lines.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

bool has_int8_gemv(QFormat f) {
  switch (f) {
    case QFormat::Q4_0: case QFormat::Q4_1: case QFormat::Q5_0: case QFormat::Q5_1: case QFormat::Q8_0:
    case QFormat::Q4_K: case QFormat::Q5_K: case QFormat::Q6_K: return true;
    default: return false;
  }
}

bool has_wide_int8_gemv(QFormat f) {
  return f == QFormat::Q2_K || f == QFormat::Q3_K || f == QFormat::Q4_K || f == QFormat::Q5_K || f == QFormat::Q6_K;
}

ir::Kernel quantize_x8_kernel(int blocks_per_item) {
  const uint32_t BPI = uint32_t(blocks_per_item);
  return kernel("quant_x8_b" + std::to_string(BPI), [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    auto xq = kb.output("xq", line(i32, 4));
    auto xd = kb.output("xd", f32);
    auto xs = kb.output("xs", i32);
    auto nb = kb.scalar("nblocks", u32);
    kb.workgroup(1);
    Value b0 = group_id(0) * BPI;
    for_range(b0, min(b0 + BPI, nb), [&](Value b) {
      Value v[2] = {x[b * 2u], x[b * 2u + 1u]};
      // amax as a tree: a float reduce_max is an ordered chain of 31
      // NaN-aware scalar maxes. Same value: max is exact, and the operands
      // are |x| (no signed zeros).
      Value m = tree_max(max(abs(v[0]), abs(v[1])));
      Value d = m / 127.0f;
      Value id = splat(select(d != 0.0f, 1.0f / d, 0.0f), 16);
      xd[b] = d;
      for (uint32_t h = 0; h < 2; ++h) {
        // round-to-even(x·id) by adding 1.5·2^23 (|x·id| <= 127: the integer
        // lands in the low mantissa bits): the same rounding as round() and
        // no saturating float->int conversion, which lowers to a per-lane loop.
        Value t = v[h] * id + 12582912.0f;
        Value q = bitcast(line(i32, 16), t) - 0x4b400000;
        xq[b * 2u + h] = bitcast(line(i32, 4), cast(line(i8, 16), q));
        xs[b * 2u + h] = reduce_add(q);
      }
    });
  });
}

namespace {

Value f(const Value& v) { return cast(f32, v); }

// Byte offsets within a 32-element block: its quant bytes (after d, m and
// qh: Q4_0/Q8_0 2, Q4_1 4, Q5_0 6, Q5_1 8) and Q5's qh word.
uint32_t qs_offset(QFormat f) {
  return f == QFormat::Q4_1 ? 4 : f == QFormat::Q5_0 ? 6 : f == QFormat::Q5_1 ? 8 : 2;
}
uint32_t qh_offset(QFormat f) { return f == QFormat::Q5_0 ? 2 : 4; }

// One format's blocks as unsigned byte codes: `units` runs of `groups`
// groups of 16 elements share a scale (and a min); see the file comment.
class BlockCodes {
 public:
  // signed_q8: Q8_0's bytes as signed codes (offset 0), for the sign-trick
  // dot4 (see qgemv_x8_kernel).
  BlockCodes(QFormat fmt, const PackedBytes& w, bool signed_q8 = false) : f_(fmt), w_(w), signed_(signed_q8) {}
  int groups_per_unit() const { return f_ == QFormat::Q6_K ? 1 : 2; }
  int units() const { return info(f_).block_elems / 16 / groups_per_unit(); }
  uint32_t offset() const {
    switch (f_) {
      case QFormat::Q4_0: return 8;
      case QFormat::Q5_0: return 16;
      case QFormat::Q8_0: return signed_ ? 0 : 128;
      case QFormat::Q6_K: return 32;
      default: return 0;
    }
  }
  bool has_min() const {
    return f_ == QFormat::Q4_1 || f_ == QFormat::Q5_1 || f_ == QFormat::Q4_K || f_ == QFormat::Q5_K;
  }

  // Reads the block's scales (scalar f32): scale_[u], min_[u] with
  // w = scale·(code - o) + min per element of unit u. `base` is a u64 byte
  // offset: constant displacements fold into the addressing, adjacent byte
  // loads merge, and each row's offset is one pointer increment per block
  // (u32 offsets could wrap under -fwrapv, so clang would recompute them).
  void load(const Value& base) {
    base_ = base;
    scale_.clear();
    min_.clear();
    switch (f_) {
      case QFormat::Q4_0: case QFormat::Q8_0: scale_ = {w_.half(base)}; break;
      case QFormat::Q4_1: scale_ = {w_.half(base)}; min_ = {w_.half(base + 2u)}; break;
      case QFormat::Q5_0: scale_ = {w_.half(base)}; qh_ = w_.u32le(base + qh_offset(f_)); break;
      case QFormat::Q5_1: scale_ = {w_.half(base)}; min_ = {w_.half(base + 2u)}; qh_ = w_.u32le(base + qh_offset(f_)); break;
      case QFormat::Q4_K: case QFormat::Q5_K: {
        // The 8 6-bit scales and mins (scale_min_k4) unpacked a word at a
        // time (GGML's utmp trick), then widened as f32x8 lines.
        Value d = w_.half(base), dmin = w_.half(base + 2u);
        Value w0 = w_.u32le(base + 4u), w1 = w_.u32le(base + 8u), w2 = w_.u32le(base + 12u);
        Value sc_lo = w0 & 0x3f3f3f3fu, m_lo = w1 & 0x3f3f3f3fu;
        Value sc_hi = (w2 & 0x0f0f0f0fu) | (((w0 >> 6u) & 0x03030303u) << 4u);
        Value m_hi = ((w2 >> 4u) & 0x0f0f0f0fu) | (((w1 >> 6u) & 0x03030303u) << 4u);
        auto widen = [](const Value& lo, const Value& hi) {
          return cast(line(f32, 8), bitcast(line(u8, 8), make_line(lo, hi)));
        };
        scale8_ = widen(sc_lo, sc_hi) * splat(d, 8);
        min8_ = widen(m_lo, m_hi) * splat(-dmin, 8);
        break;
      }
      case QFormat::Q6_K: {
        // The 16 int8 scales widened as one line: d·sc exact in f32 (f16 × 8 bits).
        Value sc = cast(line(f32, 16), bitcast(line(i8, 16), w_.line16(base + 192u)));
        scale8_ = sc * splat(w_.half(base + 208u), 16);
        break;
      }
      default: break;
    }
  }
  Value scale(int u) const {
    if (scale8_.valid()) return extract(scale8_, u);
    return scale_[size_t(scale_.size() == 1 ? 0 : u)];
  }
  // scale(u) as a line: one f16 broadcast and a line conversion where the
  // block has a single f16 scale (no scalar convert, move and broadcast).
  Value scale_line(int u, int lanes) const {
    if (f_ == QFormat::Q4_0 || f_ == QFormat::Q8_0 || f_ == QFormat::Q4_1 || f_ == QFormat::Q5_0 || f_ == QFormat::Q5_1)
      return w_.half_splat(base_, lanes);
    return splat(scale(u), lanes);
  }
  // Q4_K/Q5_K: the 8 sub-blocks' -dmin·m as one f32x8 line (else scalar min_of).
  bool min_line() const { return f_ == QFormat::Q4_K || f_ == QFormat::Q5_K; }
  Value min8() const { return min8_; }
  Value min_of(int u) const { return min_[size_t(min_.size() == 1 ? 0 : u)]; }

  // Unsigned codes of elements 16g .. 16g+15 of the loaded block, as u32x4
  // (signed Q8_0: the bytes as they are, as i32x4).
  Value codes(int g) const {
    const uint32_t G = uint32_t(g);
    switch (f_) {
      case QFormat::Q4_0: case QFormat::Q4_1: {
        Value q = w_.line16(base_ + qs_offset(f_));
        return u32x4(g == 0 ? (q & 15u) : (q >> 4u));
      }
      case QFormat::Q5_0: case QFormat::Q5_1: {
        Value q = w_.line16(base_ + qs_offset(f_));
        return u32x4((g == 0 ? (q & 15u) : (q >> 4u)) | q5_high_bits(qh_, G));
      }
      case QFormat::Q8_0:
        if (signed_) return bitcast(line(i32, 4), w_.line16(base_ + qs_offset(f_) + 16u * G));
        return u32x4(w_.line16(base_ + qs_offset(f_) + 16u * G)) ^ 0x80808080u;
      case QFormat::Q4_K: case QFormat::Q5_K: {
        bool five = f_ == QFormat::Q5_K;
        uint32_t sb = G / 2, c = sb / 2, hi = sb & 1, half = G & 1;
        Value q = w_.line16(base_ + (five ? 48u : 16u) + c * 32u + half * 16u);
        Value nib = hi ? (q >> 4u) : (q & 15u);
        if (five) nib = nib | (((w_.line16(base_ + 16u + half * 16u) >> sb) & 1u) << 4u);
        return u32x4(nib);
      }
      case QFormat::Q6_K: {
        uint32_t h = G / 8, t = (G % 8) / 2, half = G & 1;
        Value ql = w_.line16(base_ + h * 64u + (t & 1) * 32u + half * 16u);
        Value lo = t >= 2 ? (ql >> 4u) : (ql & 15u);
        Value hb = (w_.line16(base_ + 128u + h * 32u + half * 16u) >> (2 * t)) & 3u;
        return u32x4(lo | (hb << 4u));
      }
      default: break;
    }
    throw std::invalid_argument("BlockCodes: no int8 decoder");
  }
  // Both groups of a unit (g0 even) as one u32x8 line; the caller checks
  // wide(). Q4_0/Q4_1 hold element i and i + 16 in one byte's two nibbles:
  // the 16 bytes fill both halves of the line (vbroadcasti128) and a
  // per-half shift picks the nibble, one mask for both.
  Value codes8(int g0) const {
    if (f_ == QFormat::Q4_0 || f_ == QFormat::Q4_1) {
      Value q = u32x4(w_.line16(base_ + qs_offset(f_)));
      Value zero = constant(u32, 0), four = constant(u32, 4);
      return (cat4(q, q) >> make_line({zero, zero, zero, zero, four, four, four, four})) & 0x0f0f0f0fu;
    }
    return cat4(codes(g0), codes(g0 + 1));
  }
  // Q6_K: codes of groups g0, g0 + 1 (g0 even) as one u32x8 line: the two
  // groups' low and high bits are 32 adjacent bytes each. Word shifts with
  // the byte mask applied last, so ir::byte_bound sees codes < 64 (the
  // saturating pair multiply is exact).
  Value q6_codes8(int g0) const {
    const uint32_t G = uint32_t(g0), h = G / 8, t = (G % 8) / 2;
    auto bytes32 = [&](const Value& off) { return cat4(u32x4(w_.line16(off)), u32x4(w_.line16(off + 16u))); };
    Value ql = bytes32(base_ + h * 64u + (t & 1) * 32u);
    Value lo = t >= 2 ? ((ql >> 4u) & 0x0f0f0f0fu) : (ql & 0x0f0f0f0fu);
    Value qh = bytes32(base_ + 128u + h * 32u);
    // bits 2t, 2t+1 of each byte to bits 4, 5
    Value hs = t == 2 ? qh : t < 2 ? (qh << uint32_t(4 - 2 * t)) : (qh >> 2u);
    return lo | (hs & 0x30303030u);
  }
  // The block's unit scales as one line: Q6_K's 16 (d·sc), Q4_K/Q5_K's 8.
  Value scale16() const { return scale8_; }

  // The group of Q6_K's scale i (its 16 scales are not in element order).
  int unit_of_group(int g) const {
    if (f_ != QFormat::Q6_K) return g / 2;
    int h = g / 8, t = (g % 8) / 2, half = g & 1;
    return h * 8 + half + 2 * t;
  }

 private:
  QFormat f_;
  PackedBytes w_;
  bool signed_ = false;
  Value base_, qh_;
  std::vector<Value> scale_, min_;
  Value scale8_, min8_;
};

}  // namespace

void prefetch_ahead(const ElemRef& at, bool into_l1) {
  if (into_l1) at.prefetch();
  else at.prefetch_l2();
}
std::string prefetch_suffix(int prefetch, bool into_l1) {
  return prefetch ? "_pf" + std::to_string(prefetch) + (into_l1 ? "_l1" : "") : "";
}

// The line helpers shared with ops/quant/x8k.cpp (ops/quant/int8_lines.h).
void for_row_steps(const Array& w, const Value& pf_base, bool prefetch, bool into_l1, uint32_t rows, bool seq_rows, const Value& steps,
                   uint32_t step_bytes, const std::function<void(Value, uint32_t, uint32_t)>& body, int unroll) {
  const uint32_t L = seq_rows ? 1 : rows;
  for (uint32_t g = 0; g < rows / L; ++g)
    for_range(0u, steps, [&](Value s) {
      if (prefetch) {
        const uint32_t slice = L * step_bytes;
        Value at = pf_base + cast(u64, g ? s + steps * g : s) * uint64_t(slice);
        for (uint32_t off = 0; off < slice + 63u; off += 64u) prefetch_ahead(w[at + uint64_t(off)], into_l1);
      }
      body(s, g * L, g * L + L);
    }, 1u, unroll);
}
Value u32x4(const Value& bytes) { return bitcast(line(u32, 4), bytes); }
Value cat4(const Value& a, const Value& b) {
  return make_line({extract(a, 0), extract(a, 1), extract(a, 2), extract(a, 3), extract(b, 0), extract(b, 1), extract(b, 2),
                    extract(b, 3)});
}
Value halves(const Value& lo, const Value& hi) {
  std::vector<Value> v(8, lo);
  v.insert(v.end(), 8, hi);
  return make_line(v);
}
Value quarters(const std::vector<Value>& v) {
  std::vector<Value> l;
  for (const Value& x : v) l.insert(l.end(), 4, x);
  return make_line(l);
}
Value u32_words(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return make_line({constant(u32, a), constant(u32, b), constant(u32, c), constant(u32, d)});
}
Value bytes64(const PackedBytes& w, const Value& at, uint32_t distinct) {
  std::vector<Value> words;
  for (uint32_t part = 0; part < 4; ++part) {
    Value q = u32x4(w.line16(at + uint64_t(16u * (part % distinct))));
    for (int k = 0; k < 4; ++k) words.push_back(extract(q, k));
  }
  return make_line(words);
}
Value byte_index(const std::vector<uint32_t>& bytes) {
  std::vector<Value> w;
  for (size_t i = 0; i < bytes.size(); i += 4)
    w.push_back(constant(u32, bytes[i] | bytes[i + 1] << 8 | bytes[i + 2] << 16 | bytes[i + 3] << 24));
  return make_line(w);
}

// Q3_K's 16 scales: group g < 8 the low nibble of byte g, else the high
// nibble of byte g - 8; top bits (byte 8 + g % 4 >> 2·(g / 4)) & 3. Two
// 16-byte permutes, a per-word shift and a mask each. The 16 bytes loaded
// end with the block (its f16 d): from the 12 scale bytes on, the last
// block of a buffer would be read 2 bytes past its end.
Value q3k_scale_codes(const PackedBytes& w, const Value& base) {
  Value s = u32x4(w.line16(base + 94u));  // scale byte i at byte i + 2
  Value lo = permute_bytes(s, s, u32_words(0x05040302u, 0x09080706u, 0x05040302u, 0x09080706u));
  lo = (lo >> u32_words(0, 0, 4, 4)) & 0x0f0f0f0fu;
  Value hi = permute_bytes(s, s, u32_words(0x0d0c0b0au, 0x0d0c0b0au, 0x0d0c0b0au, 0x0d0c0b0au));
  hi = ((hi >> u32_words(0, 2, 4, 6)) & 0x03030303u) << 4u;
  return bitcast(line(u8, 16), lo | hi);
}

namespace {

// Block pairs of the 32-element nibble formats (see qgemv_x8_kernel's
// `pairs`): the low 4 bits of the codes of blocks b and b + 1 (b's at
// `base`, each block's 16 quant bytes at `qs`) as one u32x16 line, lanes 0-7
// block b. Each block's 16 bytes go in twice: the low nibbles are elements
// 0-15, the high ones 16-31 (one shift per half, one mask for all), so lane
// L of a block holds elements 4L .. 4L + 3.
Value pair_codes(const PackedBytes& w, const Value& base, uint32_t block_bytes, uint32_t qs) {
  std::vector<Value> words, shifts;
  for (uint32_t blk = 0; blk < 2; ++blk)
    for (uint32_t h = 0; h < 2; ++h) {
      Value q = u32x4(w.line16(base + (blk * block_bytes + qs)));
      for (int k = 0; k < 4; ++k) {
        words.push_back(extract(q, k));
        shifts.push_back(constant(u32, 4u * h));
      }
    }
  return (make_line(words) >> make_line(shifts)) & 0x0f0f0f0fu;
}

// Q5_0/Q5_1 block pairs: the fifth bits of pair_codes' elements, at bit 4
// of each byte. Bit e of a block's qh word is element e's; lane L needs bits
// 4L .. 4L + 3 (one shift per lane), and a multiply by 2^4 + 2^11 + 2^18 +
// 2^25 moves bit j of that nibble to bit 4 of byte j (the four copies land
// on disjoint bit ranges: no carries), one mask keeping those.
Value spread_nibble_bits(const Value& nib) { return (nib * 0x02040810u) & 0x10101010u; }
Value pair_high_bits(const Value& qh0, const Value& qh1) {
  std::vector<Value> qh, shift;
  for (uint32_t l = 0; l < 16; ++l) {
    qh.push_back(l < 8 ? qh0 : qh1);
    shift.push_back(constant(u32, 4u * (l % 8)));
  }
  return spread_nibble_bits((make_line(qh) >> make_line(shift)) & 15u);
}
// Q5_0/Q5_1 block quads: the same for the low (elements 0-15, first = 0) or
// high (16-31, first = 16) nibbles of the quad codes, from each block's qh
// word in its four lanes (lane 4q + l holds elements 4l .. 4l + 3).
Value quad_high_bits(const Value& qh, uint32_t first) {
  std::vector<Value> shift;
  for (uint32_t l = 0; l < 16; ++l) shift.push_back(constant(u32, first + 4u * (l % 4)));
  return spread_nibble_bits((qh >> make_line(shift)) & 15u);
}

// A run of `span` (65-96) bytes at `base` (block quads: Q4_0 72, Q4_1 80,
// Q5_0 88, Q5_1 96; Q8_0 block pairs: 68) as two 64-byte tables for
// permute_bytes: its first 64 bytes, and its last 16 (broadcast) or, past
// 80, its last 32 (twice). Never a byte past the run.
struct SpanTables {
  Value lo, hi;
};
uint32_t span_tail(uint32_t span) { return span <= 80 ? 16u : 32u; }
SpanTables span_tables(const PackedBytes& w, const Value& base, uint32_t span) {
  const uint32_t tail = span_tail(span);
  return {bytes64(w, base), bytes64(w, base + uint64_t(span - tail), tail / 16u)};
}
// The 16 f16 values that byte index line `idx` picks from the tables
// (scales, mins), as f32. `first_only`: idx picks from t.lo alone, a
// one-table permute (vpermw on AVX512-BW, see CppDialect::permute_bytes).
Value span_halves(const SpanTables& t, const Value& idx, bool first_only = false) {
  return cast(line(f32, 16), bitcast(line(f16, 16), permute_bytes(t.lo, first_only ? t.lo : t.hi, idx)));
}
// The table byte of byte `at` (< span) of the run.
uint32_t span_byte(uint32_t at, uint32_t span) { return at < 64 ? at : 64u + (at - (span - span_tail(span))); }
// Block quads of a 32-element format (block_bytes bb, quant bytes at qs):
// the 64 quant bytes in block order (16 per block).
// first3: blocks 0-2 only, from the first table (block 3's lanes pick byte 0).
Value quad_codes_index(uint32_t bb, uint32_t qs, bool first3 = false) {
  std::vector<uint32_t> idx;
  for (uint32_t q = 0; q < 4; ++q)
    for (uint32_t j = 0; j < 16; ++j) idx.push_back(first3 && q == 3 ? 0u : span_byte(bb * q + qs + j, 4 * bb));
  return byte_index(idx);
}
// A field of each block in 16 lanes, four times (lanes 4q..4q+3: block q):
// `width` bytes at `at`: the f16 scale (at 0, width 2: 32 bytes), Q4_1/Q5_1's
// f16 min (at 2), Q5's qh word (width 4: 64 bytes).
Value quad_field_index(uint32_t bb, uint32_t at, uint32_t width) {
  std::vector<uint32_t> idx;
  for (uint32_t l = 0; l < 16; ++l)
    for (uint32_t e = 0; e < width; ++e) idx.push_back(span_byte(bb * (l / 4) + at + e, 4 * bb));
  return byte_index(idx);
}
// Q8_0 block pairs: the 64 quant bytes of both blocks, and the two f16
// scales eight times each (lanes 8q..8q+7: block q) as 32 bytes.
Value q8_pair_codes_index() {
  std::vector<uint32_t> idx;
  for (uint32_t q = 0; q < 2; ++q)
    for (uint32_t j = 0; j < 32; ++j) idx.push_back(span_byte(34u * q + 2u + j, 68));
  return byte_index(idx);
}
Value q8_pair_scales_index() {
  std::vector<uint32_t> idx;
  for (uint32_t l = 0; l < 16; ++l)
    for (uint32_t e = 0; e < 2; ++e) idx.push_back(span_byte(34u * (l / 8) + e, 68));
  return byte_index(idx);
}
// Q4_K's 8 sub-block scales and mins as one f32x16 line [d·sc_0..7,
// dmin·m_0..7].
Value q4k_scales_mins(const PackedBytes& w, const Value& base) {
  Value sm = cast(line(f32, 16), q4k_scale_min_codes(w, base));
  Value dd = bitcast(line(f16, 2), w.u32le(base));
  return sm * cast(line(f32, 16), halves(extract(dd, 0), extract(dd, 1)));
}

}  // namespace

// GGML's scale_min_k4 on the 12 scale bytes with line operations, regrouped
// by two 16-byte permutes so every 4-byte word takes one mask and shift
// (words: sc 0-3, sc 4-7, m 0-3, m 4-7).
Value q4k_scale_min_codes(const PackedBytes& w, const Value& base) {
  Value s = u32x4(w.line16(base + 4u));  // scale bytes 0..11 (and 4 quant bytes, unused)
  // low bits: s0-3 & 63, s8-11 & 15, s4-7 & 63, s8-11 >> 4
  Value lo = permute_bytes(s, s, u32_words(0x03020100u, 0x0b0a0908u, 0x07060504u, 0x0b0a0908u));
  lo = (lo >> u32_words(0, 0, 0, 4)) & u32_words(0x3f3f3f3fu, 0x0f0f0f0fu, 0x3f3f3f3fu, 0x0f0f0f0fu);
  // high bits of sc 4-7: s0-3 >> 6, of m 4-7: s4-7 >> 6, both to bits 4-5
  Value hi = permute_bytes(s, s, u32_words(0x03020100u, 0x03020100u, 0x07060504u, 0x07060504u));
  hi = (hi >> 2u) & u32_words(0, 0x30303030u, 0, 0x30303030u);
  return bitcast(line(u8, 16), lo | hi);
}

bool quad_x_has_min(QFormat f) { return f == QFormat::Q4_1 || f == QFormat::Q5_1; }

namespace {
// The 16-lane super-block forms' units (four groups of 16 per zmm dot4) and
// -o/4 per lane: Q6_K elements in order, offset 32; Q3_K groups 2j, 2j + 1,
// 8 + 2j, 9 + 2j (its 2-bit fields), offset 4; Q2_K the same units, no
// offset (its mins are a separate term).
struct WideUnits {
  std::array<std::array<uint32_t, 4>, 4> groups;
  int32_t lane_offset;
};
WideUnits wide_units_of(QFormat f) {
  const std::array<std::array<uint32_t, 4>, 4> fields = {{{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6, 7, 14, 15}}};
  if (f == QFormat::Q6_K) return {{{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}}, 8};
  return {fields, f == QFormat::Q3_K ? 1 : 0};
}
// One super-block's X lines for those forms, from quantize_x8_kernel's
// output (its first group gb and block xbb, u64): unit k's 64 activations,
// its accumulator start (-o·Σq over the 4 lanes of each group), and dx of
// each of the 16 groups.
struct WideX {
  std::array<Value, 4> xv, init;
  Value dx16;
};
WideX wide_x_lines(const Array& xq, const Array& xd, const Array& xs, const Value& gb, const Value& xbb, const WideUnits& wu) {
  WideX x;
  for (uint32_t k = 0; k < 4; ++k) {
    std::vector<Value> lanes, off;
    for (uint32_t g : wu.groups[k]) {
      Value q = xq[gb + uint64_t(g)];
      for (int l = 0; l < 4; ++l) lanes.push_back(extract(q, l));
      off.push_back(xs[gb + uint64_t(g)] * -wu.lane_offset);
    }
    x.xv[k] = make_line(lanes);
    x.init[k] = quarters(off);
  }
  std::vector<Value> dxg;
  for (uint32_t g = 0; g < 16; ++g) dxg.push_back(xd[xbb + uint64_t(g / 2)]);
  x.dx16 = make_line(dxg);
  return x;
}
}  // namespace

bool has_prepared_wide_x(QFormat f) { return f == QFormat::Q6_K || f == QFormat::Q3_K; }

namespace {
// quantize_x8_kernel's output (xq, xd, xs) rearranged for one GEMV form:
// three line buffers written per unit of X (a quad of blocks, a
// super-block), `per_item` units per work-item; `write` records a unit's.
struct XPrep {
  Array xq, xd, xs;
  std::array<Array, 3> out;
};
ir::Kernel x8_prep_kernel(const std::string& name, const std::array<std::pair<const char*, ir::Type>, 3>& outs,
                          int per_item, const std::function<void(const XPrep&, const Value& unit)>& write) {
  const uint32_t PI = uint32_t(per_item);
  return kernel(name + "_b" + std::to_string(PI), [&](KernelBuilder& kb) {
    XPrep io;
    io.xq = kb.input("xq", line(i32, 4));
    io.xd = kb.input("xd", f32);
    io.xs = kb.input("xs", i32);
    for (int i = 0; i < 3; ++i) io.out[size_t(i)] = kb.output(outs[size_t(i)].first, outs[size_t(i)].second);
    auto n = kb.scalar("nunits", u32);
    kb.workgroup(1);
    Value u0 = group_id(0) * PI;
    for_range(u0, min(u0 + PI, n), [&](Value unit) { write(io, unit); });
  });
}
}  // namespace

ir::Kernel superblock_x8_kernel(QFormat fmt, int superblocks_per_item) {
  if (!has_prepared_wide_x(fmt))
    throw std::invalid_argument(std::string("superblock_x8_kernel: prepared super-block X is for Q3_K and Q6_K, not ") + info(fmt).name);
  const WideUnits wu = wide_units_of(fmt);
  return x8_prep_kernel(std::string("quant_x8_wide_") + info(fmt).name,
                        {{{"xsv", line(i32, 16)}, {"xsi", line(i32, 16)}, {"xsd", line(f32, 16)}}}, superblocks_per_item,
                        [&](const XPrep& io, const Value& sb) {
    // The super-block's 16 groups and 8 blocks (K % 256 == 0: none straddles rows of X).
    const WideX x = wide_x_lines(io.xq, io.xd, io.xs, cast(u64, sb * 16u), cast(u64, sb * 8u), wu);
    Value at = cast(u64, sb) * 4u;
    for (uint32_t k = 0; k < 4; ++k) {
      io.out[0][at + uint64_t(k)] = x.xv[k];
      io.out[1][at + uint64_t(k)] = x.init[k];
    }
    io.out[2][cast(u64, sb)] = x.dx16;
  });
}

ir::Kernel quad_x8_kernel(QFormat fmt, int quads_per_item) {
  if (fmt != QFormat::Q4_0 && fmt != QFormat::Q4_1 && fmt != QFormat::Q5_0 && fmt != QFormat::Q5_1)
    throw std::invalid_argument(std::string("quad_x8_kernel: block quads are for Q4_0, Q4_1, Q5_0 and Q5_1, not ") + info(fmt).name);
  const bool with_min = quad_x_has_min(fmt);
  // o / 4 (Q4_0 2, Q5_0 4; 0 with mins): -o·Σq of a block over its 4 lanes.
  const int32_t lane_offset = fmt == QFormat::Q4_0 ? 2 : fmt == QFormat::Q5_0 ? 4 : 0;
  return x8_prep_kernel(std::string("quant_x8_quads_") + info(fmt).name,
                        {{{"xqq", line(i32, 16)}, {"xqi", line(i32, 16)}, {"xqf", line(f32, 16)}}}, quads_per_item,
                        [&](const XPrep& io, const Value& qd) {
    // The quad's 8 groups of 16 and 4 blocks (quads never straddle rows of X: K % 128 == 0).
    Value gb = cast(u64, qd * 8u), xbb = cast(u64, qd * 4u);
    std::vector<Value> lo, hi, sums, d, m;
    for (uint32_t q = 0; q < 4; ++q) {
      Value ql = io.xq[gb + uint64_t(2 * q)], qh = io.xq[gb + uint64_t(2 * q + 1)];
      for (int k = 0; k < 4; ++k) lo.push_back(extract(ql, k)), hi.push_back(extract(qh, k));
      Value sum = io.xs[gb + uint64_t(2 * q)] + io.xs[gb + uint64_t(2 * q + 1)];
      sums.push_back(sum * -lane_offset);
      d.push_back(io.xd[xbb + uint64_t(q)]);
      if (with_min) m.push_back(d.back() * f(sum) * 0.25f);  // dx·Σq over 4 lanes
    }
    Value at = cast(u64, qd);
    io.out[0][at * 2u] = make_line(lo);
    io.out[0][at * 2u + uint64_t(1)] = make_line(hi);
    io.out[1][at] = quarters(sums);
    io.out[2][at * (with_min ? 2u : 1u)] = quarters(d);
    if (with_min) io.out[2][at * 2u + uint64_t(1)] = quarters(m);
  });
}
namespace {

// The parameters of one qgemv_x8_kernel (see ops/quant/kernels.h).
struct X8GemvForm {
  QFormat fmt;
  int rows, mb;
  bool signed_q8;
  int prefetch, step_blocks;
  bool wide_units, seq_rows, prefetch_l1;
};

// The X side of a super-block (b) for the K-quant 16-lane forms, per X
// row: unit k's 64 activations (groups units[k], 16 bytes each), its
// accumulator start (-o·Σq over the 4 lanes of each group: Σq ×
// -lane_offset), and dx of each of the 16 groups.
struct SuperBlockX {
  std::vector<std::array<Value, 4>> xv, init;
  std::vector<Value> dx16;
};

// The 4- and 8-lane units' X side of one weight block, per X row: the scale
// of each X block of 32 (dx) and Σq of each group of 16 (sq).
struct XBlockScales {
  std::vector<std::vector<Value>> dx, sq;
};

// One qgemv_x8_kernel being built: its form, its buffers, the work-item's
// rows of X and W, and an emitter per form. emit() runs the work-item's loop
// and stores its outputs, once for whole groups of rows of W and once
// guarded (the last group, past N).
struct X8Gemv {
  X8Gemv(KernelBuilder& kb, const X8GemvForm& form);
  void emit(bool guarded);

  // The form.
  const QFormat fmt;
  const FormatInfo& fi;
  const uint32_t R, MB, BB, G, XB;
  const bool signed_q8;
  const int prefetch;
  const bool pairs, quads, wide_units, seq_rows, prefetch_l1;
  // The 16-lane Q6_K and Q3_K forms read X as superblock_x8_kernel prepared it.
  const bool prepared_sb;
  // Q6_K: group pairs as 8-lane dot4s (ymm) with per-half scales; the
  // offset 32 as one 16-lane fma per super-block: -32·Σ_g scale_g·dx·Σq_g.
  const bool q6;
  const bool q5k;
  // The buffers: X in one of three forms (declare_x), then W, Y and the sizes.
  Array xq, xd, xs, xqq, xqi, xqf, xsv, xsi, xsd;
  Array w, y;
  Value M, N, K;
  PackedBytes pb;
  // The units: groups of 16 per unit and the offset per 4 and per 8 lanes.
  int GU = 0;
  uint32_t o4 = 0, o8 = 0;
  // Units of two groups (all formats but Q6_K) take one 8-lane dot4 over
  // both groups' codes (vpmaddwd/vpdpbusd on ymm: half the instructions
  // of two 4-lane ones, which matters where the decode is compute-bound,
  // as on AVX2); the offset term is then spread over 8 lanes.
  bool wide = false;
  // The work-item's first row of W and of X, blocks per row, groups and X
  // blocks per row of X, bytes per row of W.
  Value n0, m0, nb, kg, kx, rowbytes;
  // Each X row's first group (xg) and X block (xb).
  std::vector<Value> xg, xb;
  // Where the rows `prefetch` workgroups ahead start (u64 bytes).
  Value pf_base;

 private:
  void declare_x(KernelBuilder& kb);
  // A fresh decoder of the format's blocks (BlockCodes holds no IR until load()).
  BlockCodes probe() const { return BlockCodes(fmt, pb, signed_q8); }
  std::vector<Value> row_offsets(bool guarded) const;
  void for_steps(const Value& steps, uint32_t blocks, const std::function<void(Value, uint32_t, uint32_t)>& body,
                 int unroll = 0) const;
  std::vector<Var> line_accumulators() const;
  void store_line_sums(bool guarded, std::vector<Var>& acc) const;
  SuperBlockX superblock_x(const Value& b) const;
  void emit_pairs(bool guarded);
  void emit_quads(bool guarded);
  void emit_q4k_wide(bool guarded);
  void emit_q6k_wide(bool guarded);
  void emit_q3k_wide(bool guarded);
  void emit_q2k_wide(bool guarded);
  void emit_units(bool guarded);
  XBlockScales x_block_scales(const Value& b) const;
  void q6_units_step(const Value& b, uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec, const XBlockScales& x,
                     std::vector<Var>& acc, std::vector<Var>& macc) const;
  std::vector<std::vector<Value>> kquant_scale_lines(uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec,
                                                     const XBlockScales& x, std::vector<Var>& macc) const;
  void units_step(const Value& b, uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec, const XBlockScales& x,
                  const std::vector<std::vector<Value>>& sd, std::vector<Var>& acc, std::vector<Var>& macc) const;
};

X8Gemv::X8Gemv(KernelBuilder& kb, const X8GemvForm& form)
    : fmt(form.fmt),
      fi(info(form.fmt)),
      R(uint32_t(form.rows)),
      MB(uint32_t(form.mb)),
      BB(uint32_t(fi.block_bytes)),
      G(uint32_t(fi.block_elems / 16)),
      XB(uint32_t(fi.block_elems / 32)),
      signed_q8(form.signed_q8),
      prefetch(form.prefetch),
      pairs(form.step_blocks == 2),
      quads(form.step_blocks == 4),
      wide_units(form.wide_units),
      seq_rows(form.seq_rows),
      prefetch_l1(form.prefetch_l1),
      prepared_sb(form.wide_units && has_prepared_wide_x(form.fmt)),
      q6(form.fmt == QFormat::Q6_K),
      q5k(form.fmt == QFormat::Q5_K) {
  declare_x(kb);
  const QuantRowParams io = quant_row_params(kb);
  w = io.w, y = io.y, M = io.M, N = io.N, K = io.K, pb = io.pb;
  const BlockCodes codes = probe();
  GU = codes.groups_per_unit();
  o4 = codes.offset() / 4;
  n0 = group_id(0) * R;
  m0 = group_id(1) * MB;
  nb = K / uint32_t(fi.block_elems);
  kg = K / 16u;
  kx = K / 32u;
  rowbytes = nb * BB;
  // Rows of X past M (last group only) re-read row M-1: in bounds, never stored.
  for (uint32_t i = 0; i < MB; ++i) {
    Value row = min(m0 + i, M - 1u);
    xg.push_back(row * kg);
    xb.push_back(row * kx);
  }
  wide = GU == 2 && codes.offset() % 8 == 0;
  o8 = codes.offset() / 8;
  pf_base = cast(u64, n0 + R * uint32_t(std::max(prefetch, 0))) * cast(u64, rowbytes);
}

// Quads read X as quad_x8_kernel prepared it (xqq, xqi, xqf), the 16-lane
// Q6_K and Q3_K forms superblock_x8_kernel's (xsv, xsi, xsd), the other
// forms quantize_x8_kernel's output (xq, xd, xs).
void X8Gemv::declare_x(KernelBuilder& kb) {
  if (quads) {
    xqq = kb.input("xqq", line(i32, 16));
    xqi = kb.input("xqi", line(i32, 16));
    xqf = kb.input("xqf", line(f32, 16));
  } else if (prepared_sb) {
    xsv = kb.input("xsv", line(i32, 16));
    xsi = kb.input("xsi", line(i32, 16));
    xsd = kb.input("xsd", line(f32, 16));
  } else {
    xq = kb.input("xq", line(i32, 4));
    xd = kb.input("xd", f32);
    xs = kb.input("xs", i32);
  }
}

// Byte offsets of the work-item's weight rows (u64; guarded: rows past N
// re-read row N-1, in bounds, never stored).
std::vector<Value> X8Gemv::row_offsets(bool guarded) const {
  std::vector<Value> wrow;
  for (uint32_t r = 0; r < R; ++r) wrow.push_back(cast(u64, guarded ? min(n0 + r, N - 1u) : n0 + r) * cast(u64, rowbytes));
  return wrow;
}

// The loop over a row's `steps` steps of `blocks` blocks, the rows in
// lockstep or one after another, the rows `prefetch` workgroups ahead
// prefetched (for_row_steps).
void X8Gemv::for_steps(const Value& steps, uint32_t blocks, const std::function<void(Value, uint32_t, uint32_t)>& body,
                       int unroll) const {
  for_row_steps(w, pf_base, prefetch != 0, prefetch_l1, R, seq_rows, steps, blocks * BB, body, unroll);
}

// The 16-lane forms' accumulators (one f32x16 line per X row and weight
// row) and their outputs, each line's lane sum.
std::vector<Var> X8Gemv::line_accumulators() const {
  std::vector<Var> acc;
  for (uint32_t i = 0; i < MB * R; ++i) acc.push_back(var(splat(0.0f, 16)));
  return acc;
}

void X8Gemv::store_line_sums(bool guarded, std::vector<Var>& acc) const {
  store_gemv_outputs(y, M, N, m0, n0, MB, R, guarded,
                     [&](uint32_t i, uint32_t r) { return reduce_add(acc[i * R + r].get()); });
}

// Q6_K and Q3_K load them as superblock_x8_kernel prepared them once
// per call (built here they were ~14 instructions per super-block and
// row of X, shared by only R = 2 rows of Q6_K: a fifth of its loop).
SuperBlockX X8Gemv::superblock_x(const Value& b) const {
  SuperBlockX x{std::vector<std::array<Value, 4>>(MB), std::vector<std::array<Value, 4>>(MB), std::vector<Value>(MB)};
  for (uint32_t i = 0; i < MB; ++i) {
    if (prepared_sb) {
      Value at = cast(u64, xb[i] / 8u + b);
      for (uint32_t k = 0; k < 4; ++k) {
        x.xv[i][k] = xsv[at * 4u + uint64_t(k)];
        x.init[i][k] = xsi[at * 4u + uint64_t(k)];
      }
      x.dx16[i] = xsd[at];
      continue;
    }
    const WideX wx = wide_x_lines(xq, xd, xs, cast(u64, xg[i] + b * 16u), cast(u64, xb[i] + b * 8u), wide_units_of(fmt));
    x.xv[i] = wx.xv;
    x.init[i] = wx.init;
    x.dx16[i] = wx.dx16;
  }
  return x;
}

// Block pairs (K a multiple of 64): two 32-element blocks per 16-lane
// line, so each instruction of the decode, the dot4, the conversion and
// the scale fma covers twice the weights of the 8-lane form (AVX-512:
// zmm instead of ymm). Per pair and X row, shared by the rows: the 64
// activation bytes (one line), the offset term (-o·Σq over the 4 lanes of
// each group of 16) and dx, per half.
//   Q4_0, Q4_1, Q5_0, Q5_1: each block's 16 bytes twice, a shift per half
//   picks the nibble; Q5's fifth bits from the two qh words
//   (pair_high_bits). Q4_1/Q5_1's min m adds m·dx·Σq per block: one fma
//   of [m_b] against [dx_b·Σq_b / 8], 8 lanes per block.
//   Q8_0 (needs permute_bytes): the 68 bytes are two loads, one byte
//   permute gives the 64 codes (stored signed: flipped to q + 128 for the
//   u8·i8 dot4, o = 128), a second the two scales, 8 lanes each.
void X8Gemv::emit_pairs(bool guarded) {
  const bool q8 = fmt == QFormat::Q8_0;
  const bool five = fmt == QFormat::Q5_0 || fmt == QFormat::Q5_1;
  const bool with_min = fmt == QFormat::Q4_1 || fmt == QFormat::Q5_1;
  const uint32_t qs = qs_offset(fmt), qh_at = qh_offset(fmt);
  const int32_t lane_offset = int32_t(probe().offset() / 4);  // o / 4
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  const Value codes_idx = q8 ? q8_pair_codes_index() : Value(), scales_idx = q8 ? q8_pair_scales_index() : Value();
  for_steps(nb / 2u, 2, [&](Value bp, uint32_t r0, uint32_t r1) {
    Value b = bp * 2u;
    std::vector<Value> xv, init, dx, xdm;
    for (uint32_t i = 0; i < MB; ++i) {
      Value gb = cast(u64, xg[i] + b * 2u), xbb = cast(u64, xb[i] + b);
      std::vector<Value> lanes, off, sum;
      for (uint32_t g = 0; g < 4; ++g) {
        Value q = xq[gb + uint64_t(g)];
        for (int l = 0; l < 4; ++l) lanes.push_back(extract(q, l));
        off.push_back(xs[gb + uint64_t(g)] * -lane_offset);
        sum.push_back(xs[gb + uint64_t(g)]);
      }
      xv.push_back(make_line(lanes));
      init.push_back(lane_offset ? quarters(off) : splat(constant(i32, 0), 16));
      Value d0 = xd[xbb], d1 = xd[xbb + uint64_t(1)];
      // [dx_0, dx_0·Σq_0 / 8, dx_1, dx_1·Σq_1 / 8] against the blocks'
      // first words [d_0, m_0, d_1, m_1] (1/8: the min term is spread
      // over 8 lanes).
      if (with_min) xdm.push_back(make_line({d0, d0 * f(sum[0] + sum[1]) * 0.125f, d1, d1 * f(sum[2] + sum[3]) * 0.125f}));
      else dx.push_back(halves(d0, d1));
    }
    for (uint32_t r = r0; r < r1; ++r) {
      const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
      Value codes, scale;
      if (q8) {
        const SpanTables t = span_tables(pb, base, 68);
        codes = bitcast(line(u32, 16), permute_bytes(t.lo, t.hi, codes_idx)) ^ 0x80808080u;
        scale = span_halves(t, scales_idx, true);  // scales at bytes 0 and 34
      } else {
        codes = pair_codes(pb, base, BB, qs);
        if (five) codes = codes | pair_high_bits(pb.u32le(base + uint64_t(qh_at)), pb.u32le(base + uint64_t(BB + qh_at)));
      }
      // Q4_1/Q5_1: each block's first word is d and m, so the pair's
      // scales and mins are one f16x4 conversion (scalar f16 loads cost
      // two inserts each). Not for Q4_0/Q5_0, where that word would
      // overlap the codes' or Q5_0's qh loads: clang then assembles all
      // of them from bytes, several times slower.
      const Value dm = with_min ? cast(line(f32, 4), bitcast(line(f16, 4), make_line({pb.u32le(base), pb.u32le(base + uint64_t(BB))})))
                                : Value();
      if (!q8 && !with_min) scale = halves(pb.half(base), pb.half(base + uint64_t(BB)));
      for (uint32_t i = 0; i < MB; ++i) {
        Var& a = acc[i * R + r];
        Value isum = cast(line(f32, 16), dot4(codes, xv[i], init[i]));
        if (with_min) {
          const Value t = dm * xdm[i];
          a = fma(isum, halves(extract(t, 0), extract(t, 2)), a.get() + halves(extract(t, 1), extract(t, 3)));
        } else {
          a = fma(isum, scale * dx[i], a.get());
        }
      }
    }
  });
  store_line_sums(guarded, acc);
}

// Block quads (Q4_0, Q4_1, Q5_0, Q5_1; K a multiple of 128; needs
// permute_bytes): the 72-96 bytes of four blocks are two loads, and one
// byte permute puts their 64 quant bytes in block order, so the low
// nibbles of a whole line are elements 0-15 of each block and the high
// ones 16-31: two 16-lane dot4 (against X's groups regrouped the same
// way, shared by the rows) with no byte duplicated. A second permute
// gathers the four f16 scales, four lanes each; Q4_1/Q5_1 a third their
// mins (m·dx·Σq: one more fma); Q5 a third each block's qh word, whose
// fifth bits quad_high_bits places. X's side comes prepared once per
// call (quad_x8_kernel): built per work-item it would be loads, inserts
// and gathers shared by only R rows. Q4_0 per row and 128 weights (Intel uops): 2 loads,
// a one-table permute and a blend for the codes (1 + 1, see codes_lo), 3
// mask/shift, 2 dot4, a one-table permute and a conversion for the scales
// (1 + 2), 1 conversion, 1 multiply and 1 fma (pairs: 2 × 15).
void X8Gemv::emit_quads(bool guarded) {
  const bool five = fmt == QFormat::Q5_0 || fmt == QFormat::Q5_1;
  const bool with_min = fmt == QFormat::Q4_1 || fmt == QFormat::Q5_1;
  const int32_t lane_offset = int32_t(probe().offset() / 4);  // o / 4 (Q4_0 2, Q5_0 4; 0 with mins)
  const uint32_t span = 4 * BB;
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  const bool codes_lo = span_tail(span) == 16 && 3 * BB <= 64;  // block 2's codes end by byte 64
  const Value codes_idx = quad_codes_index(BB, qs_offset(fmt), codes_lo), scales_idx = quad_field_index(BB, 0, 2);
  const Value mins_idx = with_min ? quad_field_index(BB, 2, 2) : Value();
  const Value qh_idx = five ? quad_field_index(BB, qh_offset(fmt), 4) : Value();
  for_steps(nb / 4u, 4, [&](Value bq, uint32_t r0, uint32_t r1) {
    Value b = bq * 4u;
    // X's lines for this quad, per row of X (quad_x8_kernel).
    std::vector<Value> xlo, xhi, init, dx, xmin;
    for (uint32_t i = 0; i < MB; ++i) {
      Value at = cast(u64, xb[i] / 4u + bq);
      xlo.push_back(xqq[at * 2u]);
      xhi.push_back(xqq[at * 2u + uint64_t(1)]);
      init.push_back(lane_offset ? xqi[at] : splat(constant(i32, 0), 16));
      dx.push_back(xqf[at * (with_min ? 2u : 1u)]);
      if (with_min) xmin.push_back(xqf[at * 2u + uint64_t(1)]);
    }
    for (uint32_t r = r0; r < r1; ++r) {
      const SpanTables t = span_tables(pb, wrow[r] + cast(u64, b) * uint64_t(BB), span);
      // Q4_0, Q4_1: blocks 0-2's codes are in the first table and block
      // 3's are the 16-byte tail, so a one-table permute (1 uop) and a
      // blend replace the two-table one (3 uops on Intel).
      Value codes = codes_lo ? select(lane_index(16) < 12, bitcast(line(u32, 16), permute_bytes(t.lo, t.lo, codes_idx)),
                                      bitcast(line(u32, 16), t.hi))
                             : bitcast(line(u32, 16), permute_bytes(t.lo, t.hi, codes_idx));
      Value lo = codes & 0x0f0f0f0fu, hi = (codes >> 4u) & 0x0f0f0f0fu;
      if (five) {
        Value qh = bitcast(line(u32, 16), permute_bytes(t.lo, t.hi, qh_idx));
        lo = lo | quad_high_bits(qh, 0);
        hi = hi | quad_high_bits(qh, 16);
      }
      // The last block's d (m) at 3·BB (+ 2) is in the first table for
      // Q4_0 and Q4_1.
      Value scale = span_halves(t, scales_idx, 3 * BB + 1 < 64);
      Value mins = with_min ? span_halves(t, mins_idx, 3 * BB + 3 < 64) : Value();
      for (uint32_t i = 0; i < MB; ++i) {
        Var& a = acc[i * R + r];
        Value isum = dot4(hi, xhi[i], dot4(lo, xlo[i], init[i]));
        Value prev = with_min ? fma(mins, xmin[i], a.get()) : a.get();
        a = fma(cast(line(f32, 16), isum), scale * dx[i], prev);
      }
    }
  });
  store_line_sums(guarded, acc);
}

// Q4_K in 16-lane units: a 64-byte load of the quant bytes holds four
// sub-blocks (low nibbles: 2c and 2c + 2, high: 2c + 1 and 2c + 3), so
// one mask (or shift and mask) gives two sub-blocks' codes per zmm, one
// dot4 against X's matching groups (shared by the rows), and the scale
// line takes two lanes of the block's d·sc·dx. Per row and super-block:
// 2 loads, 6 mask/shift, 4 dot4, 4 conversions, 4 permutes, 4 fma, where
// the 8-lane units take 8 of each plus 8 broadcasts. Q5_K: the same
// units, with the 32 qh bytes in both halves of a line and one per-word
// shift and mask placing each element's fifth bit (as Q3_K's third).
void X8Gemv::emit_q4k_wide(bool guarded) {
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  const Value zero8 = splat(0.0f, 8);
  auto cat8 = [](const Value& a, const Value& b) {
    std::vector<Value> l;
    for (int k = 0; k < 8; ++k) l.push_back(extract(a, k));
    for (int k = 0; k < 8; ++k) l.push_back(extract(b, k));
    return make_line(l);
  };
  for_steps(nb, 1, [&](Value b, uint32_t r0, uint32_t r1) {
    // Per X row: the four 64-activation lines (unit k: sub-blocks
    // sb(k) and sb(k) + 2, sb(k) = 4·(k/2) + k%2), [dx | 0] and
    // [0 | -dx·Σq] per sub-block (the scales' and the mins' halves: the
    // mins accumulate in the upper lanes of the same accumulator).
    std::vector<std::array<Value, 4>> xv(MB);
    std::vector<Value> dx16(MB), xs16(MB);
    for (uint32_t i = 0; i < MB; ++i) {
      Value gb = cast(u64, xg[i] + b * 16u), xbb = cast(u64, xb[i] + b * 8u);
      // the super-block's 16 groups in order (adjacent loads merge)
      std::vector<Value> grp;
      for (uint32_t g = 0; g < 16; ++g) grp.push_back(xq[gb + uint64_t(g)]);
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t sb = 4 * (k / 2) + k % 2;
        std::vector<Value> lanes;
        for (uint32_t g : {2 * sb, 2 * sb + 1, 2 * sb + 4, 2 * sb + 5})
          for (int l = 0; l < 4; ++l) lanes.push_back(extract(grp[g], l));
        xv[i][k] = make_line(lanes);
      }
      std::vector<Value> d, even, odd;
      for (uint32_t s = 0; s < 8; ++s) {
        d.push_back(xd[xbb + uint64_t(s)]);
        even.push_back(xs[gb + uint64_t(2 * s)]);
        odd.push_back(xs[gb + uint64_t(2 * s + 1)]);
      }
      Value dx8 = make_line(d);
      dx16[i] = cat8(dx8, zero8);
      xs16[i] = cat8(zero8, dx8 * cast(line(f32, 8), -(make_line(even) + make_line(odd))));
    }
    for (uint32_t r = r0; r < r1; ++r) {
      const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
      const Value sm = q4k_scales_mins(pb, base);
      const uint64_t qs_at = q5k ? 48 : 16;
      const std::array<Value, 2> wq = {bytes64(pb, base + qs_at), bytes64(pb, base + (qs_at + 64))};
      const Value qh = q5k ? bytes64(pb, base + uint64_t(16), 2) : Value();
      for (uint32_t i = 0; i < MB; ++i) {
        Var& a = acc[i * R + r];
        a = fma(sm, xs16[i], a.get());
        Value sd = sm * dx16[i];
        for (uint32_t k = 0; k < 4; ++k) {
          const uint32_t sb = 4 * (k / 2) + k % 2;
          Value codes = k % 2 ? (wq[k / 2] >> 4u) & 0x0f0f0f0fu : wq[k / 2] & 0x0f0f0f0fu;
          // Q5_K: bit s of qh byte l is the fifth bit of sub-block s's element l.
          if (q5k) codes = codes | (((qh >> halves(constant(u32, sb), constant(u32, sb + 2))) & 0x01010101u) << 4u);
          Value isum = dot4(codes, xv[i][k], splat(constant(i32, 0), 16));
          a = fma(cast(line(f32, 16), isum), halves(extract(sd, int(sb)), extract(sd, int(sb + 2))), a.get());
        }
      }
    }
  });
  store_line_sums(guarded, acc);
}

// Q6_K in 16-lane units: each half super-block's 64 low-bit bytes are
// one load whose low nibbles are elements 0-63 and high nibbles 64-127
// of the half, in order; the 32 high-bit bytes are loaded into both
// halves of a line, where one per-word shift and a mask put each
// element's two bits at bits 4-5. Four 16-lane dot4 per row and
// super-block (offset 32 in the accumulator start, shared by the rows),
// the 16 scales d·sc·dx one line, four lanes each by a permute.
void X8Gemv::emit_q6k_wide(bool guarded) {
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  const Value low_shift = halves(constant(u32, 4), constant(u32, 2));
  const Value high_shift = halves(constant(u32, 0), constant(u32, 2));
  for_steps(nb, 1, [&](Value b, uint32_t r0, uint32_t r1) {
    // Unit k: groups 4k..4k+3 (elements 64k..64k+63); o = 32.
    const auto [xv, init, dx16] = superblock_x(b);
    for (uint32_t r = r0; r < r1; ++r) {
      const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
      const Value sc = cast(line(f32, 16), bitcast(line(i8, 16), pb.line16(base + 192u))) * pb.half_splat(base + 208u);
      std::array<Value, 2> ql, qh;
      for (uint32_t h = 0; h < 2; ++h) {
        ql[h] = bytes64(pb, base + uint64_t(64u * h));
        qh[h] = bytes64(pb, base + uint64_t(128u + 32u * h), 2);
      }
      for (uint32_t i = 0; i < MB; ++i) {
        const Value sdx = sc * dx16[i];
        Var& a = acc[i * R + r];
        for (uint32_t k = 0; k < 4; ++k) {
          const uint32_t h = k / 2;
          Value codes = k % 2 == 0 ? (ql[h] & 0x0f0f0f0fu) | ((qh[h] << low_shift) & 0x30303030u)
                                   : ((ql[h] >> 4u) & 0x0f0f0f0fu) | ((qh[h] >> high_shift) & 0x30303030u);
          Value isum = dot4(codes, xv[i][k], init[i][k]);
          std::vector<Value> s;
          for (uint32_t g = 4 * k; g < 4 * k + 4; ++g) s.push_back(extract(sdx, int(g)));
          a = fma(cast(line(f32, 16), isum), quarters(s), a.get());
        }
      }
    }
  });
  store_line_sums(guarded, acc);
}

// Q3_K in 16-lane units: its 64 low-bit bytes are one load, where the
// 2-bit field j of byte l is element 32j + l of the first half (bytes
// 0-31) or 128 + 32j + l (bytes 32-63); the 32 hmask bytes fill both
// halves of a line and bit j (first half) or 4 + j (second) is the third
// bit. Codes u = q | h << 2 with w = d·(sc - 32)·(u - 4): -4·Σq starts
// each sum (Σq per lane of a group of 16). Four zmm dot4 per row and
// super-block; the 16 scales decoded as one line (two 16-byte permutes).
void X8Gemv::emit_q3k_wide(bool guarded) {
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  for_steps(nb, 1, [&](Value b, uint32_t r0, uint32_t r1) {
    // Unit j: groups 2j, 2j + 1, 8 + 2j, 9 + 2j; o = 4.
    const auto [xv, init, dx16] = superblock_x(b);
    for (uint32_t r = r0; r < r1; ++r) {
      const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
      Value sc = cast(line(f32, 16), bitcast(line(i8, 16), q3k_scale_codes(pb, base) - splat(constant(u8, 32), 16)));
      Value dsc = sc * pb.half_splat(base + 108u);
      const Value qs = bytes64(pb, base + uint64_t(32)), hm = bytes64(pb, base, 2);
      for (uint32_t i = 0; i < MB; ++i) {
        const Value sdx = dsc * dx16[i];
        Var& a = acc[i * R + r];
        for (uint32_t j = 0; j < 4; ++j) {
          Value q = j ? (qs >> (2u * j)) & 0x03030303u : qs & 0x03030303u;
          Value h = ((hm >> halves(constant(u32, j), constant(u32, 4 + j))) & 0x01010101u) << 2u;
          Value isum = dot4(q | h, xv[i][j], init[i][j]);
          std::vector<Value> sg;
          for (uint32_t g : {2 * j, 2 * j + 1, 8 + 2 * j, 9 + 2 * j}) sg.push_back(extract(sdx, int(g)));
          a = fma(cast(line(f32, 16), isum), quarters(sg), a.get());
        }
      }
    }
  });
  store_line_sums(guarded, acc);
}

// Q2_K in 16-lane units: Q3_K's code layout without the third bit (the
// 64 code bytes at offset 16, 2-bit field j of byte l is element 32j + l
// of a half), unsigned codes (no offset), and a min per group of 16:
// w = d·(sc & 15)·q - dmin·(sc >> 4). The 16 scale bytes are one line
// (nibbles by one mask and one shift per word); the mins' term,
// -dmin·m·dx·Σq per group, is one 16-lane fma into the accumulator.
void X8Gemv::emit_q2k_wide(bool guarded) {
  std::vector<Var> acc = line_accumulators();
  const std::vector<Value> wrow = row_offsets(guarded);
  for_steps(nb, 1, [&](Value b, uint32_t r0, uint32_t r1) {
    const auto [xv, init, dx16] = superblock_x(b);
    std::vector<Value> msum(MB);  // -dx·Σq per group of 16
    for (uint32_t i = 0; i < MB; ++i) {
      Value gb = cast(u64, xg[i] + b * 16u);
      std::vector<Value> q;
      for (uint32_t g = 0; g < 16; ++g) q.push_back(xs[gb + uint64_t(g)]);
      msum[i] = -(cast(line(f32, 16), make_line(q)) * dx16[i]);
    }
    for (uint32_t r = r0; r < r1; ++r) {
      const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
      const Value s = u32x4(pb.line16(base));
      auto nibbles = [](const Value& v) { return cast(line(f32, 16), bitcast(line(u8, 16), v & 0x0f0f0f0fu)); };
      const Value dsc = nibbles(s) * pb.half_splat(base + 80u), dmin = nibbles(s >> 4u) * pb.half_splat(base + 82u);
      const Value qs = bytes64(pb, base + uint64_t(16));
      for (uint32_t i = 0; i < MB; ++i) {
        const Value sdx = dsc * dx16[i];
        Var& a = acc[i * R + r];
        a = fma(dmin, msum[i], a.get());
        for (uint32_t j = 0; j < 4; ++j) {
          Value q = j ? (qs >> (2u * j)) & 0x03030303u : qs & 0x03030303u;
          Value isum = dot4(q, xv[i][j], init[i][j]);
          std::vector<Value> sg;
          for (uint32_t g : {2 * j, 2 * j + 1, 8 + 2 * j, 9 + 2 * j}) sg.push_back(extract(sdx, int(g)));
          a = fma(cast(line(f32, 16), isum), quarters(sg), a.get());
        }
      }
    }
  });
  store_line_sums(guarded, acc);
}

void X8Gemv::emit(bool guarded) {
  if (wide_units && fmt == QFormat::Q2_K) return emit_q2k_wide(guarded);
  if (wide_units && fmt == QFormat::Q3_K) return emit_q3k_wide(guarded);
  if (wide_units) return fmt == QFormat::Q6_K ? emit_q6k_wide(guarded) : emit_q4k_wide(guarded);
  if (quads) return emit_quads(guarded);
  if (pairs) return emit_pairs(guarded);
  emit_units(guarded);
}

// The 4- and 8-lane units, one or two groups of 16 per dot4 (every format
// with an int8 GEMV), the blocks' scales decoded per row by BlockCodes.
void X8Gemv::emit_units(bool guarded) {
  std::vector<Var> acc, macc;
  const bool mline = probe().min_line();
  for (uint32_t i = 0; i < MB * R; ++i) {
    acc.push_back(var(splat(0.0f, wide || q6 ? 8 : 4)));
    if (probe().has_min()) macc.push_back(mline ? var(splat(0.0f, 8)) : var(0.0f));
    if (q6) macc.push_back(var(splat(0.0f, 16)));
  }
  const std::vector<Value> wrow = row_offsets(guarded);
  std::vector<BlockCodes> dec(R, probe());
  // Each row is a short stream (K/block_elems blocks) and R of them run
  // side by side: the hardware prefetcher starts late on each.
  for_steps(nb, 1, [&](Value b, uint32_t r0, uint32_t r1) {
    for (uint32_t r = r0; r < r1; ++r) dec[r].load(wrow[r] + cast(u64, b) * uint64_t(BB));
    const XBlockScales x = x_block_scales(b);
    if (q6) {
      q6_units_step(b, r0, r1, dec, x, acc, macc);
      return;
    }
    const std::vector<std::vector<Value>> sd = kquant_scale_lines(r0, r1, dec, x, macc);
    units_step(b, r0, r1, dec, x, sd, acc, macc);
  }, G == 2 ? 2 : 0);  // 32-element blocks: two per iteration (loop overhead)
  store_gemv_outputs(y, M, N, m0, n0, MB, R, guarded, [&](uint32_t i, uint32_t r) {
    Value s = reduce_add(acc[i * R + r].get());
    if (probe().has_min()) s = s + (mline ? reduce_add(macc[i * R + r].get()) : macc[i * R + r].get());
    if (q6) s = s + reduce_add(macc[i * R + r].get());
    return s;
  });
}

// Per X block of 32 (XB per weight block): its scale, and Σq per 16.
XBlockScales X8Gemv::x_block_scales(const Value& b) const {
  XBlockScales x{std::vector<std::vector<Value>>(MB), std::vector<std::vector<Value>>(MB)};
  // u64 indices: clang merges adjacent loads into vector loads only
  // when it can prove them consecutive (u32 sums may wrap).
  for (uint32_t i = 0; i < MB; ++i) {
    Value xbb = cast(u64, xb[i] + b * XB), gb = cast(u64, xg[i] + b * G);
    for (uint32_t j = 0; j < XB; ++j) {
      x.dx[i].push_back(xd[xbb + uint64_t(j)]);
      for (uint32_t h = 0; h < 2; ++h) x.sq[i].push_back(xs[gb + uint64_t(2 * j + h)]);
    }
  }
  return x;
}

// Q6_K's super-block b: group pairs as 8-lane dot4s, and the offset 32 as
// one 16-lane fma per row into macc.
void X8Gemv::q6_units_step(const Value& b, uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec,
                           const XBlockScales& x, std::vector<Var>& acc, std::vector<Var>& macc) const {
  const auto& dx = x.dx;
  const auto& sq = x.sq;
  for (uint32_t i = 0; i < MB; ++i) {
    // Per group g of the super-block: dx of its X block, and -32·Σq.
    std::vector<Value> dxg, sqg;
    for (uint32_t g = 0; g < 16; ++g) {
      dxg.push_back(dx[i][g / 2]);
      sqg.push_back(sq[i][g]);
    }
    auto line16 = [](const std::vector<Value>& v) {
      return make_line({v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13],
                        v[14], v[15]});
    };
    Value dx16 = line16(dxg), off16 = cast(line(f32, 16), line16(sqg)) * -32.0f;
    std::vector<Value> xv8;
    for (uint32_t g0 = 0; g0 < 16; g0 += 2)
      xv8.push_back(cat4(xq[xg[i] + b * G + g0], xq[xg[i] + b * G + g0 + 1u]));
    for (uint32_t r = r0; r < r1; ++r) {
      Value sd = dec[r].scale16() * dx16;
      Var& ma = macc[i * R + r];
      ma = fma(sd, off16, ma.get());
      Var& a = acc[i * R + r];
      for (uint32_t g0 = 0; g0 < 16; g0 += 2) {
        Value isum = dot4(dec[r].q6_codes8(int(g0)), xv8[g0 / 2], splat(constant(i32, 0), 8));
        Value s0 = extract(sd, int(g0)), s1 = extract(sd, int(g0 + 1));
        a = fma(cast(line(f32, 8), isum), make_line({s0, s0, s0, s0, s1, s1, s1, s1}), a.get());
      }
    }
  }
}

// Q4_K/Q5_K (8 units, one per X block): scale·dx of every unit as
// one f32x8 line per row (a lane broadcast per unit, no scalar
// scale moves), and Σ_sb min·dx·Σq as one f32x8 fma per row. Empty
// lines for the other formats.
std::vector<std::vector<Value>> X8Gemv::kquant_scale_lines(uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec,
                                                           const XBlockScales& x, std::vector<Var>& macc) const {
  const auto& dx = x.dx;
  std::vector<std::vector<Value>> sd(MB);
  if (probe().min_line())
    for (uint32_t i = 0; i < MB; ++i) {
      const auto& q = x.sq[i];
      Value dx8 = make_line(dx[i][0], dx[i][1], dx[i][2], dx[i][3], dx[i][4], dx[i][5], dx[i][6], dx[i][7]);
      Value even = make_line(q[0], q[2], q[4], q[6], q[8], q[10], q[12], q[14]);
      Value odd = make_line(q[1], q[3], q[5], q[7], q[9], q[11], q[13], q[15]);
      Value xs8 = dx8 * cast(line(f32, 8), even + odd);
      for (uint32_t r = r0; r < r1; ++r) {
        Var& ma = macc[i * R + r];
        ma = fma(dec[r].min8(), xs8, ma.get());
        sd[i].push_back(dec[r].scale16() * dx8);
      }
    }
  return sd;
}

// Weight block b's units against every X row: a dot4 chain per unit started
// at -o·Σq, then its scale (and min) times dx.
void X8Gemv::units_step(const Value& b, uint32_t r0, uint32_t r1, const std::vector<BlockCodes>& dec,
                        const XBlockScales& x, const std::vector<std::vector<Value>>& sd, std::vector<Var>& acc,
                        std::vector<Var>& macc) const {
  const auto& dx = x.dx;
  const auto& sq = x.sq;
  const bool mline = probe().min_line();
  for (uint32_t g0 = 0; g0 < G; g0 += uint32_t(GU)) {
    std::vector<Value> xv, xv8;  // activations of the unit's groups, per X row (and both as one line)
    for (uint32_t i = 0; i < MB; ++i) {
      for (uint32_t gg = 0; gg < uint32_t(GU); ++gg) {
        Value q = xq[xg[i] + b * G + g0 + gg];
        // quantize_x8 gives |q| <= 127; the clamp (one vpmaxsb per 16
        // activations, shared by the rows) lets codegen prove it.
        if (signed_q8) q = bitcast(line(i32, 4), max(bitcast(line(i8, 16), q), splat(constant(i8, -127), 16)));
        xv.push_back(q);
      }
      if (wide) xv8.push_back(cat4(xv[i * 2], xv[i * 2 + 1]));
    }
    const int u = probe().unit_of_group(int(g0));
    for (uint32_t r = r0; r < r1; ++r) {
      std::vector<Value> codes;
      if (!wide)
        for (uint32_t gg = 0; gg < uint32_t(GU); ++gg) codes.push_back(dec[r].codes(int(g0 + gg)));
      const Value codes8 = wide ? dec[r].codes8(int(g0)) : Value();
      for (uint32_t i = 0; i < MB; ++i) {
        const uint32_t j = g0 / 2;  // the X block of the unit
        Value qsum = GU == 2 ? sq[i][2 * j] + sq[i][2 * j + 1] : sq[i][g0];
        Value isum;
        if (wide) {
          // -o·Σq spread over the 8 lanes (o is a multiple of 8).
          isum = dot4(codes8, xv8[i], o8 ? splat(qsum * -int32_t(o8), 8) : splat(constant(i32, 0), 8));
        } else {
          // -o·Σq spread over the 4 lanes (o is a multiple of 4).
          isum = o4 ? splat(qsum * -int32_t(o4), 4) : splat(constant(i32, 0), 4);
          for (uint32_t gg = 0; gg < uint32_t(GU); ++gg) isum = dot4(codes[gg], xv[i * GU + gg], isum);
        }
        const int lanes = wide ? 8 : 4;
        Var& a = acc[i * R + r];
        Value scale = mline ? splat(extract(sd[i][r - r0], u), lanes) : dec[r].scale_line(u, lanes) * splat(dx[i][j], lanes);
        a = fma(cast(line(f32, lanes), isum), scale, a.get());
        if (probe().has_min() && !mline) {
          Var& ma = macc[i * R + r];
          ma = fma(dec[r].min_of(u), dx[i][j] * f(qsum), ma.get());
        }
      }
    }
  }
}

}  // namespace

ir::Kernel qgemv_x8_kernel(QFormat fmt, int rows, int mb, bool signed_q8, int prefetch, int step_blocks, bool wide_units,
                           bool seq_rows, bool prefetch_l1) {
  if (wide_units ? !has_wide_int8_gemv(fmt) : !has_int8_gemv(fmt))
    throw std::invalid_argument(std::string("no int8 GEMV for ") + info(fmt).name + (wide_units ? " in 16-lane units" : ""));
  if (signed_q8 && fmt != QFormat::Q8_0) throw std::invalid_argument("qgemv_x8_kernel: signed codes are Q8_0's");
  if (step_blocks != 1 && step_blocks != 2 && step_blocks != 4)
    throw std::invalid_argument("qgemv_x8_kernel: step_blocks is 1, 2 (pairs) or 4 (quads)");
  const bool nibble_blocks = fmt == QFormat::Q4_0 || fmt == QFormat::Q4_1 || fmt == QFormat::Q5_0 || fmt == QFormat::Q5_1;
  if (step_blocks > 1 && !nibble_blocks && !(step_blocks == 2 && fmt == QFormat::Q8_0))
    throw std::invalid_argument("qgemv_x8_kernel: block pairs are for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, quads for the first four");
  const X8GemvForm form{fmt, rows, mb, signed_q8, prefetch, step_blocks, wide_units, seq_rows, prefetch_l1};
  std::string name = std::string("quant_gemv_x8_") + info(fmt).name + "_r" + std::to_string(rows) + "_m" + std::to_string(mb) +
                     (signed_q8 ? "_s" : "") + prefetch_suffix(prefetch, prefetch_l1) +
                     (step_blocks > 1 ? "_p" + std::to_string(step_blocks) : "") + (wide_units ? "_w16" : "") +
                     (seq_rows ? "_seq" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    X8Gemv g(kb, form);
    if_(g.n0 + g.R <= g.N, [&] { g.emit(false); }).else_([&] { g.emit(true); });
  });
}

}  // namespace kgen::ops::quant
