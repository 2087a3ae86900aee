// Misuse of the DSL is an ir::Error naming the user's file:line (checked
// against __LINE__ of the offending statement).
#include <doctest/doctest.h>

#include "dsl/dsl.h"
#include "tests/dsl/test_util.h"

using namespace kgen;
using namespace kgen::dsl;
using kgen::dsl::test::expect_dsl_error;

TEST_CASE("literal that does not fit the other operand's type") {
  int line = 0;
  expect_dsl_error("literal 300 is not representable as u8", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto x = kb.input("x", u8);
    line = __LINE__; auto y = x[0] + 300;
    (void)y;
  }); });
  expect_dsl_error("literal -1 is not representable as u32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    line = __LINE__; auto y = global_id(0) + -1;
    (void)y;
  }); });
  expect_dsl_error("literal 2.5 is not representable as u32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    line = __LINE__; auto y = global_id(0) * 2.5;
    (void)y;
  }); });
  expect_dsl_error("literal 2 is not representable as i32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto n = kb.scalar("n", i32);
    line = __LINE__; auto y = n * 2.0;  // float literals never become ints, even when integral
    (void)y;
  }); });
  expect_dsl_error("literal 2049 is not exactly representable as f16", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto h = kb.scalar("h", f16);
    line = __LINE__; auto y = h + 2049;
    (void)y;
  }); });
  expect_dsl_error("literal 100000 overflows f16", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto h = kb.scalar("h", f16);
    line = __LINE__; auto y = h + 1e5;
    (void)y;
  }); });
  expect_dsl_error("cannot be used as bool", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto n = kb.scalar("n", u32);
    line = __LINE__; auto y = select(1, n, n);
    (void)y;
  }); });
}

TEST_CASE("handles of different types do not mix") {
  int line = 0;
  expect_dsl_error("add: operand types differ: f32 vs u32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto i = global_id(0);
    line = __LINE__; auto y = x[i] + i;
    (void)y;
  }); });
  expect_dsl_error("stored value is i32 but buffer 'y' holds f32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", i32);
    line = __LINE__; y[0] = n;
  }); });
  expect_dsl_error("add: operand types differ: f32 vs f64", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto d = kb.scalar("d", f64);
    Var acc = var(0.0f);
    line = __LINE__; acc += d;
  }); });
  expect_dsl_error("&& needs bool operands, got u32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto i = global_id(0);
    line = __LINE__; auto y = i && i;
    (void)y;
  }); });
}

TEST_CASE("store to a read-only buffer") {
  int line = 0;
  expect_dsl_error("write to read-only buffer 'x'", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto i = global_id(0);
    line = __LINE__; x[i] = 1.0f;
  }); });
  expect_dsl_error("read from write-only buffer 'y'", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto y = kb.output("y", f32);
    line = __LINE__; y[1] += 1.0f;
  }); });
}

TEST_CASE("line helpers report the caller's line, not their own") {
  int line = 0;
  expect_dsl_error("write to read-only buffer 'x'", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    line = __LINE__; store_line(x, global_id(0), splat(1.0f, 16));
  }); });
  expect_dsl_error("read from write-only buffer 'y'", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto y = kb.output("y", f32);
    line = __LINE__; auto v = load_line(y, global_id(0) * 16u);
    (void)v;
  }); });
}

TEST_CASE("handles outside their kernel") {
  int line = 0;
  Value leaked;
  Array leaked_buf;
  kernel("a", [&](KernelBuilder& kb) {
    leaked_buf = kb.inout("x", f32);
    leaked = global_id(0);
  });
  expect_dsl_error("belongs to another kernel, not 'b'", line, [&] { kernel("b", [&](KernelBuilder& kb) {
    auto y = kb.inout("y", u32);
    line = __LINE__; y[0] = leaked;
  }); });
  expect_dsl_error("belongs to another kernel", line, [&] { kernel("b", [&](KernelBuilder& kb) {
    line = __LINE__; leaked_buf[0] = 1.0f;
  }); });
  expect_dsl_error("used outside of a kernel", line, [&] { line = __LINE__; auto y = leaked + 1; (void)y; });
  expect_dsl_error("used outside of a kernel", line, [&] { line = __LINE__; auto y = global_id(0); (void)y; });
  expect_dsl_error("empty value handle", line, [&] { kernel("c", [&](KernelBuilder& kb) {
    Value nothing;
    line = __LINE__; auto y = nothing * 2;
    (void)y;
  }); });
}

TEST_CASE("values do not escape the block that defines them") {
  int line = 0;
  expect_dsl_error("is out of scope here", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto y = kb.output("y", u32);
    auto i = global_id(0);
    Value inner;
    if_(i < 10, [&] { inner = i * 2; });
    line = __LINE__; y[i] = inner;
  }); });
}

TEST_CASE("structure: shared arrays, parameters, break, else_") {
  int line = 0;
  expect_dsl_error("shared arrays must be declared at the top level", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto i = global_id(0);
    if_(i < 4, [&] {
      line = __LINE__; auto sh = shared_array(f32, 64);
      (void)sh;
    });
  }); });
  expect_dsl_error("must be declared at the top level", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    for_range(0, 4, [&](Value) {
      line = __LINE__; auto x = kb.input("x", f32);
      (void)x;
    });
  }); });
  expect_dsl_error("duplicate parameter name 'x'", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    line = __LINE__; auto x2 = kb.scalar("x", f32);
    (void)x, (void)x2;
  }); });
  expect_dsl_error("break outside of a loop", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto i = global_id(0);
    if_(i < 4, [&] {
      line = __LINE__; break_();
    });
  }); });
  expect_dsl_error("else_ must directly follow its if_", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto y = kb.output("y", u32);
    auto i = global_id(0);
    auto chain = if_(i < 4, [&] { y[i] = 1; });
    y[i] = 2;
    line = __LINE__; std::move(chain).else_([&] { y[i] = 3; });
  }); });
  expect_dsl_error("workgroup size must be positive", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    line = __LINE__; kb.workgroup(64, 64);
  }); });
}

TEST_CASE("ops outside their domain report the op and the user's line") {
  int line = 0;
  expect_dsl_error("sqrt: needs a float type, got u32", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    line = __LINE__; auto y = sqrt(global_id(0));
    (void)y;
  }); });
  expect_dsl_error("atomics need 32- or 64-bit elements", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    auto h = kb.inout("h", u8);
    line = __LINE__; atomic_add(h[0], 1);
  }); });
}

TEST_CASE("barrier in divergent control flow is reported at the barrier") {
  int line = 0;
  expect_dsl_error("barrier", line, [&] { kernel("k", [&](KernelBuilder& kb) {
    kb.workgroup(64);
    auto sh = shared_array(f32, 64);
    sh[local_id(0)] = 0.0f;
    if_(local_id(0) < 3, [&] {
      line = __LINE__; barrier();
    });
  }); });
}
