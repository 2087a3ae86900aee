// Every registered kernel, every elementwise (op, dtype) case and the codegen
// test kernels: GLSL -> SPIR-V in process, then spirv-val (Vulkan 1.2 rules).
// Kernels GLSL cannot express for the default (lavapipe-like) caps are skipped
// with the reason. Also reports the GLSL -> SPIR-V compile latency (median).
#include <doctest/doctest.h>

#include "codegen/glsl_dialect.h"
#include "dsl/registry.h"
#include "jit/spirv.h"
#include "ops/elementwise/elementwise.h"
#include "samples/kernels/kernels.h"
#include "tests/gpu_validation.h"

using namespace kgen;

namespace {

// Compiles and validates in the timed part (the compile is the latency reported).
test::GpuValidator glsl() {
  return {[](const ir::Kernel& k) { return codegen::glsl_unsupported(k); },
          [](const ir::Kernel& k) { return codegen::emit_glsl(k); },
          [](const std::string& src, const ir::Kernel& k) -> std::string {
            std::vector<uint32_t> spv;
            try {
              spv = jit::compile_glsl(src, k.name);
            } catch (const std::exception& e) {
              return e.what();
            }
            std::string err = jit::validate_spirv(spv);
            return err.empty() ? err : "spirv-val: " + err;
          }};
}

}  // namespace

TEST_CASE("shaderc is linked") { CHECK(jit::spirv_available()); }

TEST_CASE("compile errors carry the log and the numbered source") {
  try {
    jit::compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undefined_thing(); }\n", "bad");
    FAIL("expected an error");
  } catch (const jit::SpirvCompileError& e) {
    std::string m = e.what();
    CHECK(m.find("undefined_thing") != std::string::npos);
    CHECK(m.find("   3| void main()") != std::string::npos);
  }
}

TEST_CASE("every registered kernel passes spirv-val") {
  samples::register_all();
  test::Tally t;
  for (const auto& e : dsl::registered_kernels()) test::validate_kernel(glsl(), e.build(), t);
  for (auto& k : test::codegen_test_kernels()) test::validate_kernel(glsl(), k, t);
  test::report("registered + codegen test kernels", "GLSL->SPIR-V+spirv-val", t);
  CHECK(t.pass > 0);
}

TEST_CASE("every elementwise op x dtype passes spirv-val") {
  test::Tally t;
  for (const auto& c : ops::all_elementwise_cases()) test::validate_kernel(glsl(), ops::elementwise_map(c.op, c.dtype), t);
  test::report("elementwise cases", "GLSL->SPIR-V+spirv-val", t);
  CHECK(t.pass > 100);
}
