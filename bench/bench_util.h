// Helpers shared by the benchmark suites: timing, medians, deterministic
// random data and the vendor SGEMM baselines with their thread counts.
#pragma once
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace kgen::bench {

// Times fn once, after one untimed run of it. Each side of an interleaved
// comparison (ours, the triad, the unfused path) is then measured in its own
// steady state, as STREAM's repeated kernel is: it pays the write-backs of the
// dirty lines its own previous run left in the caches, not the other side's.
// Timed right after a triad, an op paid for up to an LLC of the triad's dirty
// lines: softmax 4096x4096 (1 thread, Zen 5) read 3.86 ms in the bench against
// 3.35 ms back to back, and the read-only Q4_0 GEMV (9 MiB) paid it on every run.
template <class F>
double steady(F&& fn) {
  fn();
  return fn();
}

using Clock = std::chrono::steady_clock;

inline double seconds(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Debian's libdnnl runs on OpenMP (libgomp, loaded with it): its thread count
// is the calling thread's OpenMP setting. Looked up at run time so the bench
// needs no OpenMP link flags.
inline void set_vendor_threads(int threads) {
  openblas_set_num_threads(threads);
  using SetFn = void (*)(int);
  static SetFn omp_set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (omp_set) omp_set(threads);
}

// Row-major C = A·op(B) with each vendor.
inline void openblas_sgemm(bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(k), b,
              int(tb ? k : n), 0.0f, c, int(n));
}
inline void onednn_sgemm(bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  dnnl_sgemm('N', tb ? 'T' : 'N', m, n, k, 1.0f, a, k, b, tb ? k : n, 0.0f, c, n);
}

// Deterministic values in [-1, 1) (an LCG: fast for hundreds of MiB).
inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(s >> 8) / float(1 << 24) * 2.0f - 1.0f;
  }
  return v;
}

}  // namespace kgen::bench
