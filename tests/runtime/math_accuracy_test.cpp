// Accuracy sweep of the CPU prelude's inline f32 math (codegen/cpp_dialect.cpp,
// kHelpers) against the interpreter, i.e. glibc: each function is JIT-compiled as
// an elementwise kernel (the guarded loop the vectoriser if-converts) and run
// on a strided sweep of all f32 bit patterns plus special values, thresholds
// and dense ranges. Reports the max ulp error per function.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ir/interpreter.h"
#include "dsl/dsl.h"
#include "ops/elementwise/elementwise.h"
#include "ops/common/fast_math.h"
#include "runtimes/runtime.h"

using namespace kgen;

namespace {

rt::Device& cpu() {
  static std::unique_ptr<rt::Device> d = rt::create_device("cpu");
  return *d;
}

ir::LaunchDims dims_for(size_t n) {
  ir::LaunchDims d;
  d.workgroup = {256, 1, 1};
  d.grid = {uint32_t((n + 255) / 256), 1, 1};
  return d;
}

// Runs kernel k (inputs..., output) on the device and in the interpreter.
void run_both(const ir::Kernel& k, const std::vector<std::vector<float>>& in, std::vector<float>& got,
              std::vector<float>& ref) {
  const size_t n = in[0].size();
  std::vector<uint64_t> scalars = {ir::scalar_slot(uint32_t(n))};
  std::vector<std::vector<float>> host = in;
  host.emplace_back(n, std::numeric_limits<float>::quiet_NaN());
  std::vector<ir::InterpBuffer> ib;
  for (auto& b : host) ib.push_back({reinterpret_cast<uint8_t*>(b.data()), b.size() * 4});
  ir::interpret(k, dims_for(n), ib, scalars);
  ref = host.back();

  auto ck = cpu().compile(k);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::LaunchArgs args;
  args.dims = dims_for(n);
  args.scalars = scalars;
  for (size_t i = 0; i <= in.size(); ++i) {
    const std::vector<float>& src = i < in.size() ? in[i] : std::vector<float>(n, 0.0f);
    bufs.push_back(cpu().alloc(n * 4));
    bufs.back()->upload(src.data(), n * 4);
    args.buffers.push_back(bufs.back().get());
  }
  cpu().launch(*ck, args);
  cpu().synchronize();
  got.assign(n, 0.0f);
  bufs.back()->download(got.data(), n * 4);
}

// Distance in representable floats; NaN matches NaN only.
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ord = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::llabs(ord(a) - ord(b));
}

std::vector<float> sweep() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (1ull << 32); b += 2039) v.push_back(std::bit_cast<float>(uint32_t(b)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1e-45f, -1e-45f, 1e-40f, -1e-40f,
                  0x1p-126f, -0x1p-126f, 0x1.fffffep127f, -0x1.fffffep127f, 1.0f, -1.0f, 0.5f, 2.0f})
    v.push_back(s);
  // Thresholds: exp overflow/underflow, log2/exp2 ends, erf/tanh range ends, pi/2 multiples.
  for (float c : {88.72283f, -87.33654f, -103.97208f, -103.27893f, 128.0f, -126.0f, -149.0f, -150.0f, 0.625f, 0.84375f,
                  1.25f, 2.857143f, 3.9192f, 6.0f, 9.0f, 22.0f, 0.3465736f, 1.0397208f, 1.5707964f, 3.1415927f,
                  1e4f, 1e5f, 1048576.0f, 1e10f, 1e30f}) {
    float x = c;
    for (int i = 0; i < 64; ++i) x = std::nextafter(x, 0.0f);
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, 2 * c)) v.push_back(x), v.push_back(-x);
  }
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (int i = 0; i < 200000; ++i) v.push_back(u(g));
  return v;
}

struct Result {
  int64_t max_ulp = 0;
  float worst_x = 0, worst_y = 0, got = 0, ref = 0;
};

Result compare(const std::vector<float>& x, const std::vector<float>* y, const std::vector<float>& got,
               const std::vector<float>& ref, float lo = -INFINITY, float hi = INFINITY) {
  Result r;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(x[i] >= lo && x[i] < hi) && !(std::isnan(x[i]) && lo == -INFINITY)) continue;
    int64_t d = ulps(got[i], ref[i]);
    if (d > r.max_ulp) r = {d, x[i], y ? (*y)[i] : 0.0f, got[i], ref[i]};
  }
  return r;
}

}  // namespace

TEST_CASE("f32 inline math: max ulp error vs glibc over the whole range") {
  const std::vector<float> x = sweep();
  struct Fn {
    ir::Op op;
    const char* name;
    int64_t max_ulp;
  };
  for (Fn f : {Fn{ir::Op::Exp, "exp", 1}, Fn{ir::Op::Exp2, "exp2", 1}, Fn{ir::Op::Log, "log", 1},
               Fn{ir::Op::Log2, "log2", 1}, Fn{ir::Op::Sin, "sin", 1}, Fn{ir::Op::Cos, "cos", 1},
               Fn{ir::Op::Tanh, "tanh", 0}, Fn{ir::Op::Erf, "erf", 1}}) {
    CAPTURE(f.name);
    std::vector<float> got, ref;
    run_both(ops::unary_map(f.op, ir::types::F32), {x}, got, ref);
    Result r = compare(x, nullptr, got, ref);
    MESSAGE(std::string(f.name) << ": max " << r.max_ulp << " ulp over " << x.size() << " inputs (at x = " << r.worst_x << ": got "
                   << r.got << ", glibc " << r.ref << ")");
    CHECK(r.max_ulp <= f.max_ulp);
    if (f.op == ir::Op::Erf) {  // glibc's own algorithm below 1/0.35: bit-exact (GELU needs it near -1)
      Result e = compare(x, nullptr, got, ref, -2.857f, 2.857f);
      CHECK(e.max_ulp == 0);
    }
  }
}

TEST_CASE("f32 inline pow: max ulp error vs glibc, special cases") {
  std::vector<float> x, y;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f, 1e-45f,
                      -1e-45f, 1e30f, -1e30f, 0x1p24f, 0x1p25f + 2, 2.5f, -2.5f, 1e-3f, 7.0f, -7.0f, 0x1.fffffep127f};
  for (float a : sp)
    for (float b : sp) x.push_back(a), y.push_back(b);
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  for (int i = 0; i < 300000; ++i) {
    float a = std::bit_cast<float>(uint32_t(g())), b = std::bit_cast<float>(uint32_t(g()));
    if (std::isnan(a)) a = nan;  // glibc gives pow(sNaN, 0) = NaN (not 1); kernels see no sNaN
    if (std::isnan(b)) b = nan;
    x.push_back(a), y.push_back(b);                                   // anything
    x.push_back(a), y.push_back(std::nearbyint(u01(g) * 40 - 20));    // integer exponents
    float m = std::ldexp(1 + u01(g), int(g() % 300) - 150);          // results across the whole range
    x.push_back(m), y.push_back((u01(g) * 2 - 1) * 150 / (std::fabs(std::log2(m)) + 1));
    x.push_back(-m), y.push_back(std::nearbyint(u01(g) * 6 - 3));
    x.push_back(u01(g) * 4 + 0.01f), y.push_back(u01(g) * 6 - 3);     // the conformance test's range
  }
  std::vector<float> got, ref;
  run_both(ops::binary_map(ir::Op::Pow, ir::types::F32), {x, y}, got, ref);
  Result r = compare(x, &y, got, ref);
  MESSAGE("pow: max " << r.max_ulp << " ulp over " << x.size() << " inputs (at x = " << r.worst_x << ", y = "
                      << r.worst_y << ": got " << r.got << ", glibc " << r.ref << ")");
  CHECK(r.max_ulp <= 1);
}

// The DSL forms the CPU's fused chains use (ops/common/fast_math.h), JIT-run
// and interpreted (the same IR: the two must agree exactly), against glibc.
TEST_CASE("fast_tanh / fast_erf / fast_log: max ulp error vs glibc over the whole range") {
  const std::vector<float> x = sweep();
  for (int which : {0, 1, 2}) {
    const char* name = which == 2 ? "fast_log" : which ? "fast_erf" : "fast_tanh";
    CAPTURE(name);
    ir::Kernel k = dsl::kernel(name, [&](dsl::KernelBuilder& kb) {
      auto in = kb.input("x", dsl::f32);
      auto out = kb.output("y", dsl::f32);
      auto n = kb.scalar("n", dsl::u32);
      kb.workgroup(256);
      dsl::Value i = dsl::global_id(0);
      dsl::if_(i < n, [&] { out[i] = which == 2 ? ops::fast_log(in[i]) : which ? ops::fast_erf(in[i]) : ops::fast_tanh(in[i]); });
    });
    std::vector<float> got, interp;
    run_both(k, {x}, got, interp);
    std::vector<float> glibc(x.size());
    for (size_t i = 0; i < x.size(); ++i) glibc[i] = which == 2 ? std::log(x[i]) : which ? std::erf(x[i]) : std::tanh(x[i]);
    Result r = compare(x, nullptr, got, glibc), s = compare(x, nullptr, got, interp);
    MESSAGE(std::string(name) << ": max " << r.max_ulp << " ulp over " << x.size() << " inputs (at x = " << r.worst_x << ": got " << r.got
                 << ", glibc " << r.ref << "); JIT vs interpreter " << s.max_ulp << " ulp");
    CHECK(r.max_ulp <= (which == 2 ? 1 : 2));  // fast_log: kg_logf's operations
    CHECK(s.max_ulp == 0);
  }
}
