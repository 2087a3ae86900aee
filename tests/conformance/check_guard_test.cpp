// run_and_check's guard bytes (runtimes/check.cpp): a store past a buffer's
// end on the device is reported with the buffer's name. The interpreter
// would refuse such a kernel first, so the check runs without it here,
// as a device-only codegen defect would present itself.
#include <doctest/doctest.h>

#include "dsl/dsl.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// y[i] = x[i] for i < n, plus `over` stores past y's n elements.
ir::Kernel copy_over(int over) {
  return kernel("check_guard_copy_" + std::to_string(over), [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    for_range(0u, n + uint32_t(over), [&](Value i) { y[i] = x[min(i, n - 1u)]; });
  });
}

ir::Workload workload(uint32_t n) {
  ir::Workload w;
  w.dims.grid = {1, 1, 1};
  w.dims.workgroup = {1, 1, 1};
  w.buffers = {{n}, {n, -1.0, 1.0, false, true}};
  w.scalars = {ir::scalar_slot(n)};
  return w;
}

}  // namespace

TEST_CASE("run_and_check names a buffer that a device kernel stored past the end of") {
  for (const std::string& name : rt::available_devices()) {
    CAPTURE(name);
    auto dev = rt::create_device(name);
    rt::CheckOptions co;
    co.time = false;
    co.check = false;
    CHECK(rt::run_and_check(*dev, copy_over(0), workload(37), co).ok);
    rt::CheckResult r = rt::run_and_check(*dev, copy_over(1), workload(37), co);
    CHECK_FALSE(r.ok);
    CHECK(r.message.find("past the end of buffer 'y'") != std::string::npos);
  }
}
