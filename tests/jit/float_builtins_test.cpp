// Narrow-float conversions in JIT code: clang turns them into compiler-rt
// calls on hosts without the instructions (no AVX512-BF16: every f32 -> bf16;
// f64 -> f16 everywhere). They must link and round exactly as the IR says
// (ir/semantics.h: one rounding to nearest even, NaN stays NaN).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ir/semantics.h"
#include "jit/jit.h"

namespace {

using namespace kgen;

constexpr const char* kSource = R"(
extern "C" void convert(const float* f, const double* d, int n, unsigned short* f_bf16, unsigned short* f_f16,
                        unsigned short* d_bf16, unsigned short* d_f16, float* back_f16, float* back_bf16) {
  for (int i = 0; i < n; ++i) {
    __bf16 a = (__bf16)f[i]; _Float16 b = (_Float16)f[i]; __bf16 c = (__bf16)d[i]; _Float16 e = (_Float16)d[i];
    __builtin_memcpy(&f_bf16[i], &a, 2); __builtin_memcpy(&f_f16[i], &b, 2);
    __builtin_memcpy(&d_bf16[i], &c, 2); __builtin_memcpy(&d_f16[i], &e, 2);
    back_f16[i] = (float)b; back_bf16[i] = (float)a;
  }
}
)";

using ConvertFn = void (*)(const float*, const double*, int, uint16_t*, uint16_t*, uint16_t*, uint16_t*, float*,
                           float*);

bool same_value(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

}  // namespace

TEST_CASE("JIT code converts f32/f64 to bf16/f16 like the interpreter on this host") {
  // -O0 keeps every conversion a scalar call where the host lacks the
  // instruction; -O3 may vectorise: both must agree with the semantics.
  for (int opt : {0, 3}) {
    jit::JitOptions o;
    o.opt_level = opt;
    auto m = jit::compile_cpp(kSource, o);
    auto fn = reinterpret_cast<ConvertFn>(m->lookup("convert"));

    std::vector<double> d = {0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 65519.99, 1e-8, -1e-8, 5.960464477539063e-08,
                             2.9802322387695312e-08, 2.98023223876953126e-08, 3.0e38, 3.4e38, 3.5e38, 1e300, -1e300,
                             1e-300, 1.00390625, 1.01171875, 1.0039062500001, 1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min()};
    std::mt19937_64 rng(opt + 12345);
    std::uniform_real_distribution<double> mant(1.0, 2.0);
    std::uniform_int_distribution<int> ex(-150, 140);
    for (int i = 0; i < 20000; ++i) d.push_back((rng() & 1 ? -1 : 1) * std::ldexp(mant(rng), ex(rng)));
    // Random bit patterns hit ties, subnormals and NaN payloads.
    for (int i = 0; i < 20000; ++i) d.push_back(double(std::bit_cast<float>(uint32_t(rng()))));
    std::vector<float> f(d.size());
    for (size_t i = 0; i < d.size(); ++i) f[i] = float(d[i]);
    const int n = int(d.size());
    std::vector<uint16_t> f_bf16(n), f_f16(n), d_bf16(n), d_f16(n);
    std::vector<float> back_f16(n), back_bf16(n);
    fn(f.data(), d.data(), n, f_bf16.data(), f_f16.data(), d_bf16.data(), d_f16.data(), back_f16.data(), back_bf16.data());

    int bad = 0;
    for (int i = 0; i < n && bad < 5; ++i) {
      const float want_f_bf16 = float(ir::sem_cast<ir::BFloat16>(f[i]));
      const float want_f_f16 = float(ir::sem_cast<ir::Half>(f[i]));
      const float want_d_bf16 = float(ir::sem_cast<ir::BFloat16>(d[i]));
      const float want_d_f16 = float(ir::sem_cast<ir::Half>(d[i]));
      const bool ok = same_value(ir::bf16_to_f32(f_bf16[i]), want_f_bf16) &&
                      same_value(ir::f16_to_f32(f_f16[i]), want_f_f16) &&
                      same_value(ir::bf16_to_f32(d_bf16[i]), want_d_bf16) &&
                      same_value(ir::f16_to_f32(d_f16[i]), want_d_f16) && same_value(back_f16[i], want_f_f16) &&
                      same_value(back_bf16[i], want_f_bf16);
      if (!ok) {
        ++bad;
        INFO("opt " << opt << " input " << d[i] << " (float " << f[i] << ")");
        CHECK(same_value(ir::bf16_to_f32(f_bf16[i]), want_f_bf16));
        CHECK(same_value(ir::f16_to_f32(f_f16[i]), want_f_f16));
        CHECK(same_value(ir::bf16_to_f32(d_bf16[i]), want_d_bf16));
        CHECK(same_value(ir::f16_to_f32(d_f16[i]), want_d_f16));
        CHECK(same_value(back_f16[i], want_f_f16));
        CHECK(same_value(back_bf16[i], want_f_bf16));
      }
    }
    CHECK(bad == 0);
  }
}
