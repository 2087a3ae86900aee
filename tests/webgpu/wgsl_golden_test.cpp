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

TEST_CASE("golden wgsl: legalisations (packed 8/16-bit storage, f16, 8-lane lines, own transcendentals)") {
  check_golden("casts.wgsl", emit_wgsl(kgen::test::casts()));            // i8/u8 packed in u32 words, atomicAnd/Or stores
  check_golden("half_math.wgsl", emit_wgsl(kgen::test::half_math()));    // f16 packed, rounded with kg_rf16
  kgen::codegen::WgslOptions f16;
  f16.shader_f16 = true;
  check_golden("half_math_f16.wgsl", emit_wgsl(kgen::test::half_math(), f16));  // enable f16; array<f16>
  check_golden("lines8.wgsl", emit_wgsl(kgen::test::lines(8)));          // array<f32, 8> values, lane by lane
  check_golden("transcendental.wgsl", emit_wgsl(kgen::test::transcendental()));  // kg_exp, kg_tanh, kg_erf
}

TEST_CASE("wgsl refuses what it cannot express, naming the capability") {
  refused(kgen::test::subgroup_sum(), "subgroup");
  kgen::ir::Kernel k = kgen::test::saxpy();
  k.name = "saxpy_f64";
  for (auto& b : k.buffers) b.elem = kgen::ir::types::F64;
  refused(k, "f64");
}
