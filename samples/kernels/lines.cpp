// Vector-line kernels: buffers whose elements are f32 lines, so x[i] loads
// `lanes` floats at once. Sizes are counted in lines: the workload for n
// floats uses ceil(n / lanes) lines (n is rounded up to whole lines).
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel saxpy_lines(int lanes) {
  return kernel("saxpy_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, lanes));
    auto y = kb.inout("y", line(f32, lanes));
    auto a = kb.scalar("a", f32);
    auto n = kb.scalar("n_lines", u32);
    auto i = global_id(0);
    auto av = splat(a, lanes);  // scalars never meet lines implicitly
    if_(i < n, [&] { y[i] = av * x[i] + y[i]; });
  });
}

ir::Kernel dot_lines(int lanes) {
  return kernel("dot_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, lanes));
    auto y = kb.input("y", line(f32, lanes));
    auto out = kb.output("out", f32);
    auto n = kb.scalar("n_lines", u32);
    auto i = global_id(0);
    if_(i < n, [&] { out[i] = reduce_add(x[i] * y[i]); });
  });
}

void register_lines() {
  constexpr uint32_t kWg = 256;
  const int sl = 16;
  register_kernel({saxpy_lines(sl).name, "y = a*x + y on f32x16 lines (n rounded up to whole lines)",
                   [] { return saxpy_lines(sl); },
                   [](int64_t n) {
                     ir::Workload w;
                     int64_t lines = ceil_div(n, sl);
                     w.dims = grid_1d(lines, kWg);
                     w.buffers = {input_spec(lines), inout_spec(lines)};
                     w.scalars = {ir::scalar_slot(1.5f), ir::scalar_slot(uint32_t(lines))};
                     w.bytes = 3.0 * 4.0 * sl * double(lines);
                     w.flops = 2.0 * sl * double(lines);
                     w.tolerance = 1e-5;
                     return w;
                   },
                   1 << 22, {1, 7, 16, 1000, 4099}, "bandwidth"});
  const int dl = 8;
  register_kernel({dot_lines(dl).name, "out[i] = dot of the f32x8 lines x[i], y[i] (reduce_add)",
                   [] { return dot_lines(dl); },
                   [](int64_t n) {
                     ir::Workload w;
                     int64_t lines = ceil_div(n, dl);
                     w.dims = grid_1d(lines, kWg);
                     // Positive inputs: no cancellation, so any lane summation order agrees to ~1 ulp.
                     w.buffers = {input_spec(lines, 0.0, 1.0), input_spec(lines, 0.0, 1.0), output_spec(lines)};
                     w.scalars = {ir::scalar_slot(uint32_t(lines))};
                     w.bytes = 4.0 * (2.0 * dl + 1.0) * double(lines);
                     w.flops = 2.0 * dl * double(lines);
                     w.tolerance = 1e-5;
                     return w;
                   },
                   1 << 22, {1, 7, 8, 1000, 4099}});
}

}  // namespace kgen::samples
