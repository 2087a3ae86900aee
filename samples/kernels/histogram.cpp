// Histogram of u32 values in [0, bins) with atomics: straight to global
// memory, or privatized per workgroup in shared memory and flushed once.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

namespace {
constexpr int kHistWorkgroup = 256;
}

ir::Kernel histogram(int bins, bool privatized) {
  std::string name = "histogram" + std::to_string(bins) + (privatized ? "_shared" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", u32);
    auto hist = kb.inout("hist", u32);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if (!privatized) {
      // Clamp so that an out-of-range value cannot write out of bounds.
      if_(i < n, [&] { atomic_add(hist[min(x[i], bins - 1)], 1); });
      return;
    }
    kb.workgroup(kHistWorkgroup);
    auto sh = shared_array(u32, bins);
    auto lid = local_id(0);
    for_range(lid, bins, [&](Value b) { sh[b] = 0; }, kHistWorkgroup);
    barrier();
    if_(i < n, [&] { atomic_add(sh[min(x[i], bins - 1)], 1); });
    barrier();
    for_range(lid, bins, [&](Value b) {
      Value c = sh[b];
      if_(c != 0, [&] { atomic_add(hist[b], c); });
    }, kHistWorkgroup);
  });
}

void register_histogram() {
  const int bins = 256;
  for (bool priv : {false, true}) {
    register_kernel({histogram(bins, priv).name,
                     std::string("256-bin histogram of u32 values, atomics ") +
                         (priv ? "into shared memory, then one flush per group" : "straight to global memory"),
                     [priv] { return histogram(bins, priv); },
                     [](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, kHistWorkgroup);
                       w.buffers = {input_spec(n, 0, bins - 1), {size_t(bins), 0.0, 0.0, true, true}};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.bytes = 4.0 * (double(n) + bins);
                       w.flops = 0;
                       w.tolerance = 0;
                       return w;
                     },
                     1 << 22, {1, 7, 255, 1000, 4099}});
  }
}

}  // namespace kgen::samples
