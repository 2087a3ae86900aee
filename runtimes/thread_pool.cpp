#include "runtimes/thread_pool.h"

#include <algorithm>

namespace kgen::rt {

namespace {
inline void cpu_relax() { __builtin_ia32_pause(); }
constexpr int kSpin = 20000;  // ~100 us of polling before sleeping
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_main(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::work() {
  for (;;) {
    uint64_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (b >= total_) return;
    fn_(ctx_, b, std::min(total_, b + chunk_));
  }
}

void ThreadPool::worker_main() {
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpin && generation_.load(std::memory_order_acquire) == seen; ++i) cpu_relax();
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    work();
    busy_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::run(uint64_t total, RangeFn fn, void* ctx) {
  if (total == 0) return;
  if (workers_.empty() || total == 1) {
    fn(ctx, 0, total);
    return;
  }
  std::lock_guard lock(run_mu_);
  // ~8 chunks per thread: contiguous ranges, balanced to within 1/8 of a share.
  total_ = total;
  chunk_ = std::max<uint64_t>(1, total / (uint64_t(threads()) * 8));
  fn_ = fn;
  ctx_ = ctx;
  next_.store(0, std::memory_order_relaxed);
  busy_.store(unsigned(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  work();
  for (int spins = 0; busy_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpin) cpu_relax();
    else std::this_thread::yield();
  }
}

}  // namespace kgen::rt
