#include "runtimes/compile_all.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace kgen::rt {

std::vector<std::shared_ptr<CompiledKernel>> compile_all(Device& dev, const std::vector<const ir::Kernel*>& kernels,
                                                         const CompileOptions& opt, unsigned threads) {
  const size_t n = kernels.size();
  std::vector<std::shared_ptr<CompiledKernel>> out(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        out[i] = dev.compile(*kernels[i], opt);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = dev.concurrent_compile() ? std::min<size_t>(threads, n) : 1;
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace kgen::rt
