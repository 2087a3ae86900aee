// Lines at any element offset (dsl load_line/store_line): the C++ dialect
// emits a run of element loads that a construct gathers into a line, and a
// run of stores of a line's lanes, as one unaligned vector access
// (CEmitter::find_line_accesses), but only where no write (for loads) or no
// memory access at all (for stores) comes between the elements. The
// kernels here check both sides against the interpreter.
#include <doctest/doctest.h>

#include "codegen/cpp.h"
#include "dsl/dsl.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// y[16i ..] = 2 · x[16i + 5 ..]: an unaligned line in, a line out (the
// emitter cannot know either's alignment).
ir::Kernel shifted_lines() {
  return kernel("line_access_shifted", [](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    kb.workgroup(1);
    Value i = group_id(0);
    store_line(y, i * 16u, load_line(x, i * 16u + 5u) * 2.0f);
  });
}

// y[16i + b ..] = 2 · x[16i ..] by streaming line stores: aligned at b = 0
// (nontemporal), unaligned at b = 3 (kg_streamu stores those plainly; an
// unaligned nontemporal store would fault). y has 3 elements more than the
// lines: the first group zeroes those before the lines, the last those after.
ir::Kernel streamed_lines() {
  return kernel("line_access_streamed", [](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto b = kb.scalar("b", u32);
    kb.workgroup(1);
    Value i = group_id(0), n = num_groups(0);
    store_line(y, i * 16u + b, load_line(x, i * 16u) * 2.0f, true);
    if_(i == 0u, [&] { for_range(0u, b, [&](Value j) { y[j] = 0.0f; }); });
    if_(i == n - 1u, [&] { for_range(n * 16u + b, n * 16u + 3u, [&](Value j) { y[j] = 0.0f; }); });
  });
}

// Element runs that must stay elements: a store to s[0] after its load and
// before the construct (a line load there would read 42), and a load of
// s[1] between the stores of a line's lanes (storing the line at the first
// store would change what it reads).
ir::Kernel interrupted_runs() {
  return kernel("line_access_interrupted", [](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto b = kb.scalar("b", u32);  // 0: a runtime base, so the indices are b + j
    kb.workgroup(1);
    auto s = shared_array(f32, 4);
    Value i = group_id(0);
    for (uint32_t j = 0; j < 4; ++j) s[b + j] = x[i * 4u + j];
    Value a0 = s[b];
    s[b] = 42.0f;
    Value v = make_line(a0, s[b + 1u], s[b + 2u], s[b + 3u]);
    Value w = v + 1.0f;
    s[b] = extract(w, 0);
    Value t = s[b + 1u];  // the input's value, not w's lane 1
    s[b + 1u] = extract(w, 1);
    s[b + 2u] = extract(w, 2);
    s[b + 3u] = extract(w, 3);
    for (uint32_t j = 0; j < 4; ++j) y[i * 8u + j] = s[b + j];
    y[i * 8u + 4u] = t;
    y[i * 8u + 5u] = a0;
    y[i * 8u + 6u] = 0.0f;
    y[i * 8u + 7u] = 0.0f;
  });
}

// The same element runs uninterrupted: one vector access each.
ir::Kernel plain_runs() {
  return kernel("line_access_plain", [](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto b = kb.scalar("b", u32);
    kb.workgroup(1);
    auto s = shared_array(f32, 4);
    Value i = group_id(0);
    for (uint32_t j = 0; j < 4; ++j) s[b + j] = x[i * 4u + j];
    Value w = make_line(s[b], s[b + 1u], s[b + 2u], s[b + 3u]) + 1.0f;
    for (uint32_t j = 0; j < 4; ++j) s[b + j] = extract(w, int(j));
    for (uint32_t j = 0; j < 4; ++j) y[i * 4u + j] = s[b + j];
  });
}

rt::CheckResult run_cpu(const ir::Kernel& k, uint32_t groups, size_t in, size_t out, bool base = false) {
  auto dev = rt::create_device("cpu");
  ir::Workload w;
  w.dims.grid = {groups, 1, 1};
  w.dims.workgroup = {1, 1, 1};
  w.buffers = {{in, -2.0, 2.0, true, false}, {out, 0, 0, false, true}};
  if (base) w.scalars = {ir::scalar_slot(uint32_t(0))};
  w.tolerance = 0;
  rt::CheckOptions co;
  co.time = false;
  co.seed = 11;
  return rt::run_and_check(*dev, k, w, co);
}

}  // namespace

TEST_CASE("a line of element loads and a line of element stores become one vector access each in C++") {
  const std::string src = codegen::emit_cpp(shifted_lines());
  CHECK(src.find("kg_loadu<f32x16>(") != std::string::npos);
  CHECK(src.find("kg_storeu(") != std::string::npos);
  rt::CheckResult r = run_cpu(shifted_lines(), 7, 7 * 16 + 5, 7 * 16);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("a line of streaming element stores becomes one streaming store, aligned or not") {
  const std::string src = codegen::emit_cpp(streamed_lines());
  CHECK(src.find("kg_streamu(") != std::string::npos);
  CHECK(src.find("kg_stream_fence();") != std::string::npos);
  for (uint32_t b : {0u, 3u}) {
    CAPTURE(b);
    auto dev = rt::create_device("cpu");
    ir::Workload w;
    w.dims.grid = {7, 1, 1};
    w.dims.workgroup = {1, 1, 1};
    w.buffers = {{7 * 16, -2.0, 2.0, true, false}, {7 * 16 + 3, 0, 0, false, true}};
    w.scalars = {ir::scalar_slot(b)};
    w.tolerance = 0;
    rt::CheckOptions co;
    co.time = false;
    co.seed = 13;
    rt::CheckResult r = rt::run_and_check(*dev, streamed_lines(), w, co);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("element runs with a write between the loads, or a load between the stores, stay elements") {
  auto body = [](const ir::Kernel& k) {
    const std::string src = codegen::emit_cpp(k);
    return src.substr(src.find("extern \"C\" void "));  // the kernel, after the prelude's helpers
  };
  const std::string plain = body(plain_runs());
  CHECK(plain.find("kg_loadu<f32x4>(") != std::string::npos);
  CHECK(plain.find("kg_storeu(") != std::string::npos);
  const std::string interrupted = body(interrupted_runs());
  CHECK(interrupted.find("kg_loadu<") == std::string::npos);
  CHECK(interrupted.find("kg_storeu(") == std::string::npos);
  for (const ir::Kernel& k : {plain_runs(), interrupted_runs()}) {
    rt::CheckResult r = run_cpu(k, 5, 5 * 4, k.name == "line_access_plain" ? 5 * 4 : 5 * 8, true);
    INFO(k.name << ": " << r.message);
    CHECK(r.ok);
  }
}
