#include "bench/triad.h"

#include <chrono>
#include <thread>
#include <vector>

namespace kgen::bench {

namespace {
__attribute__((noinline)) void triad_range(float* __restrict a, const float* __restrict b, const float* __restrict c,
                                           float s, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
}
}  // namespace

double run_triad(float* a, const float* b, const float* c, float s, size_t n, int threads) {
  auto t0 = std::chrono::steady_clock::now();
  if (threads <= 1) {
    triad_range(a, b, c, s, 0, n);
  } else {
    std::vector<std::thread> pool;
    size_t chunk = (n + threads - 1) / threads;
    for (int t = 1; t < threads; ++t) {
      size_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
      pool.emplace_back(triad_range, a, b, c, s, lo, hi);
    }
    triad_range(a, b, c, s, 0, std::min(n, chunk));
    for (auto& th : pool) th.join();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kgen::bench
