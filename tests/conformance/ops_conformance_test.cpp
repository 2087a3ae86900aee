// Every unary, binary and compare IR op on every scalar dtype its domain
// accepts, JIT-compiled for the CPU and checked against the interpreter on
// fresh random inputs (odd n, poisoned outputs): the per-op table of each
// dialect is exercised entry by entry, as ggml's test-backend-ops does.
#include <doctest/doctest.h>

#include <random>

#include "ops/elementwise.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;

TEST_CASE("every elementwise op x dtype matches the interpreter on the CPU") {
  auto dev = rt::create_device("cpu");
  std::random_device rd;
  auto cases = ops::all_elementwise_cases();
  CHECK(cases.size() > 150);
  int passed = 0;
  for (const auto& c : cases) {
    const int64_t n = 1031;  // four full groups of 256 and a partial one
    uint64_t seed = (uint64_t(rd()) << 32) ^ rd();
    CAPTURE(std::string(ir::op_name(c.op)));
    CAPTURE(c.dtype.str());
    CAPTURE(seed);
    ir::Kernel k = ops::elementwise_map(c.op, c.dtype);
    ir::Workload w = ops::elementwise_workload(c.op, c.dtype, n);
    rt::CheckOptions co;
    co.seed = seed;
    co.time = false;
    rt::CheckResult r = rt::run_and_check(*dev, k, w, co);
    INFO(r.message);
    CHECK(r.ok);
    passed += r.ok;
  }
  MESSAGE(passed << " of " << cases.size() << " (op, dtype) cases pass");
}
