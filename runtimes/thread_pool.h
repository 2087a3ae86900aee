// A persistent pool for data-parallel launches: run() splits [0, total) into
// contiguous chunks claimed through an atomic counter (so two threads stay
// balanced even when chunks differ in cost), the calling thread works too,
// and idle workers spin briefly before sleeping on a futex (atomic wait), so
// back-to-back launches cost a few microseconds.
//
// run() returns when every chunk is done, not when every worker has checked
// in: a worker the OS has not scheduled yet (a loaded machine, more threads
// than free cores) costs nothing, since the caller takes its chunks. The
// claim counter carries the run's generation, so a worker waking late can
// never claim a chunk of a run that is over.
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
  void work(uint64_t gen);

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // one run at a time
  alignas(64) std::atomic<uint64_t> generation_{0};  // wakes the workers
  alignas(64) std::atomic<uint64_t> claim_{0};       // generation (high 24 bits) | next index (low 40)
  alignas(64) std::atomic<uint64_t> done_{0};        // items finished in this run
  std::atomic<uint64_t> total_{0};
  std::atomic<bool> stop_{false};
  uint64_t chunk_ = 1;
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace kgen::rt
