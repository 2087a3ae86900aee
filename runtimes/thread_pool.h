// A persistent pool for data-parallel launches: run() splits [0, total) into
// contiguous chunks handed out by an atomic counter (so two threads stay
// balanced even when chunks differ in cost), the calling thread works too,
// and idle workers spin briefly before sleeping on a futex (atomic wait), so
// back-to-back launches cost a few microseconds.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kgen::rt {

class ThreadPool {
 public:
  using RangeFn = void (*)(void* ctx, uint64_t begin, uint64_t end);
  explicit ThreadPool(unsigned threads);  // total, including the caller; 0 = hardware
  ~ThreadPool();
  unsigned threads() const { return unsigned(workers_.size()) + 1; }
  // Calls fn(ctx, b, e) over [0, total) in chunks; returns when all are done.
  void run(uint64_t total, RangeFn fn, void* ctx);

 private:
  void worker_main();
  void work();

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // one run at a time
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<uint64_t> next_{0};
  alignas(64) std::atomic<unsigned> busy_{0};
  std::atomic<bool> stop_{false};
  uint64_t total_ = 0, chunk_ = 1;
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace kgen::rt
