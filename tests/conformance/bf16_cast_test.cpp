// The f32 -> bf16 cast of lines (ir: nearest even, a NaN quieted with its
// sign and upper payload kept, subnormals rounded like any value). The C++
// dialect emits one vcvtneps2bf16 per 16-lane line on AVX512-BF16 hosts,
// which reads subnormal inputs as zero, so a line holding one must take the
// integer path; other widths always do. Checked bit for bit against
// ir::f32_to_bf16 on lines with and without subnormals, ties of both
// parities, NaN payloads that overflow a naive rounding, infinities and the
// values that round up to them.
#include <doctest/doctest.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <random>

#include "dsl/dsl.h"
#include "ir/half.h"
#include "ir/interpreter.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// out[i] = bits of bf16(x[i]) for lines of `lanes` (1: scalars).
ir::Kernel cast_kernel(int lanes) {
  return kernel("bf16_cast_check_" + std::to_string(lanes), [&](KernelBuilder& kb) {
    auto x = kb.input("x", lanes > 1 ? line(f32, lanes) : ir::Type(f32));
    auto out = kb.output("out", lanes > 1 ? line(u16, lanes) : ir::Type(u16));
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    Value i = group_id(0);
    if_(i < n, [&] {
      const ir::Type bt = lanes > 1 ? line(bf16, lanes) : ir::Type(bf16);
      const ir::Type ut = lanes > 1 ? line(u16, lanes) : ir::Type(u16);
      out[i] = bitcast(ut, cast(bt, x[i]));
    });
  });
}

std::vector<uint32_t> inputs() {
  std::vector<uint32_t> v;
  std::mt19937 rng(7);
  auto line_of = [&](auto&& gen) {
    for (int l = 0; l < 16; ++l) v.push_back(gen(l));
  };
  for (int r = 0; r < 8; ++r) line_of([&](int) { return rng(); });  // anything, NaNs included
  // Ties (low half exactly 0x8000) with even and odd kept bits, and one below/above.
  line_of([&](int l) { return 0x3f800000u + (uint32_t(l) << 16) + 0x8000u; });
  line_of([&](int l) { return 0xc0000000u + (uint32_t(l) << 16) + 0x8000u - (l % 2); });
  line_of([&](int l) { return 0x00800000u + (uint32_t(l) << 16) + 0x8000u + (l % 3); });  // smallest normals
  // NaN payloads: quiet, signalling, all ones (a naive rounding carries into the sign).
  line_of([&](int l) {
    const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0xffffffffu, 0x7fff8000u, 0xff800001u, 0x7fffe000u, 0x7f80ffffu};
    return nans[l % 8];
  });
  // Infinities, the largest finite values (round up to infinity or not), zeros.
  line_of([&](int l) {
    const uint32_t s[] = {0x7f800000u, 0xff800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f7f7fffu, 0x7f7f8000u, 0x0u, 0x80000000u};
    return s[l % 8];
  });
  // Subnormals: a whole line, one lane in an otherwise normal line (the fast
  // path must not take it), and subnormals that round up to the smallest normal.
  line_of([&](int l) { return (rng() & 0x007fffffu) | (l % 2 ? 0x80000000u : 0u); });
  line_of([&](int l) { return l == 11 ? 0x00000001u : 0x40490fdbu + uint32_t(l); });
  line_of([&](int l) { return 0x007f8000u + uint32_t(l) * 0x10u; });
  return v;
}

}  // namespace

TEST_CASE("f32 -> bf16 casts of lines and scalars on the CPU equal ir::f32_to_bf16 bit for bit") {
  auto dev = rt::create_device("cpu");
  const std::vector<uint32_t> in = inputs();
  for (int lanes : {16, 8, 4, 1}) {
    CAPTURE(lanes);
    const uint32_t n = uint32_t(in.size()) / uint32_t(lanes);
    auto k = cast_kernel(lanes);
    auto ck = dev->compile(k);
    auto x = dev->alloc(in.size() * 4), out = dev->alloc(in.size() * 2);
    x->upload(in.data(), in.size() * 4);
    std::vector<uint16_t> got(in.size(), 0xdead);
    out->upload(got.data(), got.size() * 2);
    rt::LaunchArgs args;
    args.dims.grid = {n, 1, 1};
    args.dims.workgroup = {1, 1, 1};
    args.buffers = {x.get(), out.get()};
    args.scalars = {ir::scalar_slot(n)};
    dev->launch(*ck, args);
    dev->synchronize();
    out->download(got.data(), got.size() * 2);
    // The interpreter agrees with the reference (it is the spec).
    std::vector<uint32_t> xi = in;
    std::vector<uint16_t> ref(in.size(), 0xdead);
    const ir::InterpBuffer bufs[] = {{reinterpret_cast<uint8_t*>(xi.data()), xi.size() * 4},
                                     {reinterpret_cast<uint8_t*>(ref.data()), ref.size() * 2}};
    ir::interpret(k, args.dims, bufs, args.scalars);
    int bad = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const uint16_t want = ir::f32_to_bf16(std::bit_cast<float>(in[i]));
      if (got[i] != want || ref[i] != want) {
        if (++bad <= 8) {
          char m[96];
          std::snprintf(m, sizeof m, "x = 0x%08x: got 0x%04x, interpreter 0x%04x, want 0x%04x", in[i], got[i], ref[i], want);
          MESSAGE(m);
        }
      }
    }
    CHECK(bad == 0);
  }
}
