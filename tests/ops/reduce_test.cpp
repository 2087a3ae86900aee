// The reduce family (ops/reduce/): every problem and candidate against the C++
// reference on the CPU, the interpreter and the GPU devices present; i64
// argmax indices on a target without 64-bit integers.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "codegen/target.h"
#include "codegen/wgsl_dialect.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

KGEN_OP_FAMILY_TESTS("reduce", "reduce")

// On targets without 64-bit integers (WGSL) an i64 argmax is the i32 one
// then its indices written as i64 words; through the interpreter with such
// caps, every candidate, rows and columns, a grid past one workgroup.
TEST_CASE("reduce: argmax with i64 indices on a target without 64-bit integers") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("reduce");
  const auto caps = codegen::wgsl_default_caps();
  REQUIRE(!caps.i64);
  for (auto [dims, axis] : {std::pair<std::vector<int64_t>, int64_t>{{37, 3}, 1}, {{5, 300, 2}, 1}, {{300, 7}, 0}}) {
    auto p = problem("reduce", dims, {{"axis", axis}, {"kind", 4}, {"idx", 1}});
    for (const auto& v : d->candidates(p, caps)) {
      CAPTURE(p.str());
      CAPTURE(v.str());
      // (The interpreter has 64-bit integers: the target's check is what refuses them.)
      for (const auto& st : d->plan(p, v, caps).steps) CHECK_NOTHROW(codegen::check_capabilities(st.kernel, caps));
      ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
      INFO(c.message);
      CHECK(c.ok);
    }
  }
}
