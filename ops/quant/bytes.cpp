// Reading packed GGML blocks inside kernels: bytes (from u8 buffers or u32
// words), halves, and every format's element formula.
#include <stdexcept>

#include "ops/quant/kernels.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

Value PackedBytes::byte(const Value& off) const {
  if (!words) return cast(u32, buf[off]);
  return (Value(buf[off >> 2u]) >> ((off & 3u) * 8u)) & 0xFFu;
}

Value PackedBytes::sbyte(const Value& off) const {
  // Sign-extend through the top of an i32: (b << 24) >> 24 (arithmetic).
  return bitcast(i32, byte(off) << 24u) >> 24;
}

Value PackedBytes::half(const Value& off) const {
  if (!words && native_f16) {
    // One 16-bit load (64-bit offsets: `off + 1` cannot wrap, so clang sees
    // two adjacent bytes) and a scalar vcvtsh2ss.
    const Array& b = buf;
    Value o = cast(u64, off);
    return cast(f32, bitcast(f16, make_line(b[o], b[o + 1u])));
  }
  Value bits = words ? (Value(buf[off >> 2u]) >> ((off & 2u) * 8u)) & 0xFFFFu : byte(off) | (byte(off + 1u) << 8u);
  if (native_f16) return cast(f32, bitcast(f16, cast(u16, bits)));
  return half_bits_to_f32(bits);
}

Value PackedBytes::u32le(const Value& off) const {
  if (!words && native_f16) {
    // One 32-bit load, as half() does: 64-bit offsets make the four bytes
    // provably adjacent (with u32 offsets clang assembled the word from byte
    // loads, shifts and inserts).
    const Array& b = buf;
    Value o = cast(u64, off);
    return bitcast(u32, make_line(b[o], b[o + 1u], b[o + 2u], b[o + 3u]));
  }
  if (!words) return byte(off) | (byte(off + 1u) << 8u) | (byte(off + 2u) << 16u) | (byte(off + 3u) << 24u);
  // Even offset: either word-aligned or the top half of one word and the
  // bottom half of the next. Both words are read (a select, no branch); the
  // second index is clamped to the first so it stays in bounds.
  Value w0 = buf[off >> 2u];
  Value odd = (off & 2u) != 0u;
  Value w1 = buf[(off >> 2u) + select(odd, 1u, 0u)];
  return select(odd, (w0 >> 16u) | (w1 << 16u), w0);
}

Value PackedBytes::line16(const Value& off) const {
  if (words) throw std::invalid_argument("PackedBytes::line16 needs a u8 buffer");
  // Blocks are only 2-byte aligned, so a u8x16 buffer cannot index them.
  return load_line(buf, off);
}

Value PackedBytes::half_splat(const Value& off, int lanes) const {
  if (words || !native_f16) return splat(half(off), lanes);
  // One 16-bit load, broadcast as f16 and widened as a line (vpbroadcastw +
  // vcvtph2ps) instead of a scalar conversion and a broadcast.
  const Array& b = buf;
  Value o = cast(u64, off);
  Value h = bitcast(f16, make_line(b[o], b[o + 1u]));
  return cast(line(f32, lanes), splat(h, lanes));
}

Value half_bits_to_f32(const Value& h) {
  Value sign = (h & 0x8000u) << 16u;
  Value e = (h >> 10u) & 0x1Fu;
  Value m = h & 0x3FFu;
  Value normal = bitcast(f32, sign | ((e + 112u) << 23u) | (m << 13u));
  Value special = bitcast(f32, sign | 0x7F800000u | (m << 13u));  // Inf, NaN
  Value sub = cast(f32, m) * 5.9604644775390625e-08f;             // m·2^-24, exact
  sub = select(sign != 0u, -sub, sub);
  return select(e == 0u, sub, select(e == 31u, special, normal));
}

Value f32_to_half_bits(const Value& x) {
  Value b = bitcast(u32, x);
  Value sign = (b >> 16u) & 0x8000u;
  Value a = b & 0x7FFFFFFFu;
  // Normal range: drop 13 mantissa bits with round to nearest even.
  Value r = a - 0x38000000u;
  Value rem = r & 0x1FFFu;
  Value up = (rem > 0x1000u) || ((rem == 0x1000u) && ((r & 0x2000u) != 0u));
  Value normal = (r >> 13u) + select(up, 1u, 0u);
  // Below 2^-14: m·2^24 rounded to an integer (round is ties-to-even).
  Value sub = cast(u32, round(bitcast(f32, a) * 16777216.0f));
  Value v = select(a < 0x38800000u, sub, normal);
  v = select(a >= 0x477FF000u, 0x7C00u, v);                     // overflow to Inf (and Inf)
  v = select(a > 0x7F800000u, 0x7E00u, v);                      // NaN
  return sign | v;
}

namespace {

Value f(const Value& v) { return cast(f32, v); }

// Q4_K / Q5_K: scale and min of sub-block sb (u32 0..7) from 12 bytes at s.
void scale_min_k4(const PackedBytes& w, const Value& s, const Value& sb, Value& sc, Value& m) {
  Value j = sb & 3u;
  Value A = w.byte(s + j), B = w.byte(s + j + 4u), C = w.byte(s + j + 8u);
  Value low = sb < 4u;
  sc = select(low, A & 63u, (C & 15u) | ((A >> 6u) << 4u));
  m = select(low, B & 63u, (C >> 4u) | ((B >> 6u) << 4u));
}

}  // namespace

Value dequant_element(QFormat fmt, const PackedBytes& w, const Value& base, const Value& e) {
  switch (fmt) {
    case QFormat::Q4_0: {
      Value q = (w.byte(base + 2u + (e & 15u)) >> ((e >> 4u) * 4u)) & 15u;
      return f(bitcast(i32, q) - 8) * w.half(base);
    }
    case QFormat::Q4_1: {
      Value q = (w.byte(base + 4u + (e & 15u)) >> ((e >> 4u) * 4u)) & 15u;
      return f(q) * w.half(base) + w.half(base + 2u);
    }
    case QFormat::Q5_0: {
      Value q = ((w.byte(base + 6u + (e & 15u)) >> ((e >> 4u) * 4u)) & 15u) | (((w.u32le(base + 2u) >> e) & 1u) << 4u);
      return f(bitcast(i32, q) - 16) * w.half(base);
    }
    case QFormat::Q5_1: {
      Value q = ((w.byte(base + 8u + (e & 15u)) >> ((e >> 4u) * 4u)) & 15u) | (((w.u32le(base + 4u) >> e) & 1u) << 4u);
      return f(q) * w.half(base) + w.half(base + 2u);
    }
    case QFormat::Q8_0: return f(w.sbyte(base + 2u + e)) * w.half(base);
    case QFormat::Q2_K: {
      Value h = e >> 7u, j = (e >> 5u) & 3u, l = e & 31u;
      Value sc = w.byte(base + h * 8u + j * 2u + (l >> 4u));
      Value q = (w.byte(base + 16u + h * 32u + l) >> (j * 2u)) & 3u;
      Value dl = w.half(base + 80u) * f(sc & 15u), ml = w.half(base + 82u) * f(sc >> 4u);
      return dl * f(q) - ml;
    }
    case QFormat::Q3_K: {
      Value h = e >> 7u, j = (e >> 5u) & 3u, l = e & 31u;
      Value is = h * 8u + j * 2u + (l >> 4u);
      Value hbit = (w.byte(base + l) >> (h * 4u + j)) & 1u;
      Value q = bitcast(i32, (w.byte(base + 32u + h * 32u + l) >> (j * 2u)) & 3u) - select(hbit != 0u, 0, 4);
      Value lo = (w.byte(base + 96u + (is & 7u)) >> ((is >> 3u) * 4u)) & 15u;
      Value hi = (w.byte(base + 104u + (is & 3u)) >> ((is >> 2u) * 2u)) & 3u;
      Value sc = bitcast(i32, lo | (hi << 4u)) - 32;
      return (w.half(base + 108u) * f(sc)) * f(q);
    }
    case QFormat::Q4_K:
    case QFormat::Q5_K: {
      bool five = fmt == QFormat::Q5_K;
      Value c = e >> 6u, hi = (e >> 5u) & 1u, l = e & 31u;
      Value sb = c * 2u + hi;
      Value sc, m;
      scale_min_k4(w, base + 4u, sb, sc, m);
      Value q = (w.byte(base + (five ? 48u : 16u) + c * 32u + l) >> (hi * 4u)) & 15u;
      if (five) q = q + (((w.byte(base + 16u + l) >> sb) & 1u) << 4u);
      return (w.half(base) * f(sc)) * f(q) - w.half(base + 2u) * f(m);
    }
    case QFormat::Q6_K: {
      Value h = e >> 7u, t = (e >> 5u) & 3u, l = e & 31u;
      Value lo = (w.byte(base + h * 64u + (t & 1u) * 32u + l) >> ((t >> 1u) * 4u)) & 15u;
      Value hb = (w.byte(base + 128u + h * 32u + l) >> (t * 2u)) & 3u;
      Value q = bitcast(i32, lo | (hb << 4u)) - 32;
      Value sc = w.sbyte(base + 192u + h * 8u + (l >> 4u) + t * 2u);
      return (w.half(base + 208u) * f(sc)) * f(q);
    }
  }
  throw std::invalid_argument("dequant_element: unknown format");
}

}  // namespace kgen::ops::quant
