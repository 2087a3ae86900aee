// Sum reduction: each workgroup of 256 reduces 256*items consecutive
// elements to one partial sum (serial per work-item, then a shared-memory
// tree), written to partial[group]. A second pass (or the host) adds the
// partials; the workload checks the partials.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel reduce_sum(int items) {
  constexpr int wg = kReduceWorkgroup;
  return kernel("reduce_sum_i" + std::to_string(items), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto partial = kb.output("partial", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(wg);
    auto sh = shared_array(f32, wg);
    auto lid = local_id(0);
    auto base = group_id(0) * (wg * items) + lid;
    // Coalesced: item k of every work-item is one contiguous run of 256.
    Var acc = var(0.0f);
    for (int k = 0; k < items; ++k) {
      auto idx = base + k * wg;
      if_(idx < n, [&] { acc += x[idx]; });
    }
    sh[lid] = acc;
    tree_reduce(sh, lid, wg, [](Value a, Value b) { return a + b; });
    if_(lid == 0, [&] { partial[group_id(0)] = sh[0]; });
  });
}

void register_reduce() {
  const int items = 4;
  register_kernel({reduce_sum(items).name, "per-workgroup partial sums (256 x 4 elements each, shared-memory tree)",
                   [] { return reduce_sum(items); },
                   [](int64_t n) {
                     ir::Workload w;
                     w.dims = grid_1d(n, kReduceWorkgroup * items);
                     w.dims.workgroup = {kReduceWorkgroup, 1, 1};
                     size_t groups = w.dims.grid[0];
                     w.buffers = {input_spec(n), output_spec(groups)};
                     w.scalars = {ir::scalar_slot(uint32_t(n))};
                     w.bytes = 4.0 * (double(n) + double(groups));
                     w.flops = double(n);
                     // Same summation order in the interpreter and on targets.
                     w.tolerance = 1e-5;
                     return w;
                   },
                   1 << 22, {1, 7, 1000, 1024, 4099}});
}

}  // namespace kgen::samples
