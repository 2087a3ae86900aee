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

namespace {

// max(byte, -127) on every signed byte of an i32 (line): byte lines hold at
// most 16 lanes, so wider lines go 4 lanes at a time.
Value clamp_bytes(const Value& v, int lanes) {
  auto clamp16 = [](const Value& x4, int n) {
    return bitcast(n == 1 ? ir::Type(i32) : line(i32, n),
                   max(bitcast(line(i8, 4 * n), x4), splat(constant(i8, -127), 4 * n)));
  };
  if (lanes <= 4) return clamp16(v, lanes);
  std::vector<Value> parts;
  for (int q = 0; q < lanes; q += 4) {
    Value c = clamp16(make_line({extract(v, q), extract(v, q + 1), extract(v, q + 2), extract(v, q + 3)}), 4);
    for (int l = 0; l < 4; ++l) parts.push_back(extract(c, l));
  }
  const auto& p = parts;
  if (lanes == 8) return make_line({p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]});
  return make_line({p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]});
}

}  // namespace

ir::Kernel dot4_small_packed(int lanes) {
  return kernel("dot4_small_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type U = lanes == 1 ? u32 : line(u32, lanes), I = lanes == 1 ? i32 : line(i32, lanes);
    auto a = kb.input("a", U);
    auto b = kb.input("b", U);
    auto c = kb.input("c", I);
    auto y = kb.output("y", I);  // 6 results per element
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      // Unsigned bytes up to 127 (the saturation edge: 2·127·-128) and up to 15
      // (nibble codes), times any signed bytes; then signed bytes clamped to
      // >= -127 (the sign-trick edge: 2·128·127) times any signed bytes.
      Value av = a[i], bs = bitcast(I, Value(b[i])), cv = c[i];
      Value small = av & 0x7f7f7f7fu;
      Value nib = (av >> 4u) & 0x0f0f0f0fu;
      Value as = bitcast(I, av);
      Value clamped = clamp_bytes(bs, lanes);
      y[i * 6u] = dot4(small, bs, cv);
      y[i * 6u + 1u] = dot4(bs, small, cv);
      y[i * 6u + 2u] = dot4(nib, bs, cv);
      y[i * 6u + 3u] = dot4(bs, nib, cv);
      y[i * 6u + 4u] = dot4(as, clamped, cv);
      y[i * 6u + 5u] = dot4(clamped, as, cv);
    });
  });
}

ir::Kernel dot4_pair_packed(int lanes) {
  return kernel("dot4_pair_l" + std::to_string(lanes), [&](KernelBuilder& kb) {
    const ir::Type U = lanes == 1 ? u32 : line(u32, lanes), I = lanes == 1 ? i32 : line(i32, lanes);
    auto a = kb.input("a", U);
    auto b = kb.input("b", U);
    auto c = kb.input("c", I);
    auto y = kb.output("y", I);  // 2 results per element
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      // Two dot4 of unsigned bytes below 64 chained through the accumulator
      // (one expression on AVX2: the pair sums add in 16 bits, at most
      // 4·63·128), and the same chain with bytes up to 127, which must not
      // add there (it would saturate).
      Value av = a[i], bs = bitcast(I, Value(b[i])), cv = c[i];
      Value bs2 = bitcast(I, Value(b[i]) >> 3u);
      y[i * 2u] = dot4(av & 0x3f3f3f3fu, bs, dot4((av >> 2u) & 0x3f3f3f3fu, bs2, cv));
      y[i * 2u + 1u] = dot4(av & 0x7f7f7f7fu, bs, dot4((av >> 1u) & 0x7f7f7f7fu, bs2, cv));
    });
  });
}

namespace {

// n packed words a, b (every bit pattern), accumulators c near the i32
// range's ends (wrapping), `outputs` results per element; exact.
ir::Workload packed_workload(int64_t n, int outputs) {
  ir::Workload w;
  w.dims = grid_1d(n, 64);
  w.buffers = {input_spec(n, 0, 4294967295.0), input_spec(n, 0, 4294967295.0), input_spec(n, -2147483648.0, 2147483647.0),
               output_spec(outputs * n)};
  w.scalars = {ir::scalar_slot(uint32_t(n))};
  w.tolerance = 0;
  return w;
}

}  // namespace

void register_dot4() {
  for (int lanes : {1, 4, 8, 16}) {
    register_kernel({dot4_small_packed(lanes).name,
                     "y = dot4(a, b, c) of unsigned bytes below 128 (masked, shifted) and signed bytes, and of "
                     "signed bytes and signed bytes clamped to >= -127",
                     [lanes] { return dot4_small_packed(lanes); },
                     [](int64_t n) { return packed_workload(n, 6); },
                     1 << 16, {1, 7, 100}});
    register_kernel({dot4_pair_packed(lanes).name,
                     "y = dot4(a, b, dot4(a2, b2, c)) of unsigned bytes below 64 and of bytes up to 127, signed b",
                     [lanes] { return dot4_pair_packed(lanes); },
                     [](int64_t n) { return packed_workload(n, 2); },
                     1 << 16, {1, 7, 100}});
    register_kernel({dot4_packed(lanes).name, "y = dot4(a, b, c) for the 4 signedness pairs of a, b (packed bytes)",
                     [lanes] { return dot4_packed(lanes); },
                     [](int64_t n) { return packed_workload(n, 4); },
                     1 << 16, {1, 7, 100}});
  }
}

}  // namespace kgen::samples
