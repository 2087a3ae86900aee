// The op checker itself (ops/core/executor.cpp check_op), on a test-only op whose
// variants are right or wrong in known ways: it must pass the right one and
// name each defect of the others. Its own binary: the op it registers must
// not enter the conformance suite's sweep over every registered op.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "dsl/dsl.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// y = x (n f32), through a temporary: copy x → t, then t → y. Variant
// `bug`: 0 none, 1 one element stored past the end of y, 2 past the end of
// the temporary, 3 the last element of y never stored.
ir::Kernel copy_kernel(const std::string& name, int over, bool skip_last) {
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    Value end = over ? n + 1u : skip_last ? n - 1u : n;
    for_range(0u, end, [&](Value i) { y[i] = x[min(i, n - 1u)]; });
  });
}

void register_copy_op() {
  static bool done = false;
  if (done) return;
  done = true;
  ops::register_all_ops();
  ops::OpDef d;
  d.name = "test_copy";
  d.description = "y = x through a temporary, with known defects per variant (tests only)";
  d.dims_help = "n";
  d.inputs = [](const ops::Problem& p) { return std::vector{ops::tensor("x", f32, {p.dim(0)})}; };
  d.outputs = [](const ops::Problem& p) { return std::vector{ops::tensor("y", f32, {p.dim(0)})}; };
  d.candidates = [](const ops::Problem&, const codegen::TargetCaps&) {
    std::vector<ops::Variant> v;
    for (int b = 0; b < 4; ++b) v.push_back(ops::Variant{}.set("bug", b));
    return v;
  };
  d.heuristic = [](const ops::Problem&, const codegen::TargetCaps&) { return ops::Variant{}.set("bug", 0); };
  d.plan = [](const ops::Problem& p, const ops::Variant& v, const codegen::TargetCaps&) {
    const int bug = int(v.get("bug"));
    const uint32_t n = uint32_t(p.dim(0));
    ops::Plan pl;
    const int t = pl.add_temp(2, size_t(n) * 4);
    ops::Step a{copy_kernel("test_copy_in_b" + std::to_string(bug), bug == 2, false), {}, {0, t}, {ir::scalar_slot(n)}};
    ops::Step b{copy_kernel("test_copy_out_b" + std::to_string(bug), bug == 1, bug == 3), {}, {t, 1}, {ir::scalar_slot(n)}};
    for (auto* s : {&a, &b}) s->dims.grid = {1, 1, 1}, s->dims.workgroup = {1, 1, 1};
    pl.steps = {a, b};
    return pl;
  };
  d.reference = [](const ops::Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    std::memcpy(out[0], in[0], size_t(p.dim(0)) * 4);
  };
  ops::register_op(std::move(d));
}

ops::OpCheck check_copy(rt::Device& dev, int bug) {
  return ops::check_op(dev, test::problem("test_copy", {37}), ops::Variant{}.set("bug", bug), test::fresh_seed());
}

}  // namespace

TEST_CASE("the op check passes a right plan and names stores past a buffer's end and unwritten outputs") {
  register_copy_op();
  std::vector<std::unique_ptr<rt::Device>> devs;
  devs.push_back(test::cpu(1));
  for (const std::string& name : test::gpu_device_names())
    if (test::have_device(name)) devs.push_back(rt::create_device(name));
  for (auto& dev : devs) {
    CAPTURE(dev->name());
    ops::OpCheck ok = check_copy(*dev, 0);
    INFO(ok.message);
    CHECK(ok.ok);
    ops::OpCheck y = check_copy(*dev, 1);
    CHECK_FALSE(y.ok);
    CHECK(y.message.find("past the end of output 'y'") != std::string::npos);
    ops::OpCheck t = check_copy(*dev, 2);
    CHECK_FALSE(t.ok);
    CHECK(t.message.find("past the end of temporary 0") != std::string::npos);
    ops::OpCheck u = check_copy(*dev, 3);
    CHECK_FALSE(u.ok);
    CHECK(u.message.find("never written") != std::string::npos);
  }
}
