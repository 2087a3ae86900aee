#include "runtimes/thread_pool.h"

#include <algorithm>

namespace kgen::rt {

namespace {
inline void cpu_relax() { __builtin_ia32_pause(); }
constexpr int kSpin = 20000;  // ~100 us of polling before sleeping
constexpr int kIndexBits = 40;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
constexpr uint64_t kGenMask = (uint64_t(1) << (64 - kIndexBits)) - 1;
// A run's claim after it is over: no index is below it.
constexpr uint64_t kClosed = kIndexMask;
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

// Claims and runs chunks of run `gen` until none is left (or the run is another's).
void ThreadPool::work(uint64_t gen) {
  for (;;) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    if ((c >> kIndexBits) != gen) return;
    const uint64_t b = c & kIndexMask;
    const uint64_t total = total_.load(std::memory_order_acquire);
    if (b >= total) return;
    const uint64_t e = std::min(total, b + chunk_);
    if (!claim_.compare_exchange_weak(c, (gen << kIndexBits) | e, std::memory_order_acq_rel)) continue;
    fn_(ctx_, b, e);
    done_.fetch_add(e - b, std::memory_order_release);
  }
}

void ThreadPool::worker_main() {
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpin && generation_.load(std::memory_order_acquire) == seen; ++i) cpu_relax();
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    work(seen & kGenMask);
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
  chunk_ = std::max<uint64_t>(1, total / (uint64_t(threads()) * 8));
  fn_ = fn;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  total_.store(total, std::memory_order_release);
  const uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
  claim_.store((gen & kGenMask) << kIndexBits, std::memory_order_release);
  generation_.store(gen, std::memory_order_release);
  generation_.notify_all();
  work(gen & kGenMask);
  for (int spins = 0; done_.load(std::memory_order_acquire) < total; ++spins) {
    if (spins < kSpin) cpu_relax();
    else std::this_thread::yield();
  }
  // Close the run before the next one rewrites total_: a late worker that
  // read this run's claim fails its compare-and-swap.
  claim_.store(((gen & kGenMask) << kIndexBits) | kClosed, std::memory_order_release);
}

}  // namespace kgen::rt
