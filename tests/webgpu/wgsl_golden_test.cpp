// Golden WGSL for a few kernels (tests/webgpu/golden/); KGEN_UPDATE_GOLDEN=1
// rewrites them. Also: what WGSL refuses, it refuses naming the capability.
#include <doctest/doctest.h>

#include "tests/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/wgsl_dialect.h"
#include "tests/codegen/test_kernels.h"

namespace {

void check_golden(const std::string& name, const std::string& text) { kgen::test::check_golden("webgpu/golden", name, text); }

void refused(const kgen::ir::Kernel& k, const std::string& what) {
  try {
    kgen::codegen::emit_wgsl(k);
    FAIL("expected an error for " << k.name);
  } catch (const kgen::ir::Error& e) {
    CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
  }
}

}  // namespace

using kgen::codegen::emit_wgsl;

TEST_CASE("golden wgsl: saxpy (storage buffers, uniform scalars)") { check_golden("saxpy.wgsl", emit_wgsl(kgen::test::saxpy())); }
TEST_CASE("golden wgsl: reduce_sum (var<workgroup>, barriers, loops)") {
  check_golden("reduce_sum.wgsl", emit_wgsl(kgen::test::reduce_sum()));
}

TEST_CASE("wgsl refuses what it cannot express, naming the capability") {
  refused(kgen::test::subgroup_sum(), "subgroup");
  refused(kgen::test::half_math(), "f16");
  refused(kgen::test::lines(8), "lanes");
}
