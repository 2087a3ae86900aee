// Row softmax: one workgroup of 256 per row. Each work-item strides over the
// row; the row max and the sum of exponentials are tree-reduced in shared
// memory (subtracting the max keeps exp from overflowing).
#include <cmath>

#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel softmax_rows() {
  constexpr int wg = kSoftmaxWorkgroup;
  return kernel("softmax_rows", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto cols = kb.scalar("cols", u32);
    kb.workgroup(wg);
    auto sh = shared_array(f32, wg);
    auto lid = local_id(0);
    auto row_start = group_id(0) * cols;

    Var m = var(-INFINITY);
    for_range(lid, cols, [&](Value j) { m = max(m, x[row_start + j]); }, wg);
    sh[lid] = m;
    tree_reduce(sh, lid, wg, [](Value a, Value b) { return max(a, b); });
    Value row_max = sh[0];
    barrier();  // everyone has read sh[0] before it is reused

    Var s = var(0.0f);
    for_range(lid, cols, [&](Value j) { s += exp(x[row_start + j] - row_max); }, wg);
    sh[lid] = s;
    tree_reduce(sh, lid, wg, [](Value a, Value b) { return a + b; });
    Value inv_sum = 1 / sh[0];

    for_range(lid, cols, [&](Value j) {
      auto at = row_start + j;
      y[at] = exp(x[at] - row_max) * inv_sum;
    }, wg);
  });
}

void register_softmax() {
  register_kernel({"softmax_rows", "softmax of each row of a 64 x n f32 matrix, one workgroup per row",
                   [] { return softmax_rows(); },
                   [](int64_t n) {
                     ir::Workload w;
                     w.dims.grid = {uint32_t(kSoftmaxRows), 1, 1};
                     w.dims.workgroup = {uint32_t(kSoftmaxWorkgroup), 1, 1};
                     size_t elems = size_t(kSoftmaxRows) * size_t(n);
                     w.buffers = {input_spec(elems, -8.0, 8.0), output_spec(elems)};
                     w.scalars = {ir::scalar_slot(uint32_t(n))};
                     w.bytes = 8.0 * double(elems);
                     w.flops = 5.0 * double(elems);
                     w.tolerance = 1e-5;
                     return w;
                   },
                   1 << 16, {1, 7, 255, 257, 1000}});
}

}  // namespace kgen::samples
