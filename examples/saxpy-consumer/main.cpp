// Uses an installed kgen (find_package(kgen)): a kernel of its own, written
// with the DSL, runs on every device found and is checked against the
// reference interpreter on fresh random inputs, then timed; a library op
// (softmax) runs by name and is checked against a host reference.
// Exits 1 on any mismatch, 2 on an error.
#include <kgen/kgen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace kgen;

// y = a*x + b*y, one element per work-item.
ir::Kernel axpby() {
  using namespace dsl;
  return kernel("axpby", [](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.inout("y", f32);
    auto a = kb.scalar("a", f32);
    auto b = kb.scalar("b", f32);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { y[i] = a * x[i] + b * y[i]; });
  });
}

// Elements where |got - want| exceeds tol * scale[i].
size_t mismatches(const std::vector<float>& got, const std::vector<float>& want, const std::vector<double>& scale,
                  double tol) {
  size_t bad = got.size() == want.size() ? 0 : want.size();
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (!(std::abs(double(got[i]) - want[i]) <= tol * scale[i])) ++bad;  // NaN counts
  return bad;
}

// "ok", or how many elements were wrong.
std::string verdict(size_t bad) { return bad ? std::to_string(bad) + " WRONG" : "ok"; }

// Runs axpby on `dev`, compares with the interpreter and times it; returns
// the number of wrong elements.
size_t run_axpby(rt::Device& dev, std::mt19937_64& rng) {
  const uint32_t n = 1'000'003;  // odd: the last workgroup is partial
  const float a = 1.5f, b = -0.75f;
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);

  const ir::Kernel k = axpby();
  const ir::LaunchDims dims = grid_1d(n, 256);
  const std::vector<uint64_t> scalars = {ir::scalar_slot(a), ir::scalar_slot(b), ir::scalar_slot(n)};

  std::vector<float> want = y;  // the interpreter defines the result
  ir::interpret(k, dims, std::vector{interp_buffer(x), interp_buffer(want)}, scalars);

  std::shared_ptr<rt::CompiledKernel> ck = dev.compile(k);  // through the kernel cache
  auto xb = upload(dev, x), yb = upload(dev, y);
  const rt::LaunchArgs args{dims, {xb.get(), yb.get()}, scalars};
  dev.launch(*ck, args);
  dev.synchronize();
  const std::vector<float> got = download<float>(*yb);

  // A fused multiply-add may round a*x + b*y once instead of twice.
  std::vector<double> scale(n);
  for (uint32_t i = 0; i < n; ++i) scale[i] = std::abs(a * x[i]) + std::abs(b * y[i]) + 1e-30;
  const size_t bad = mismatches(got, want, scale, 4 * 0x1p-24);

  std::vector<double> ms;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    dev.launch(*ck, args);
    dev.synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], bytes = 3.0 * sizeof(float) * n;  // read x, y; write y
  std::printf("%-7s axpby    n=%u  %s  compile %.1f ms%s  run %.3f ms (median of 7)  %.2f GB/s\n", dev.name().c_str(),
              n, verdict(bad).c_str(), ck->compile_ms(), ck->cache_hit() ? " (cache hit)" : "", median,
              bytes / median / 1e6);
  return bad;
}

// A plain C++ kernel, translated at run time (kgen/translate.h), on `dev`
// against the interpreter; returns the number of wrong elements.
size_t run_translated(rt::Device& dev, std::mt19937_64& rng) {
  static const char* source = R"(
#include "kgen_kernel.h"
using namespace kgen;
KGEN_KERNEL void leaky_relu(const float* x, float* y, float slope, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = x[i] > 0 ? x[i] : slope * x[i];
})";
  const ir::Kernel k = translate::translate_source(source, "leaky_relu.cpp").at(0);
  const uint32_t n = 100'003;
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(n), want(n), got;
  for (float& v : x) v = dist(rng);
  const ir::LaunchDims dims = grid_1d(n, 256);
  const std::vector<uint64_t> scalars = {ir::scalar_slot(0.1f), ir::scalar_slot(n)};
  ir::interpret(k, dims, std::vector{interp_buffer(x), interp_buffer(want)}, scalars);
  auto xb = upload(dev, x), yb = upload(dev, std::vector<float>(n));
  dev.launch(*dev.compile(k), {dims, {xb.get(), yb.get()}, scalars});
  dev.synchronize();
  got = download<float>(*yb);
  const size_t bad = mismatches(got, want, std::vector<double>(n, 1.0), 0);
  std::printf("%-7s leaky_relu (plain C++, translated)  n=%u  %s\n", dev.name().c_str(), n, verdict(bad).c_str());
  return bad;
}

// Runs the library's softmax by name on `dev` and compares with a host
// softmax in double; returns the number of wrong elements.
size_t run_softmax(rt::Device& dev, uint64_t seed) {
  const int64_t rows = 37, cols = 1001;
  const ops::Problem p{"softmax", {rows, cols}};
  ops::HostTensors t = op_tensors(p, seed);
  run_op(dev, p, t);
  const std::vector<float> x = values<float>(t.in[0]), got = values<float>(t.out[0]);

  std::vector<float> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = &x[size_t(r * cols)];
    const double mx = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - mx);
    for (int64_t c = 0; c < cols; ++c) want[size_t(r * cols + c)] = float(std::exp(row[c] - mx) / sum);
  }
  // exp within a few ulps, f32 row sums ~eps * sqrt(cols); relative to an
  // output's size, at least the mean output 1/cols.
  std::vector<double> scale(want.size());
  for (size_t i = 0; i < want.size(); ++i) scale[i] = std::max(double(want[i]), 1.0 / cols);
  const size_t bad = mismatches(got, want, scale, 1e-5 + 1e-6 * std::sqrt(double(cols)));
  std::printf("%-7s softmax  %s  %s\n", dev.name().c_str(), p.str().c_str(), verdict(bad).c_str());
  return bad;
}

int main() {
  try {
    const uint64_t seed = std::random_device{}();
    std::printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 rng(seed);
    size_t bad = 0;
    for (const char* name : {"cpu", "cuda", "vulkan", "webgpu"}) {
      std::unique_ptr<rt::Device> dev;
      try {
        dev = rt::create_device(name);
      } catch (const std::exception& e) {
        if (std::string(name) == "cpu") throw;  // built with the C++ JIT, kgen always has it
        std::printf("%-7s skipped: %s\n", name, e.what());
        continue;
      }
      bad += run_axpby(*dev, rng) + run_softmax(*dev, rng()) + run_translated(*dev, rng);
    }
    std::printf("%s\n", bad ? "FAIL" : "OK");
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "saxpy_consumer: error: %s\n", e.what());
    return 2;
  }
}
