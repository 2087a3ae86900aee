// dot4 (ir/ops.h): byte dot products accumulated into i32, the building block
// of int8 GEMV/GEMM (x86 vpdpbusd, CUDA dp4a). The kernel computes all four
// signedness combinations of the packed operands, so every target's lowering
// (VNNI for the unsigned x signed lines on the CPU, arithmetic elsewhere, dp4a,
// GLSL/WGSL bit extraction) is checked against the interpreter.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel dot4_packed(int lanes) {
  return kernel("dot4_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type U = lanes == 1 ? u32 : line(u32, lanes), I = lanes == 1 ? i32 : line(i32, lanes);
    auto a = kb.input("a", U);
    auto b = kb.input("b", U);
    auto c = kb.input("c", I);
    auto y = kb.output("y", I);  // 4 results per element: uu, us, su, ss
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      Value av = a[i], bv = b[i], cv = c[i];
      Value as = bitcast(I, av), bs = bitcast(I, bv);
      y[i * 4u] = dot4(av, bv, cv);
      y[i * 4u + 1u] = dot4(av, bs, cv);
      y[i * 4u + 2u] = dot4(as, bv, cv);
      y[i * 4u + 3u] = dot4(as, bs, cv);
    });
  });
}

ir::Kernel dot4_small_packed(int lanes) {
  return kernel("dot4_small_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type U = lanes == 1 ? u32 : line(u32, lanes), I = lanes == 1 ? i32 : line(i32, lanes);
    auto a = kb.input("a", U);
    auto b = kb.input("b", U);
    auto c = kb.input("c", I);
    auto y = kb.output("y", I);  // 4 results per element
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      // Unsigned bytes up to 127 (the saturation edge: 2·127·-128) and up to 15
      // (nibble codes), times any signed bytes.
      Value av = a[i], bs = bitcast(I, Value(b[i])), cv = c[i];
      Value small = av & 0x7f7f7f7fu;
      Value nib = (av >> 4u) & 0x0f0f0f0fu;
      y[i * 4u] = dot4(small, bs, cv);
      y[i * 4u + 1u] = dot4(bs, small, cv);
      y[i * 4u + 2u] = dot4(nib, bs, cv);
      y[i * 4u + 3u] = dot4(bs, nib, cv);
    });
  });
}

void register_dot4() {
  for (int lanes : {1, 4, 8, 16}) {
    register_kernel({dot4_small_packed(lanes).name,
                     "y = dot4(a, b, c) of unsigned bytes below 128 (masked, shifted) and signed bytes",
                     [lanes] { return dot4_small_packed(lanes); },
                     [](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, 64);
                       w.buffers = {input_spec(n, 0, 4294967295.0), input_spec(n, 0, 4294967295.0),
                                    input_spec(n, -2147483648.0, 2147483647.0), output_spec(4 * n)};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.tolerance = 0;
                       return w;
                     },
                     1 << 16, {1, 7, 100}});
    register_kernel({dot4_packed(lanes).name, "y = dot4(a, b, c) for the 4 signedness pairs of a, b (packed bytes)",
                     [lanes] { return dot4_packed(lanes); },
                     [](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, 64);
                       // Every bit pattern, and accumulators near the i32 range's ends (wrapping).
                       w.buffers = {input_spec(n, 0, 4294967295.0), input_spec(n, 0, 4294967295.0),
                                    input_spec(n, -2147483648.0, 2147483647.0), output_spec(4 * n)};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.tolerance = 0;
                       return w;
                     },
                     1 << 16, {1, 7, 100}});
  }
}

}  // namespace kgen::samples
