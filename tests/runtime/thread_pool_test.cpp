// The pool runs every index of every run exactly once, also with more
// threads than cores (workers the OS schedules late must not claim chunks
// of a finished run) and with back-to-back runs of different sizes.
#include <doctest/doctest.h>

#include <atomic>
#include <vector>

#include "runtimes/thread_pool.h"

namespace {
struct Counts {
  std::vector<std::atomic<int>>* hits;
  uint64_t run;
};
void count(void* ctx, uint64_t b, uint64_t e) {
  auto* c = static_cast<Counts*>(ctx);
  for (uint64_t i = b; i < e; ++i) (*c->hits)[i].fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

TEST_CASE("every index once per run, oversubscribed, back to back") {
  for (unsigned threads : {2u, 4u, 7u}) {
    kgen::rt::ThreadPool pool(threads);
    for (uint64_t run = 0; run < 3000; ++run) {
      const uint64_t total = 1 + (run * 7919) % 997;
      std::vector<std::atomic<int>> hits(total);
      Counts c{&hits, run};
      pool.run(total, count, &c);
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      REQUIRE(wrong == 0);
    }
  }
}
