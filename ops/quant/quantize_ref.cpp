// GGML's reference quantizers (ggml-quants.c, quantize_row_*_ref): what
// llama.cpp's quantize tool writes when it has no importance matrix. Each is
// a transcription that keeps GGML's order of operations, its float/int
// conversions and its tie breaks, so the bytes are identical, not merely
// close: the searches below compare sums of products, and one rounding
// difference can flip a choice and with it a whole sub-block's codes.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/quant/formats.h"

// No a·b + c contracted into one fma: it rounds once instead of twice, which
// flips some of the searches' choices (on x86-64 GGML's portable build does
// not contract either; a -march=native build of it gives other Q2_K and
// Q4_K bytes). These bytes then stay the same whatever -march allows.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace kgen::ops::quant {

namespace {

constexpr int kQK = 256;                 // QK_K: elements per super-block
constexpr float kGroupMaxEps = 1e-15f;   // GROUP_MAX_EPS: a group below it is all zero

void put_half(uint8_t* p, float v) {
  const uint16_t h = float_to_half(v);
  p[0] = uint8_t(h);
  p[1] = uint8_t(h >> 8);
}
float get_half(const uint8_t* p) { return half_to_float(uint16_t(p[0] | (p[1] << 8))); }

// Round to nearest, ties to even, for |f| < 2^22: adding 1.5·2^23 leaves the
// integer in the low mantissa bits (GGML's nearest_int, the same bits for
// out-of-range inputs too).
int nearest_int(float f) {
  const float v = f + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

// The element of largest magnitude (the first one on ties), with its sign.
float signed_amax(int n, const float* x) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  return max;
}

// make_qx_quants(n, nmax, x, L, rmse_type = 1, qw = NULL): a symmetric scale
// for codes in [-nmax, nmax), weights x², refined over 18 trial scales
// around nmax/max. L receives the codes plus nmax; returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  const float max = signed_amax(n, x), amax = std::fabs(max);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.f;
  }
  float iscale = float(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = int8_t(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i)
        L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// make_q3_quants(n, nmax, x, L, do_rmse = true): codes in [-nmax, nmax)
// from nmax/max, then up to 5 passes that move single codes while the
// weighted (x²) least-squares fit improves. L receives codes plus nmax.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  const float max = signed_amax(n, x), amax = std::fabs(max);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.f;
  }
  const float iscale = float(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * float(L[i]) * float(L[i]);
        const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
        if (new_l != L[i]) {
          slx += w * x[i] * float(new_l);
          sl2 += w * float(new_l) * float(new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qkx2_quants: an asymmetric fit x ≈ scale·L - the_min with codes in
// [0, nmax] and the_min ≥ 0, the best (weighted squared or absolute error)
// of nstep + 1 trial scales (rmin + rdelta·is + nmax)/(max - min), each
// refit by weighted least squares. Returns the scale.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t(0));
    *the_min = -min;
    return 0.f;
  }
  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = uint8_t(std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min)))));
    float diff = scale * float(L[i]) + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * float(Laux[i]) + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Q4_K/Q5_K's 12 packed bytes: 6-bit scale and min of sub-block j.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void set_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* s) {
  if (j < 4) {
    s[j] = ls;
    s[j + 4] = lm;
  } else {
    s[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
    s[j - 4] |= uint8_t((ls >> 4) << 6);
    s[j] |= uint8_t((lm >> 4) << 6);
  }
}

// Two-bit codes L (256) into 64 bytes: byte 32h + l holds elements
// 128h + l + 32s in bits 2s (Q2_K's and Q3_K's qs).
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// The sub-block fits of Q4_K / Q5_K (make_qkx2_quants per 32 elements,
// weights rms + |x|), their scales and mins to 6 bits under the f16 d and
// dmin, then the codes again against the rounded scales. Writes d, dmin and
// the 12 scale bytes at blk; returns the codes in L.
void fit_k4_scales(const float* x, int nmax, float rmin, float rdelta, int nstep, uint8_t* blk, uint8_t* L) {
  uint8_t Laux[32];
  float weights[32], mins[kQK / 32], scales[kQK / 32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQK / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t* sc = blk + 4;
  for (int j = 0; j < kQK / 32; ++j) {
    const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
    set_scale_min_k4(j, ls, lm, sc);
  }
  put_half(blk, max_scale / 63.f);
  put_half(blk + 2, max_min / 63.f);
  for (int j = 0; j < kQK / 32; ++j) {
    uint8_t s, m;
    get_scale_min_k4(j, sc, s, m);
    const float d = get_half(blk) * float(s);
    if (d == 0) continue;
    const float dm = get_half(blk + 2) * float(m);
    for (int ii = 0; ii < 32; ++ii)
      L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[32 * j + ii] + dm) / d))));
  }
}

// The 16 signed Q3_K scales (6 bits, biased by 32) into 12 bytes.
void pack_q3k_scales(const int8_t* ls, uint8_t* s) {
  std::memset(s, 0, 12);
  for (int j = 0; j < kQK / 16; ++j) {
    int l = ls[j];
    if (j < 8)
      s[j] = uint8_t(l & 0xF);
    else
      s[j - 8] |= uint8_t((l & 0xF) << 4);
    l >>= 4;
    s[j % 4 + 8] |= uint8_t(l << (2 * (j / 4)));
  }
}

}  // namespace

void quantize_q4_1_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 20) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 15, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    put_half(dst + 2, min);
    for (int j = 0; j < 16; ++j) {
      const int q0 = std::min(15, int(int8_t((x[j] - min) * id + 0.5f)));
      const int q1 = std::min(15, int(int8_t((x[j + 16] - min) * id + 0.5f)));
      dst[4 + j] = uint8_t(q0 | (q1 << 4));
    }
  }
}

void quantize_q5_0_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 22) {
    float amax = 0, max = 0;  // the first element of largest magnitude, with its sign
    for (int j = 0; j < 32; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -16, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      const uint8_t q0 = uint8_t(std::min(31, int(int8_t(x[j] * id + 16.5f))));
      const uint8_t q1 = uint8_t(std::min(31, int(int8_t(x[j + 16] * id + 16.5f))));
      dst[6 + j] = uint8_t((q0 & 0xF) | ((q1 & 0xF) << 4));
      qh |= uint32_t((q0 & 0x10u) >> 4) << j;
      qh |= uint32_t((q1 & 0x10u) >> 4) << (j + 16);
    }
    std::memcpy(dst + 2, &qh, 4);
  }
}

void quantize_q5_1_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 24) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 31, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    put_half(dst + 2, min);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      const uint8_t q0 = uint8_t((x[j] - min) * id + 0.5f);  // GGML does not clamp here
      const uint8_t q1 = uint8_t((x[j + 16] - min) * id + 0.5f);
      dst[8 + j] = uint8_t((q0 & 0xF) | ((q1 & 0xF) << 4));
      qh |= uint32_t((q0 & 0x10u) >> 4) << j;
      qh |= uint32_t((q1 & 0x10u) >> 4) << (j + 16);
    }
    std::memcpy(dst + 4, &qh, 4);
  }
}

void quantize_q2_K_ref(const float* x, uint8_t* dst, int64_t n) {
  constexpr float q4scale = 15.f;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += 84) {
    uint8_t L[kQK], Laux[16];
    float weights[16], mins[kQK / 16], scales[kQK / 16];
    uint8_t* sc = dst;
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < kQK / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < kQK / 16; ++j) sc[j] = uint8_t(nearest_int(iscale * scales[j]));
      put_half(dst + 80, max_scale / q4scale);
    } else {
      std::memset(sc, 0, kQK / 16);
      put_half(dst + 80, 0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < kQK / 16; ++j) sc[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
      put_half(dst + 82, max_min / q4scale);
    } else {
      put_half(dst + 82, 0.f);
    }
    for (int j = 0; j < kQK / 16; ++j) {
      const float d = get_half(dst + 80) * float(sc[j] & 0xF);
      if (d == 0) continue;  // keeps the fit's codes, as GGML does
      const float dm = get_half(dst + 82) * float(sc[j] >> 4);
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = uint8_t(std::max(0, std::min(3, nearest_int((x[16 * j + ii] + dm) / d))));
    }
    pack_2bit(L, dst + 16);
  }
}

void quantize_q3_K_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += 110) {
    int8_t L[kQK];
    float scales[kQK / 16];
    uint8_t* hmask = dst;
    uint8_t* sc = dst + 96;
    float max_scale = 0, amax = 0;
    for (int j = 0; j < kQK / 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
      const float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      int8_t ls[kQK / 16];
      for (int j = 0; j < kQK / 16; ++j) {
        const int8_t l = int8_t(nearest_int(iscale * scales[j]));  // GGML narrows before clamping
        ls[j] = int8_t(std::max(-32, std::min(31, int(l))) + 32);
      }
      pack_q3k_scales(ls, sc);
      put_half(dst + 108, 1 / iscale);
    } else {
      std::memset(sc, 0, 12);
      put_half(dst + 108, 0.f);
    }
    for (int j = 0; j < kQK / 16; ++j) {
      int s = j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4;
      s = (s | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
      const float d = get_half(dst + 108) * float(s);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = int8_t(std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d))) + 4);
    }
    // The high bit of element j goes to hmask[j % 32], bit j / 32.
    std::memset(hmask, 0, kQK / 8);
    uint8_t low[kQK];
    for (int j = 0; j < kQK; ++j) {
      int l = L[j];
      if (l > 3) {
        hmask[j % 32] |= uint8_t(1 << (j / 32));
        l -= 4;
      }
      low[j] = uint8_t(l);
    }
    pack_2bit(low, dst + 32);
  }
}

void quantize_q4_K_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += 144) {
    uint8_t L[kQK];
    fit_k4_scales(x, 15, -1.f, 0.1f, 20, dst, L);
    uint8_t* q = dst + 16;
    for (int j = 0; j < kQK; j += 64, q += 32)
      for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
  }
}

void quantize_q5_K_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += 176) {
    uint8_t L[kQK];
    fit_k4_scales(x, 31, -0.5f, 0.1f, 15, dst, L);
    uint8_t* qh = dst + 16;
    uint8_t* ql = dst + 48;
    std::memset(qh, 0, kQK / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int n0 = 0; n0 < kQK; n0 += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n0 + j], l2 = L[n0 + j + 32];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] |= m1;
        }
        if (l2 > 15) {
          l2 -= 16;
          qh[j] |= m2;
        }
        ql[j] = uint8_t(l1 | (l2 << 4));
      }
    }
  }
}

void quantize_q6_K_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += 210) {
    int8_t L[kQK];
    float scales[kQK / 16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < kQK / 16; ++ib) {
      scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      const float abs_scale = std::fabs(scales[ib]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(dst, 0, 210);
      continue;
    }
    auto* sc = reinterpret_cast<int8_t*>(dst + 192);
    const float iscale = -128.f / max_scale;
    put_half(dst + 208, 1 / iscale);
    for (int ib = 0; ib < kQK / 16; ++ib) sc[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < kQK / 16; ++j) {
      const float d = get_half(dst + 208) * float(sc[j]);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = int8_t(std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d))) + 32);
    }
    uint8_t* ql = dst;
    uint8_t* qh = dst + 128;
    for (int j = 0; j < kQK; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
        ql[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

void quantize_ref(QFormat f, const float* x, uint8_t* dst, int64_t n) {
  if (n % info(f).block_elems != 0)
    throw std::invalid_argument(std::string("quantize_ref: ") + std::to_string(n) + " elements are not whole " +
                                info(f).name + " blocks");
  switch (f) {
    case QFormat::Q4_0: return quantize_q4_0_ref(x, dst, n);
    case QFormat::Q4_1: return quantize_q4_1_ref(x, dst, n);
    case QFormat::Q5_0: return quantize_q5_0_ref(x, dst, n);
    case QFormat::Q5_1: return quantize_q5_1_ref(x, dst, n);
    case QFormat::Q8_0: return quantize_q8_0_ref(x, dst, n);
    case QFormat::Q2_K: return quantize_q2_K_ref(x, dst, n);
    case QFormat::Q3_K: return quantize_q3_K_ref(x, dst, n);
    case QFormat::Q4_K: return quantize_q4_K_ref(x, dst, n);
    case QFormat::Q5_K: return quantize_q5_K_ref(x, dst, n);
    case QFormat::Q6_K: return quantize_q6_K_ref(x, dst, n);
  }
  throw std::invalid_argument("quantize_ref: unknown format");
}

}  // namespace kgen::ops::quant
