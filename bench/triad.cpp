#include "bench/triad.h"

#include "bench/bench_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

int rotation_copies(double bytes, uint64_t llc_bytes) {
  const double rotation = std::max(384.0 * 1048576.0, 2.0 * double(llc_bytes));
  return std::max(2, int(std::ceil(rotation / std::max(bytes, 1.0))));
}

void ratio_to_triad(benchmark::State& state, const std::function<double()>& run, double bytes, int threads, int rounds,
                    double evict_bytes) {
  constexpr size_t kTriad = size_t(1) << 26;
  std::vector<float> ta(kTriad), tb(kTriad, 1.0f), tc(kTriad, 2.0f);
  auto triad = [&] { return run_triad(ta.data(), tb.data(), tc.data(), 3.0f, kTriad, threads); };
  triad();
  std::vector<double> t_ours, t_triad;
  for (int r = 0; r < rounds; ++r) {
    if (r % 3 == 0)  // after the triad: ours until the triad's lines are gone
      for (double moved = 0; moved == 0 || moved < evict_bytes; moved += bytes) run();
    t_ours.push_back(run());
    if (r % 3 == 2) t_triad.push_back(steady(triad));
  }
  const double gbs = bytes / median(t_ours) / 1e9, triad_gbs = triad_bytes(kTriad) / median(t_triad) / 1e9;
  state.counters["GB_per_s"] = gbs;
  state.counters["triad_GB_per_s"] = triad_gbs;
  state.counters["ratio"] = gbs / triad_gbs;
}

}  // namespace kgen::bench
