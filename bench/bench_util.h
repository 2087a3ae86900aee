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
#include <string>
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

// oneDNN's bf16 (or f16) matmul primitive (2.x C API): C (M×N f32) = A (M×K
// bf16) · Bᵀ (B: N×K bf16, the weight layout), on caller-owned buffers.
// oneDNN has no bf16 GEMM function; the primitive is what its frameworks run
// (brgemm kernels with vdpbf16ps where the CPU has AVX512-BF16, AMX tiles
// where it has them). ok() is false when any call fails (then the benchmark
// says so instead of comparing).
class OnednnBf16Matmul {
 public:
  OnednnBf16Matmul(int64_t m, int64_t n, int64_t k, const void* a, const void* b, float* c, dnnl_data_type_t dt = dnnl_bf16) {
    dnnl_memory_desc_t amd, bmd, cmd;
    dnnl_dims_t ad = {m, k}, bd = {k, n}, cd = {m, n};
    ok_ = dnnl_engine_create(&eng_, dnnl_cpu, 0) == dnnl_success &&
          dnnl_stream_create(&stream_, eng_, dnnl_stream_default_flags) == dnnl_success &&
          dnnl_memory_desc_init_by_tag(&amd, 2, ad, dt, dnnl_ab) == dnnl_success &&
          dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dt, dnnl_ba) == dnnl_success &&  // K×N stored N×K
          dnnl_memory_desc_init_by_tag(&cmd, 2, cd, dnnl_f32, dnnl_ab) == dnnl_success;
    dnnl_matmul_desc_t md;
    ok_ = ok_ && dnnl_matmul_desc_init(&md, &amd, &bmd, nullptr, &cmd) == dnnl_success &&
          dnnl_primitive_desc_create(&pd_, &md, nullptr, eng_, nullptr) == dnnl_success &&
          dnnl_primitive_create(&prim_, pd_) == dnnl_success &&
          dnnl_memory_create(&am_, &amd, eng_, const_cast<void*>(a)) == dnnl_success &&
          dnnl_memory_create(&bm_, &bmd, eng_, const_cast<void*>(b)) == dnnl_success &&
          dnnl_memory_create(&cm_, &cmd, eng_, c) == dnnl_success;
    const char* impl = nullptr;
    if (ok_ && dnnl_primitive_desc_query(pd_, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) impl_ = impl;
  }
  ~OnednnBf16Matmul() {
    for (dnnl_memory_t mem : {am_, bm_, cm_})
      if (mem) dnnl_memory_destroy(mem);
    if (prim_) dnnl_primitive_destroy(prim_);
    if (pd_) dnnl_primitive_desc_destroy(pd_);
    if (stream_) dnnl_stream_destroy(stream_);
    if (eng_) dnnl_engine_destroy(eng_);
  }
  OnednnBf16Matmul(const OnednnBf16Matmul&) = delete;
  OnednnBf16Matmul& operator=(const OnednnBf16Matmul&) = delete;
  bool ok() const { return ok_; }
  const std::string& impl() const { return impl_; }  // e.g. "brg:avx512_core_bf16"
  void run() {
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am_}, {DNNL_ARG_WEIGHTS, bm_}, {DNNL_ARG_DST, cm_}};
    dnnl_primitive_execute(prim_, stream_, 3, args);
    dnnl_stream_wait(stream_);
  }

 private:
  bool ok_ = false;
  std::string impl_;
  dnnl_engine_t eng_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
  dnnl_primitive_desc_t pd_ = nullptr;
  dnnl_primitive_t prim_ = nullptr;
  dnnl_memory_t am_ = nullptr, bm_ = nullptr, cm_ = nullptr;
};

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
