// GGML's reference quantizers (ops/quant/formats.h, quantize_*_ref): bytes
// identical to GGML's on inputs shaped to reach every branch, the round-trip
// error of each format on Gaussian weights, and the properties every format
// keeps (zeros stay zeros, scaling by a power of two commutes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/quant/formats.h"

using namespace kgen::ops::quant;

namespace {

// xorshift32 values k·2^-22 (|k| ≤ 2^22), shaped per 16-element group so
// that each super-block holds Gaussian-like groups of two magnitudes, an
// all-zero group, an all-positive one (Q*_1 and K-quant mins of 0), one
// with an outlier, an all-negative one, a tiny one and a constant one;
// super-blocks are scaled by 1, 2^-3, 2^2, 2^-8 in turn and the sixth of
// every eight is zero. Every operation is exact in f32, so the same floats
// come out of any compiler and library.
std::vector<float> shaped_input(uint32_t seed, int n) {
  static const float kSuperScale[4] = {1.0f, 0.125f, 4.0f, 1.0f / 256.0f};
  std::vector<float> x(n);
  uint32_t s = seed;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    const float v = float(int32_t(s >> 9) - (1 << 22)) * (1.0f / 4194304.0f);  // [-1, 1)
    float y;
    switch ((i / 16) % 8) {
      case 0: y = v * 0.0625f; break;
      case 1: y = v * 0.015625f; break;
      case 2: y = 0.0f; break;
      case 3: y = std::fabs(v) * 0.03125f + 0.03125f; break;
      case 4: y = v * 0.0625f * (i % 16 == 3 ? 16.0f : 1.0f); break;
      case 5: y = -std::fabs(v) * 0.125f; break;
      case 6: y = v * (1.0f / 1024.0f); break;
      default: y = 0.0625f; break;
    }
    const int sb = i / 256;
    x[i] = sb % 8 == 5 ? 0.0f : y * kSuperScale[sb % 4];
  }
  return x;
}

// Sums of four such values (bell-shaped, |x| < 4, still exact in f32),
// scaled by 2^-5 .. 2^-13 per 32 elements: many ordinary blocks, where the
// K-quant searches' late trial scales win now and then.
std::vector<float> bell_input(uint32_t seed, int n) {
  std::vector<float> x(n);
  uint32_t s = seed;
  for (int i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int r = 0; r < 4; ++r) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      sum += float(int32_t(s >> 9) - (1 << 22)) * (1.0f / 4194304.0f);
    }
    x[i] = sum * (0.03125f / float(1 << ((i / 32) % 9)));
  }
  return x;
}

uint64_t fnv1a(const std::vector<uint8_t>& b) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

std::vector<uint8_t> quantized(QFormat f, const std::vector<float>& x) {
  std::vector<uint8_t> q(packed_bytes(f, 1, int64_t(x.size())), 0xA5);
  quantize_ref(f, x.data(), q.data(), int64_t(x.size()));
  return q;
}

std::vector<float> round_trip(QFormat f, const std::vector<float>& x) {
  const std::vector<uint8_t> q = quantized(f, x);
  std::vector<float> y(x.size());
  dequantize_ref(f, q.data(), y.data(), int64_t(x.size()) / info(f).block_elems);
  return y;
}

std::vector<float> gaussian(uint32_t seed, int n, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = nd(rng);
  return x;
}

// Reference bytes of shaped_input(0x9E3779B9, 4096): the FNV-1a hash of
// the whole output and the leading bytes (4 blocks, or 1 super-block).
// Q4_0..Q8_0: gguf-py 0.19.0's numpy quantizers (gguf.quants.quantize),
// which ggml-quants.c's quantize_row_*_ref reproduces byte for byte.
// Q2_K..Q6_K (gguf-py has no K-quant quantizer): ggml-quants.c's
// quantize_row_q*_K_ref at llama.cpp commit 01243c587fec, compiled on its
// own with gcc -O2 for x86-64, which contracts nothing into fma (an
// fma-contracting build, e.g. -march=native, changes Q2_K and Q4_K bytes).
// The same sources give the hashes of bell_input(0x2545F491, 65536).
struct Expected {
  QFormat format;
  uint64_t hash;
  const char* head;
};
const Expected kExpected[] = {
    {QFormat::Q4_0, 0xb2990a1898699343ull,
     "e81f658e68a08e9f8c6f9b7b927fa7a49184819f4818383808282848083808383838382851aa8997889098a797979888"
     "8799988888a700a008080808080808080808080808080808",
    },
    {QFormat::Q4_1, 0x261ce23401d3d283ull,
     "3120e8ab657d67908e8f7b6f8a6b917f96948184011c000080d0a0a0f0b0c080f090f09090a090c05e287eaf3224342f"
     "230424251433352224343304551ce393f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0",
    },
    {QFormat::Q5_0, 0x4fb508c0a512b36bull,
     "e81bf20b7af5ca0ccf400d1f07cf25e733ef4e491108819bffff00007020505000403070006000606050604051a6154b"
     "ffff012f1010215f3f2e30101e123f1f005f009cffff000000000000000000000000000000000000",
    },
    {QFormat::Q5_1, 0xab815a92111ecaffull,
     "0e1ce8abf20b38f5cafbcf300c1ff7cf15d623ef3d391108bf1700000000ffff10b04050e0809010f030e04030503080"
     "3a247eaf080000007549675f4609395a37666a55386867093118e3930000fffff0f1f1f0f0f0f0f1f0f1f0f1f1f0f1f0",
    },
    {QFormat::Q8_0, 0xd5e1b85d6105e8c8ull,
     "f80fd161fc81677a3a7d29369a7aeec78cc4e4fee41e0109fee10dec14f41e1f0b01900f000000000000000000000000"
     "00000000457054567d6166467f4f7c504f544e635d1af509017ff809081201fc11f207070008fdf0fcf6f0dcecf4e9fa"
     "f8f6ebf8fcda0810fe0100fffeffff01ff01fe02010001007f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f",
    },
    {QFormat::Q2_K, 0xc39831af2e42ed7aull,
     "742100025ff300027421000284f300020183417003430293028210c381418041f8eef8fbeecaeaf8eef9fff9ebfbfaca"
     "7152d35191e2d1409071238063e261c2deecf8daeaeadfcde9fafaebfecadedef8201420",
    },
    {QFormat::Q3_K, 0xb263cd144eb93089ull,
     "5c0585189dcd9d119d55489545cc548c14010411111111000110511051111511c383c041c343c2b3c141f10380028102"
     "0a2406362005243a113a323b2a360904b2b2a0b020d3a19323a16113c093d2d310203418262813012a35082702081411"
     "b61200bb60a900bb92aaaa554f1a",
    },
    {QFormat::Q4_K, 0x63b6593bf1619d66ull,
     "5d10ed170f087f085f00f900cf08f808050d07000e0f0b0f0a0b010f0604000476c79699d8a8b786e896d997999988b8"
     "0204030f030404050303050204040304f3f2f3f2f2f0f1f2f1f3f3f2f1f3f3f0030a0e070709040202050d000e080309"
     "d7d5b5979787d8e686a787b8e897c7e70e080708070a0706070c0c05090b0b05f3f5f8f2f6f4f2f0f5f7f9f4f9f1f2f2",
    },
    {QFormat::Q5_K, 0x1a587ada4872334full,
     "440cf6170f077f086000fa00be08f70840511044015101010141500150504010aaabeaabbbabbbaaabaaebbafbababab"
     "0a0c0f000d0f070f0507030f0e0901081cc05c64f081a02cf24df24e445441900509070f0509080a07060a0408080708"
     "e6e4e6e5e4e0e3e5e3e6e5e5e3e5e6e005050e0f0e040904040a0c000e010603afbb7b2e301eb1cc0d4f1f62d02e8fdf"
     "0f020f020f060f0c0f0b0a0a0409080be7ebe1e5ece9e4e0eaefe3e9e3e2e5e5",
    },
    {QFormat::Q6_K, 0x657d9715a41358dfull,
     "34e80f1129eeeecf0a1dc73eece204e1e43ed47d3129fe61ddbda474feaedb11f0d0a080b080502060c08010e000d000"
     "1f151c1b1218171f111d121c1d1b1d18e382007f01640b860639f41ee0cba156b213b98f3bef720e0486e2f7ed4e8384"
     "d09080b040e010f0c0a000c0404030f01513181d1c1e1412101b1f19111d1711e1136180e393d253e222d02311912091"
     "101110131202011002101311031312023311d01192e1d2035332204350e163c102101001120103001512120312010202"
     "140500ed802600ecee0500ec142700ec8506",
    },
};

const std::pair<QFormat, uint64_t> kExpectedBell[] = {
    {QFormat::Q4_0, 0xc568b5d2a7d03325ull}, {QFormat::Q4_1, 0xd62f1efdb891605full},
    {QFormat::Q5_0, 0x4d656e6913a2efd4ull}, {QFormat::Q5_1, 0xaaec03d59ce87d4bull},
    {QFormat::Q8_0, 0xaaf62d20cdeb2979ull}, {QFormat::Q2_K, 0x48b39084b3314c94ull},
    {QFormat::Q3_K, 0x715e6f5d50873695ull}, {QFormat::Q4_K, 0xcccb6559e0e01fc0ull},
    {QFormat::Q5_K, 0xaf8a1416a8ea50aaull}, {QFormat::Q6_K, 0x065910d1c8c43bf3ull},
};

}  // namespace

TEST_CASE("quantize_ref: the bytes equal GGML's on inputs that reach every branch") {
  const std::vector<float> x = shaped_input(0x9E3779B9u, 16 * 256);
  for (const Expected& e : kExpected) {
    CAPTURE(info(e.format).name);
    const std::vector<uint8_t> q = quantized(e.format, x);
    const std::string head = e.head;
    CHECK(hex(q.data(), head.size() / 2) == head);
    CHECK(fnv1a(q) == e.hash);
  }
  const std::vector<float> bell = bell_input(0x2545F491u, 256 * 256);
  for (const auto& [format, hash] : kExpectedBell) {
    CAPTURE(info(format).name);
    CHECK(fnv1a(quantized(format, bell)) == hash);
  }
}

// Relative RMS error sqrt(Σ(x - x̂)² / Σx²) and the largest |x - x̂| over
// the amax of its 32-element block, on N(0, 0.02²) weights (4 seeds x 64
// super-blocks). Measured worst over 20 seeds (libstdc++'s normal
// distribution): Q4_0 0.0868 / 0.125, Q4_1 0.0789 / 0.067, Q5_0 0.0433 /
// 0.062, Q5_1 0.0381 / 0.033, Q8_0 0.0054 / 0.0043, Q2_K 0.299 / 0.44,
// Q3_K 0.152 / 0.226, Q4_K 0.0721 / 0.108, Q5_K 0.0364 / 0.069, Q6_K
// 0.0180 / 0.020. The element bounds of the 32-blocks are GGML's design
// (|d| for Q4_0 and Q5_0, whose code opposite the extreme clamps; d/2 for
// the rest) plus the f16 rounding of the scales; the K-quant bounds are
// measured, with a margin.
TEST_CASE("quantize_ref: round trips of Gaussian weights stay within each format's error") {
  struct Bound {
    QFormat format;
    double rel_rms, max_over_amax;
  };
  const Bound bounds[] = {
      {QFormat::Q8_0, 0.006, 0.0045}, {QFormat::Q6_K, 0.020, 0.023}, {QFormat::Q5_1, 0.042, 0.035},
      {QFormat::Q5_K, 0.040, 0.076},  {QFormat::Q5_0, 0.048, 0.0635}, {QFormat::Q4_K, 0.080, 0.12},
      {QFormat::Q4_1, 0.087, 0.068},  {QFormat::Q4_0, 0.095, 0.1255}, {QFormat::Q3_K, 0.170, 0.25},
      {QFormat::Q2_K, 0.330, 0.48},
  };
  for (const Bound& b : bounds) {
    CAPTURE(info(b.format).name);
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(seed);
      const std::vector<float> x = gaussian(seed, 64 * 256, 0.02f);
      const std::vector<float> y = round_trip(b.format, x);
      double se = 0, sx = 0, worst = 0;
      for (size_t blk = 0; blk < x.size() / 32; ++blk) {
        float amax = 0;
        for (size_t i = 32 * blk; i < 32 * blk + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
        for (size_t i = 32 * blk; i < 32 * blk + 32; ++i) {
          const double e = double(x[i]) - double(y[i]);
          se += e * e;
          sx += double(x[i]) * double(x[i]);
          worst = std::max(worst, std::fabs(e) / amax);
        }
      }
      CHECK(std::sqrt(se / sx) < b.rel_rms);
      CHECK(worst < b.max_over_amax);
    }
  }
}

TEST_CASE("quantize_ref: more bits give smaller errors, K-quants against one another") {
  const std::vector<float> x = gaussian(7, 32 * 256, 1.0f);
  double last = 0;
  for (QFormat f : {QFormat::Q6_K, QFormat::Q5_K, QFormat::Q4_K, QFormat::Q3_K, QFormat::Q2_K}) {
    CAPTURE(info(f).name);
    const std::vector<float> y = round_trip(f, x);
    double se = 0;
    for (size_t i = 0; i < x.size(); ++i) se += double(x[i] - y[i]) * double(x[i] - y[i]);
    CHECK(se > 2.5 * last);  // one bit fewer: ~4x the squared error
    last = se;
  }
}

TEST_CASE("quantize_ref: zeros decode to zeros, and scaling by a power of two commutes") {
  for (const FormatInfo& fi : all_formats()) {
    CAPTURE(fi.name);
    const std::vector<float> zeros(512, 0.0f);
    for (float v : round_trip(fi.format, zeros)) CHECK(v == 0.0f);
    // x·2^k and x give the same codes, and scales 2^k apart: every step of
    // every search is exact under the scaling while the f16 scales stay
    // normal (x ~ N(0, 1): the smallest scale here is far above 2^-14).
    const std::vector<float> x = gaussian(11, 8 * 256, 1.0f);
    const std::vector<float> y = round_trip(fi.format, x);
    for (int k : {-3, 4}) {
      CAPTURE(k);
      std::vector<float> xs(x);
      for (float& v : xs) v = std::ldexp(v, k);
      const std::vector<float> ys = round_trip(fi.format, xs);
      int64_t differ = 0;
      for (size_t i = 0; i < x.size(); ++i) differ += ys[i] != std::ldexp(y[i], k);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("quantize_ref: a count that is not whole blocks is refused") {
  std::vector<float> x(300, 1.0f);
  std::vector<uint8_t> q(1024);
  CHECK_THROWS_AS(quantize_ref(QFormat::Q4_K, x.data(), q.data(), 300), std::invalid_argument);
  CHECK_THROWS_AS(quantize_ref(QFormat::Q8_0, x.data(), q.data(), 40), std::invalid_argument);
  CHECK_NOTHROW(quantize_ref(QFormat::Q8_0, x.data(), q.data(), 288));
}
