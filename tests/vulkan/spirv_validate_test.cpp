// Every registered kernel, every elementwise (op, dtype) case and the codegen
// test kernels: GLSL -> SPIR-V in process, then spirv-val (Vulkan 1.2 rules).
// Kernels GLSL cannot express for the default (lavapipe-like) caps are skipped
// with the reason. Also reports the GLSL -> SPIR-V compile latency (median).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "codegen/glsl_dialect.h"
#include "dsl/registry.h"
#include "ir/passes.h"
#include "jit/spirv.h"
#include "ops/elementwise.h"
#include "samples/kernels/kernels.h"
#include "tests/codegen/test_kernels.h"

using namespace kgen;

namespace {

struct Tally {
  int pass = 0, skip = 0;
  std::map<std::string, int> reasons;
  std::vector<double> ms;
};

void validate(ir::Kernel k, Tally& t) {
  CAPTURE(k.name);
  ir::default_pipeline().run(k);
  std::string why = codegen::glsl_unsupported(k);
  if (!why.empty()) {
    ++t.skip;
    ++t.reasons[why.substr(why.find("'", why.find("'") + 1) + 1)];  // group by reason, not kernel name
    return;
  }
  std::string glsl = codegen::emit_glsl(k);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<uint32_t> spv;
  try {
    spv = jit::compile_glsl(glsl, k.name);
  } catch (const std::exception& e) {
    FAIL_CHECK(e.what());
    return;
  }
  t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  std::string err = jit::validate_spirv(spv);
  CHECK_MESSAGE(err.empty(), "spirv-val: " << err << "\n" << glsl);
  t.pass += err.empty();
}

void report(const char* what, Tally& t) {
  std::sort(t.ms.begin(), t.ms.end());
  double med = t.ms.empty() ? 0 : t.ms[t.ms.size() / 2];
  MESSAGE(std::string(what) << ": " << t.pass << " valid, " << t.skip << " skipped; GLSL->SPIR-V median " << med << " ms over "
               << t.ms.size() << " compiles");
  for (const auto& [r, n] : t.reasons) MESSAGE("  skipped x" << n << ":" << r);
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
  Tally t;
  for (const auto& e : dsl::registered_kernels()) validate(e.build(), t);
  for (auto k : {test::saxpy(), test::saxpy_loop(), test::reduce_sum(), test::histogram(), test::lines(4), test::lines(2),
                 test::transcendental(), test::half_math(), test::casts(), test::matmul_tiled(), test::subgroup_sum()})
    validate(k, t);
  report("registered + codegen test kernels", t);
  CHECK(t.pass > 0);
}

TEST_CASE("every elementwise op x dtype passes spirv-val") {
  Tally t;
  for (const auto& c : ops::all_elementwise_cases()) validate(ops::elementwise_map(c.op, c.dtype), t);
  report("elementwise cases", t);
  CHECK(t.pass > 100);
}
