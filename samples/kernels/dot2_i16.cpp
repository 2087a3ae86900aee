// dot2_i16 (ir/ops.h): products of signed 16-bit pairs accumulated into i32,
// the integer scale step of the K-quant GEMVs (x86 vpdpwssd, vpmaddwd). Every
// bit pattern of the operands (-2^15 halves included, whose pair sum is the
// one that wraps) and accumulators near the i32 range's ends: every target
// must agree with the interpreter exactly.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel dot2_i16_packed(int lanes) {
  return kernel("dot2_i16_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type I = lanes == 1 ? i32 : line(i32, lanes);
    auto a = kb.input("a", I);
    auto b = kb.input("b", I);
    auto c = kb.input("c", I);
    auto y = kb.output("y", I);  // 2 results per element: dot2(a, b, c), dot2(a with its halves swapped, b, c)
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      Value av = a[i], bv = b[i], cv = c[i];
      y[i * 2u] = dot2_i16(av, bv, cv);
      // a's halves swapped: the pairing of halves matters
      Value swapped = bitcast(I, (bitcast(lanes == 1 ? ir::Type(u32) : line(u32, lanes), av) >> 16u) |
                                     (bitcast(lanes == 1 ? ir::Type(u32) : line(u32, lanes), av) << 16u));
      y[i * 2u + 1u] = dot2_i16(swapped, bv, cv);
    });
  });
}

void register_dot2_i16() {
  for (int lanes : {1, 4, 8, 16}) {
    register_kernel({dot2_i16_packed(lanes).name, "y = dot2_i16(a, b, c): signed 16-bit pair products added to i32 (vpdpwssd)",
                     [lanes] { return dot2_i16_packed(lanes); },
                     [](int64_t n) {
                       ir::Workload wl;
                       wl.dims = grid_1d(n, 64);
                       wl.buffers = {input_spec(n, -2147483648.0, 2147483647.0), input_spec(n, -2147483648.0, 2147483647.0),
                                     input_spec(n, -2147483648.0, 2147483647.0), output_spec(2 * n)};
                       wl.scalars = {ir::scalar_slot(uint32_t(n))};
                       wl.tolerance = 0;
                       return wl;
                     },
                     1 << 16, {1, 7, 100}});
  }
}

}  // namespace kgen::samples
