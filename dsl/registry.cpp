#include "dsl/registry.h"

#include <mutex>
#include <stdexcept>

namespace kgen::dsl {

namespace {
std::mutex g_mu;
std::vector<KernelEntry>& entries() {
  static std::vector<KernelEntry> e;
  return e;
}
}  // namespace

void register_kernel(KernelEntry e) {
  if (e.name.empty()) throw std::invalid_argument("register_kernel: empty kernel name");
  if (!e.build || !e.workload) throw std::invalid_argument("register_kernel: '" + e.name + "' needs build and workload");
  std::lock_guard lock(g_mu);
  if (find_kernel(e.name)) throw std::invalid_argument("register_kernel: duplicate kernel name '" + e.name + "'");
  entries().push_back(std::move(e));
}

const std::vector<KernelEntry>& registered_kernels() { return entries(); }

const KernelEntry* find_kernel(std::string_view name) {
  for (const KernelEntry& e : entries())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace kgen::dsl
