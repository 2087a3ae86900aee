// Golden GLSL for a few kernels (tests/vulkan/golden/); KGEN_UPDATE_GOLDEN=1
// rewrites them. The prelude is left out (it is compiled by the SPIR-V tests).
#include <doctest/doctest.h>

#include "tests/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/glsl_dialect.h"
#include "tests/codegen/test_kernels.h"

namespace {

void check_golden(const std::string& name, const std::string& text) { kgen::test::check_golden("vulkan/golden", name, text); }

// Interface declarations and main(), without the helper prelude.
std::string strip_prelude(const std::string& src) {
  size_t a = src.find("// ---- kgen GLSL prelude ----");
  size_t b = src.find("// ---- end of prelude ----\n");
  if (a == std::string::npos || b == std::string::npos) return src;
  return src.substr(0, a) + src.substr(b + 28);
}

}  // namespace

using kgen::codegen::emit_glsl;

TEST_CASE("golden glsl: saxpy (buffers, push constants)") { check_golden("saxpy.glsl", strip_prelude(emit_glsl(kgen::test::saxpy()))); }
TEST_CASE("golden glsl: reduce_sum (shared memory, barriers)") {
  check_golden("reduce_sum.glsl", strip_prelude(emit_glsl(kgen::test::reduce_sum())));
}
TEST_CASE("golden glsl: lines4 (vector lines, reduce)") { check_golden("lines4.glsl", strip_prelude(emit_glsl(kgen::test::lines(4)))); }
TEST_CASE("golden glsl: lines8 (8-lane lines as arrays, lane by lane)") {
  check_golden("lines8.glsl", strip_prelude(emit_glsl(kgen::test::lines(8))));
}
TEST_CASE("golden glsl: subgroup_sum (GL_KHR_shader_subgroup)") {
  check_golden("subgroup_sum.glsl", strip_prelude(emit_glsl(kgen::test::subgroup_sum())));
}

TEST_CASE("glsl refuses what it cannot express, naming the capability") {
  auto refused = [](const kgen::ir::Kernel& k, const kgen::codegen::GlslOptions& o, const std::string& what) {
    try {
      emit_glsl(k, o);
      FAIL("expected an error for " << k.name);
    } catch (const kgen::ir::Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
    }
  };
  kgen::codegen::GlslOptions narrow;
  narrow.caps.max_vector_lanes = 4;
  refused(kgen::test::lines(8), narrow, "allows at most 4");
  kgen::codegen::GlslOptions no_sg;
  no_sg.caps.subgroups = false;
  refused(kgen::test::subgroup_sum(), no_sg, "has no subgroups");
}
