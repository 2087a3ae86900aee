#include "bench/fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace kgen::bench {

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
inline Vec splat(float v) { return _mm512_set1_ps(v); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
constexpr int kLanes = 16;
#elif defined(__FMA__)
using Vec = __m256;
inline Vec splat(float v) { return _mm256_set1_ps(v); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
constexpr int kLanes = 8;
#else  // no FMA unit: multiply-adds on 4 lanes, the compiler's own vectors
using Vec = float __attribute__((vector_size(16)));
inline Vec splat(float v) { return Vec{v, v, v, v}; }
inline Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
inline void store(float* p, Vec v) { __builtin_memcpy(p, &v, sizeof v); }
constexpr int kLanes = 4;
#endif

// Through memory: GCC 12's _mm512_reduce_add_ps warns of an uninitialised
// operand inside its own header.
inline float lane_sum(Vec v) {
  float t[kLanes];
  store(t, v);
  float s = 0;
  for (float x : t) s += x;
  return s;
}

// Twelve chains cover the FMA latency (4-5 cycles) times two FMA pipes.
constexpr int kChains = 12;

// `iters` rounds of one FMA on each chain; the sum keeps the work alive.
__attribute__((noinline)) float chains(long iters, float seed) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = splat(seed + float(i));
  const Vec m = splat(0.999999f), a = splat(1e-7f);
  for (long r = 0; r < iters; ++r)
    for (int i = 0; i < kChains; ++i) acc[i] = fma(acc[i], m, a);
  Vec s = acc[0];
  for (int i = 1; i < kChains; ++i) s = s + acc[i];
  return lane_sum(s);
}

double run_seconds(int threads, long iters) {
  std::vector<float> sums(static_cast<size_t>(threads));
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { sums[size_t(t)] = chains(iters, float(t)); });
  sums[0] = chains(iters, 0.0f);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double fma_peak_gflops(int threads) {
  threads = std::max(threads, 1);
  constexpr long kIters = 4000000;  // ~0.1 s per round at a few GHz
  run_seconds(threads, kIters / 8);  // clocks up, threads warm
  double best = 0;
  for (int round = 0; round < 5; ++round) best = std::max(best, 1.0 / run_seconds(threads, kIters));
  return 2.0 * kLanes * kChains * double(kIters) * threads * best / 1e9;
}

}  // namespace kgen::bench
