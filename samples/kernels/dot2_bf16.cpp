// dot2_bf16 (ir/ops.h): products of bf16 pairs accumulated into f32, the
// inner step of the bf16 GEMM (x86 vdpbf16ps). The operands are built from
// f32 inputs (each lane's two halves: the upper 16 bits of two floats), so
// every value is a normal bf16 and every target must agree with the
// interpreter bit for bit, including the order of the two additions.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel dot2_bf16_packed(int lanes) {
  return kernel("dot2_bf16_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type F = lanes == 1 ? f32 : line(f32, lanes), U = lanes == 1 ? u32 : line(u32, lanes);
    auto x = kb.input("x", F);  // x[2i]: the low (first) elements, x[2i + 1]: the high ones
    auto w = kb.input("w", F);
    auto c = kb.input("c", F);
    auto y = kb.output("y", F);  // 2 results per element: dot2(a, b, c), dot2(b, a, -c)
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      auto pairs = [&](const Array& v) {
        Value lo = bitcast(U, Value(v[i * 2u])), hi = bitcast(U, Value(v[i * 2u + 1u]));
        return (hi & 0xffff0000u) | (lo >> 16u);
      };
      Value a = pairs(x), b = pairs(w), cv = c[i];
      y[i * 2u] = dot2_bf16(a, b, cv);
      y[i * 2u + 1u] = dot2_bf16(b, a, -cv);
    });
  });
}

void register_dot2_bf16() {
  for (int lanes : {1, 4, 8, 16}) {
    register_kernel({dot2_bf16_packed(lanes).name, "y = dot2_bf16(a, b, c): bf16 pair products added to f32 (vdpbf16ps)",
                     [lanes] { return dot2_bf16_packed(lanes); },
                     [](int64_t n) {
                       ir::Workload wl;
                       wl.dims = grid_1d(n, 64);
                       wl.buffers = {input_spec(2 * n), input_spec(2 * n), input_spec(n), output_spec(2 * n)};
                       wl.scalars = {ir::scalar_slot(uint32_t(n))};
                       wl.tolerance = 0;  // normal values: exact on every target
                       return wl;
                     },
                     1 << 16, {1, 7, 100}});
  }
}

}  // namespace kgen::samples
