// Prefetch hints, `x[i].prefetch()`: a statement that means nothing (the
// interpreter skips it, even past the end of the buffer), survives the IR
// passes and the text round trip, becomes __builtin_prefetch in the C++
// dialect, and is dropped by the GPU dialects.
#include <doctest/doctest.h>

#include "codegen/cpp.h"
#include "codegen/cuda.h"
#include "codegen/glsl_dialect.h"
#include "codegen/wgsl_dialect.h"
#include "dsl/dsl.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// y[i] = 2 x[i], prefetching x `ahead` elements further (past the end near
// it), into every cache level, (l2) from the second on, or (w) y for
// writing.
enum class Hint { L1, L2, Write };
ir::Kernel prefetch_kernel(uint32_t ahead, Hint hint = Hint::L1) {
  const char* tag = hint == Hint::L2 ? "_l2" : hint == Hint::Write ? "_w" : "";
  return kernel("hint_ahead_" + std::to_string(ahead) + tag, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(64);
    auto i = global_id(0);
    if_(i < n, [&] {
      if (hint == Hint::L2) x[i + ahead].prefetch_l2();
      else if (hint == Hint::Write) y[i + ahead].prefetch_write();
      else x[i + ahead].prefetch();
      y[i] = x[i] * 2.0f;
    });
  });
}

int count_prefetches(const ir::Kernel& k) {
  int n = 0;
  ir::walk(k.body, [&](const ir::Instr& in) { n += in.op == ir::Op::Prefetch; });
  return n;
}

}  // namespace

TEST_CASE("x[i].prefetch() records a prefetch that verifies, prints, parses and survives the passes") {
  ir::Kernel k = prefetch_kernel(1000);
  CHECK(count_prefetches(k) == 1);
  ir::verify(k);
  const std::string text = ir::print(k);
  CHECK(text.find("prefetch") != std::string::npos);
  ir::Kernel back = ir::parse_kernel(text);
  CHECK(ir::print(back) == text);
  ir::Kernel opt = k;
  ir::default_pipeline().run(opt);
  CHECK(count_prefetches(opt) == 1);  // no result, but kept: its point is when it runs
  CHECK_THROWS_AS(kernel("shared_prefetch",
                         [](KernelBuilder& kb) {
                           kb.workgroup(4);
                           auto s = shared_array(f32, 4);
                           s[local_id(0)].prefetch();
                         }),
                  ir::Error);
}

TEST_CASE("prefetch_l2() prints as 'l2', round-trips, and lowers to a locality-2 prefetch; unknown hints are refused") {
  ir::Kernel k = prefetch_kernel(64, Hint::L2);
  ir::verify(k);
  const std::string text = ir::print(k);
  CHECK(text.find(" l2") != std::string::npos);
  ir::Kernel back = ir::parse_kernel(text);
  CHECK(ir::print(back) == text);
  const std::string cpp = codegen::emit_cpp(k);
  CHECK(cpp.find(", 0, 2)") != std::string::npos);  // prefetcht1
  CHECK(codegen::emit_cpp(prefetch_kernel(64)).find(", 0, 3)") != std::string::npos);  // prefetcht0
  // "nontemporal" is a store's word, not a prefetch's.
  std::string bad = text;
  bad.replace(bad.find(" l2"), 3, " nontemporal");
  CHECK_THROWS_AS(ir::parse_kernel(bad), std::exception);
  ir::walk_mut(k.body, [](ir::Instr& in) {
    if (in.op == ir::Op::Prefetch) in.attr = 7;
  });
  CHECK_THROWS_WITH_AS(ir::verify(k), doctest::Contains("unknown prefetch hint 7"), ir::Error);
}

TEST_CASE("prefetch_write() on an output prints as 'w', round-trips, and lowers to a write prefetch") {
  ir::Kernel k = prefetch_kernel(64, Hint::Write);
  ir::verify(k);  // a write-only buffer may be prefetched for writing
  const std::string text = ir::print(k);
  CHECK(text.find(" w\n") != std::string::npos);
  ir::Kernel back = ir::parse_kernel(text);
  CHECK(ir::print(back) == text);
  CHECK(codegen::emit_cpp(k).find(", 1, 3)") != std::string::npos);  // rw 1: prefetchw
}

TEST_CASE("the C++ dialect prefetches; the GPU dialects drop the hint") {
  ir::Kernel k = prefetch_kernel(16);
  CHECK(codegen::emit_cpp(k).find("__builtin_prefetch(") != std::string::npos);
  CHECK(codegen::emit_cuda(k).find("prefetch") == std::string::npos);
  CHECK(codegen::emit_glsl(k).find("prefetch") == std::string::npos);
  CHECK(codegen::emit_wgsl(k).find("prefetch") == std::string::npos);
}

TEST_CASE("prefetches past the end change nothing: the interpreter and every device agree") {
  for (const std::string& name : rt::available_devices()) {
    std::unique_ptr<rt::Device> dev;
    try {
      dev = rt::create_device(name);
    } catch (const std::exception& e) {
      MESSAGE("skip " << name << ": " << e.what());
      continue;
    }
    for (uint32_t ahead : {0u, 16u, 100000u})
      for (size_t n : {size_t(1), size_t(77), size_t(1000)})
        for (Hint hint : {Hint::L1, Hint::L2, Hint::Write}) {
        CAPTURE(name);
        CAPTURE(ahead);
        CAPTURE(n);
        CAPTURE(int(hint));
        ir::Workload w;
        w.dims.grid = {uint32_t((n + 63) / 64), 1, 1};
        w.dims.workgroup = {64, 1, 1};
        w.buffers = {{n, -2.0, 2.0, true, false}, {n, 0, 0, false, true}};
        w.scalars = {ir::scalar_slot(uint32_t(n))};
        w.tolerance = 0;
        rt::CheckOptions co;
        co.time = false;
        co.seed = 5 + n;
        rt::CheckResult r = rt::run_and_check(*dev, prefetch_kernel(ahead, hint), w, co);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(r.cmp.never_written == 0);
        }
  }
}
