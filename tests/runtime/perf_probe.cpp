// Measures what the CPU backend promises: cold in-process compile latency of
// a ~20-line kernel and saxpy bandwidth at n = 2^25 on 1 and 2 threads.
// Not a test (timings are noisy on shared machines); run by hand.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "codegen/cpp.h"
#include "jit/jit.h"
#include "runtimes/runtime.h"
#include "tests/codegen/test_kernels.h"

using namespace kgen;
using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  for (int opt : {3, 2}) {
    std::vector<double> tot, fe, cg, ln;
    for (int r = 0; r < reps + 1; ++r) {
      ir::Kernel k = test::saxpy_loop();
      k.name = "saxpy_loop_" + std::to_string(opt) + "_" + std::to_string(r);  // distinct source: no cache
      std::string src = codegen::emit_cpp(k);
      auto t0 = Clock::now();
      jit::JitOptions jo;
      jo.opt_level = opt;
      auto m = jit::compile_cpp(src, jo);
      m->lookup(codegen::cpp_entry_symbol(k));
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (r == 0) continue;  // first compile initialises LLVM
      tot.push_back(ms);
      fe.push_back(m->stats().frontend_ms);
      cg.push_back(m->stats().codegen_ms);
      ln.push_back(m->stats().link_ms);
    }
    std::printf("cold compile -O%d (saxpy_loop, %d runs): median %.2f ms (frontend+opt %.2f, codegen %.2f, link %.2f)\n",
                opt, reps, median(tot), median(fe), median(cg), median(ln));
  }
  const uint32_t n = 1u << 25;
  for (unsigned threads : {1u, 2u}) {
    auto dev = rt::create_device("cpu", {threads});
    auto ck = dev->compile(test::saxpy());
    auto x = dev->alloc(n * 4), y = dev->alloc(n * 4);
    std::vector<float> h(n, 1.0f);
    x->upload(h.data(), n * 4);
    y->upload(h.data(), n * 4);
    rt::LaunchArgs a;
    a.buffers = {x.get(), y.get()};
    a.scalars = {ir::scalar_slot(0.5f), ir::scalar_slot(n)};
    a.dims.workgroup = {256, 1, 1};
    a.dims.grid = {n / 256, 1, 1};
    dev->launch(*ck, a);
    std::vector<double> t;
    for (int r = 0; r < 10; ++r) {
      auto t0 = Clock::now();
      dev->launch(*ck, a);
      t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    double best = *std::min_element(t.begin(), t.end()), med = median(t);
    std::printf("saxpy n=2^25 %u thread(s): median %.2f GB/s, best %.2f GB/s (%.2f ms)\n", threads, 12.0 * n / med / 1e9,
                12.0 * n / best / 1e9, med * 1e3);
  }
  // Launch overhead: tiny grid.
  {
    auto dev = rt::create_device("cpu", {2});
    auto ck = dev->compile(test::saxpy());
    auto x = dev->alloc(1024 * 4), y = dev->alloc(1024 * 4);
    rt::LaunchArgs a;
    a.buffers = {x.get(), y.get()};
    a.scalars = {ir::scalar_slot(0.5f), ir::scalar_slot(1024u)};
    a.dims.workgroup = {64, 1, 1};
    a.dims.grid = {16, 1, 1};
    for (int i = 0; i < 100; ++i) dev->launch(*ck, a);
    auto t0 = Clock::now();
    for (int i = 0; i < 10000; ++i) dev->launch(*ck, a);
    std::printf("launch overhead (16 groups, 2 threads): %.2f us\n",
                std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 10000);
  }
}
