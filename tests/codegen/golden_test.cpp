// Golden tests: the emitted C++ of a few kernels is compared to files in
// tests/codegen/golden/. KGEN_UPDATE_GOLDEN=1 rewrites them.
#include <doctest/doctest.h>

#include "tests/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/cpp.h"
#include "codegen/target.h"
#include "tests/codegen/test_kernels.h"

namespace {

void check_golden(const std::string& name, const std::string& text) { kgen::test::check_golden("codegen/golden", name, text); }

// The body after the prelude (the prelude is tested by compiling it).
std::string body(const std::string& src) {
  size_t p = src.find("// ---- end of prelude ----");
  return p == std::string::npos ? src : src.substr(p);
}

}  // namespace

TEST_CASE("golden: saxpy") { check_golden("saxpy.cpp", body(kgen::codegen::emit_cpp(kgen::test::saxpy()))); }
TEST_CASE("golden: reduce_sum (barriers, shared memory, regions)") {
  check_golden("reduce_sum.cpp", body(kgen::codegen::emit_cpp(kgen::test::reduce_sum())));
}
TEST_CASE("golden: lines8 (vector lines, lane-wise fallback, reduce)") {
  check_golden("lines8.cpp", body(kgen::codegen::emit_cpp(kgen::test::lines(8))));
}
TEST_CASE("golden: matmul_tiled (spilled per-item variable)") {
  check_golden("matmul_tiled.cpp", body(kgen::codegen::emit_cpp(kgen::test::matmul_tiled())));
}

TEST_CASE("a line built from lanes of two lines is one shufflevector; of three, an initializer list") {
  const std::string src = body(kgen::codegen::emit_cpp(kgen::test::lane_shuffles()));
  INFO(src);
  CHECK(src.find(", 3, 4, 6, 1)") != std::string::npos);  // table c ++ a (first seen first): a lane 0 is lane 4
  CHECK(src.find("__builtin_shufflevector(") == src.rfind("__builtin_shufflevector("));
  CHECK(src.find("f32x4{") != std::string::npos);
}

TEST_CASE("capabilities: subgroups refused on the CPU with the capability named") {
  try {
    kgen::codegen::emit_cpp(kgen::test::subgroup_sum());
    FAIL("expected an error");
  } catch (const kgen::ir::Error& e) {
    std::string m = e.what();
    CHECK(m.find("subgroup") != std::string::npos);
    CHECK(m.find("target 'cpu' has no subgroups") != std::string::npos);
  }
  kgen::codegen::TargetCaps c = kgen::codegen::cpu_caps();
  c.name = "tiny";
  c.f16 = false;
  CHECK_THROWS_WITH_AS(kgen::codegen::check_capabilities(kgen::test::half_math(), c),
                       doctest::Contains("has no f16 support"), kgen::ir::Error);
}

TEST_CASE("barriers without a fixed workgroup are refused clearly") {
  kgen::ir::Kernel k = kgen::test::reduce_sum();
  k.workgroup_size = {0, 0, 0};
  CHECK_THROWS_WITH_AS(kgen::codegen::emit_cpp(k), doctest::Contains("fixed workgroup"), kgen::ir::Error);
}

TEST_CASE("the prelude carries the helpers a kernel uses, and only those") {
  using kgen::codegen::emit_cpp;
  auto has = [](const std::string& src, const char* what) { return src.find(what) != std::string::npos; };
  const std::string saxpy = emit_cpp(kgen::test::saxpy());
  CHECK_FALSE(has(saxpy, "KG_LINES("));  // no line types
  CHECK_FALSE(has(saxpy, "kg_atomic_min("));
  CHECK_FALSE(has(saxpy, "kg_map1("));
  CHECK_FALSE(has(saxpy, "kg_expf("));
  const std::string lines = emit_cpp(kgen::test::lines(8));
  CHECK(has(lines, "KG_LINES(f32)"));
  const std::string histogram = emit_cpp(kgen::test::histogram());  // an add: __atomic_fetch_add, no helper
  CHECK_FALSE(has(histogram, "kg_atomic_min("));
  const std::string math = emit_cpp(kgen::test::transcendental());
  CHECK(has(math, "KG_MATH f32 kg_expf("));
  CHECK(has(math, "KG_MATH f32 kg_fbits("));  // the chunk exp builds on
  const std::string casts = emit_cpp(kgen::test::casts());
  CHECK(has(casts, "static inline I kg_sat("));
}
