#include "ops/quant/lines.h"

#include <stdexcept>

namespace kgen::ops::quant {

using namespace kgen::dsl;

namespace {
const Type kF16x = line(f32, 16);
Value f(const Value& v) { return cast(f32, v); }
Value fl(const Value& v) { return cast(kF16x, v); }
Value sp(const Value& s) { return splat(s, 16); }
Value as_i8(const Value& v) { return bitcast(line(i8, 16), v); }
}  // namespace

bool has_line_decoder(QFormat fmt) {
  switch (fmt) {
    case QFormat::Q4_0: case QFormat::Q4_1: case QFormat::Q5_0: case QFormat::Q5_1: case QFormat::Q8_0:
    case QFormat::Q2_K: case QFormat::Q3_K: case QFormat::Q4_K: case QFormat::Q5_K: case QFormat::Q6_K: return true;
    default: return false;
  }
}

// The two qh bytes of the group broadcast over 8 lanes each by a byte
// permute (vpshufb), one bit tested per lane.
Value q5_high_bits(const Value& qh, uint32_t g) {
  std::vector<Value> index, bits;
  for (uint32_t l = 0; l < 16; ++l) {
    index.push_back(constant(u8, 2 * g + l / 8));
    bits.push_back(constant(u8, 1u << (l % 8)));
  }
  Value bytes = permute_bytes(qh, qh, make_line(index));
  Value set = (bytes & make_line(bits)) != splat(constant(u8, 0), 16);
  return select(set, splat(constant(u8, 0x10), 16), splat(constant(u8, 0), 16));
}

BlockLines::BlockLines(QFormat fmt, const PackedBytes& w) : f_(fmt), w_(w) {
  if (!has_line_decoder(fmt)) throw std::invalid_argument(std::string("no line decoder for ") + info(fmt).name);
}

void BlockLines::load(const Value& base) {
  base_ = base;
  s_.clear();
  switch (f_) {
    case QFormat::Q4_0: {
      Value d = w_.half_splat(base);
      s_ = {d, d * -8.0f};  // (q - 8)·d = fma(q, d, -8d): exact product, one rounding, as GGML
      break;
    }
    case QFormat::Q8_0: s_ = {w_.half_splat(base)}; break;
    case QFormat::Q4_1: s_ = {w_.half_splat(base), w_.half_splat(base + 2u)}; break;
    case QFormat::Q5_0: {
      Value d = w_.half_splat(base);
      s_ = {d, d * -16.0f, w_.u32le(base + 2u)};  // (u - 16)·d = fma(u, d, -16d), as Q4_0
      break;
    }
    case QFormat::Q5_1: s_ = {w_.half_splat(base), w_.half_splat(base + 2u), w_.u32le(base + 4u)}; break;
    case QFormat::Q2_K: {
      // Per group of 16 (its scale byte): d·(sc & 15) and dmin·(sc >> 4), GGML's roundings.
      Value d = w_.half(base + 80u), dmin = w_.half(base + 82u);
      for (uint32_t g = 0; g < 16; ++g) {
        Value sc = w_.byte(base + g);
        s_.push_back(sp(d * f(sc & 15u)));
        s_.push_back(sp(dmin * f(sc >> 4u)));
      }
      break;
    }
    case QFormat::Q3_K: {
      // d·(sc - 32) per group of 16: the 6-bit scales' low nibbles in bytes
      // 0-7 (groups 8-15 the high nibbles), their top 2 bits in bytes 8-11.
      Value d = w_.half(base + 108u);
      for (uint32_t g = 0; g < 16; ++g) {
        Value lo = g < 8 ? w_.byte(base + 96u + g) & 15u : w_.byte(base + 96u + g - 8u) >> 4u;
        Value hi = (w_.byte(base + 104u + g % 4) >> (2u * (g / 4))) & 3u;
        s_.push_back(sp(d * f(bitcast(i32, lo | (hi << 4u)) - 32)));
      }
      break;
    }
    case QFormat::Q4_K: case QFormat::Q5_K: {
      // d·sc and dmin·m of the 8 sub-blocks (6-bit fields, see scale_min_k4
      // in ops/quant/formats.cpp), sub-block index known here: no selects.
      Value d = w_.half(base), dmin = w_.half(base + 2u);
      for (uint32_t j = 0; j < 8; ++j) {
        Value sc, m;
        if (j < 4) {
          sc = w_.byte(base + 4u + j) & 63u;
          m = w_.byte(base + 8u + j) & 63u;
        } else {
          Value c = w_.byte(base + 8u + j);
          sc = (c & 15u) | ((w_.byte(base + j) >> 6u) << 4u);
          m = (c >> 4u) | ((w_.byte(base + 4u + j) >> 6u) << 4u);
        }
        s_.push_back(sp(d * f(sc)));
        s_.push_back(sp(-(dmin * f(m))));
      }
      break;
    }
    case QFormat::Q6_K: {
      Value d = w_.half(base + 208u);
      for (uint32_t i = 0; i < 16; ++i) s_.push_back(sp(d * f(w_.sbyte(base + 192u + i))));
      break;
    }
    default: break;
  }
}

Value BlockLines::line(int g) {
  const uint32_t G = uint32_t(g);
  switch (f_) {
    case QFormat::Q4_0: {
      Value q = w_.line16(base_ + 2u);
      Value nib = g == 0 ? (q & 15u) : (q >> 4u);
      return fma(fl(nib), s_[0], s_[1]);
    }
    case QFormat::Q4_1: {
      Value q = w_.line16(base_ + 4u);
      Value nib = g == 0 ? (q & 15u) : (q >> 4u);
      return fl(nib) * s_[0] + s_[1];
    }
    case QFormat::Q8_0: return fl(as_i8(w_.line16(base_ + 2u + 16u * G))) * s_[0];
    case QFormat::Q5_0: case QFormat::Q5_1: {
      const bool q51 = f_ == QFormat::Q5_1;
      Value q = w_.line16(base_ + (q51 ? 8u : 6u));
      Value u = (g == 0 ? (q & 15u) : (q >> 4u)) | q5_high_bits(s_[2], G);
      return q51 ? fl(u) * s_[0] + s_[1] : fma(fl(u), s_[0], s_[1]);
    }
    case QFormat::Q2_K: case QFormat::Q3_K: {
      // Group g: half h = g / 8, shift 2j (j = (g % 8) / 2), bytes 16·(g % 2)
      // of the half's 32 (GGML's loops over n, j, l).
      const uint32_t h = G / 8, j = (G % 8) / 2, half = G % 2;
      const bool q3 = f_ == QFormat::Q3_K;
      Value q = (w_.line16(base_ + (q3 ? 32u : 16u) + 32u * h + 16u * half) >> (2u * j)) & 3u;
      if (!q3) return fl(q) * s_[2 * G] - s_[2 * G + 1];
      // q - 4 where the hmask bit (bit 4h + j of byte 16·half + l) is clear.
      Value hb = (w_.line16(base_ + 16u * half) >> (4u * h + j)) & 1u;
      return s_[G] * fl(as_i8((q | (hb << 2u)) - 4u));
    }
    case QFormat::Q4_K: case QFormat::Q5_K: {
      bool five = f_ == QFormat::Q5_K;
      uint32_t sb = G / 2, c = sb / 2, hi = sb & 1, half = G & 1;
      Value q = w_.line16(base_ + (five ? 48u : 16u) + c * 32u + half * 16u);
      Value nib = hi ? (q >> 4u) : (q & 15u);
      if (five) nib = nib + (((w_.line16(base_ + 16u + half * 16u) >> sb) & 1u) << 4u);
      // (d·sc)·q - dmin·m with one rounding (GGML rounds the product too:
      // the weights may differ from dequantize_ref by one ulp of the product).
      return fma(fl(nib), s_[2 * sb], s_[2 * sb + 1]);
    }
    case QFormat::Q6_K: {
      uint32_t h = G / 8, t = (G % 8) / 2, half = G & 1;
      Value ql = w_.line16(base_ + h * 64u + (t & 1) * 32u + half * 16u);
      Value lo = t >= 2 ? (ql >> 4u) : (ql & 15u);
      Value hb = (w_.line16(base_ + 128u + h * 32u + half * 16u) >> (2 * t)) & 3u;
      Value q = as_i8((lo | (hb << 4u)) - 32u);
      return s_[h * 8 + half + 2 * t] * fl(q);
    }
    default: break;
  }
  throw std::invalid_argument("BlockLines::line: no line decoder");
}

}  // namespace kgen::ops::quant
