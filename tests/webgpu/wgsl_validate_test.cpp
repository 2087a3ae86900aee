// Every registered kernel, every elementwise (op, dtype) case and the codegen
// test kernels: WGSL -> wgpu-native (naga) shader module + compute pipeline on
// the first adapter (lavapipe in CI), with and without shader-f16. Kernels
// WGSL cannot express are skipped with the reason, and the counts are printed.
// Also reports the median time to create the module + pipeline.
#include <doctest/doctest.h>

#include "codegen/wgsl_dialect.h"
#include "dsl/registry.h"
#include "ops/elementwise/elementwise.h"
#include "runtimes/wgpu_validate.h"
#include "samples/kernels/kernels.h"
#include "tests/gpu_validation.h"

using namespace kgen;

namespace {

// wgpu unavailable (no library, no adapter) is a skip of the whole suite with
// the reason, never a silent pass: the message is printed.
bool have_wgpu() {
  std::string why;
  if (rt::wgpu_available(&why)) return true;
  MESSAGE("SKIPPED: " << why);
  return false;
}

test::GpuValidator wgsl(bool shader_f16) {
  codegen::WgslOptions o;
  o.shader_f16 = shader_f16;
  return {[o](const ir::Kernel& k) { return codegen::wgsl_unsupported(k, o); },
          [o](const ir::Kernel& k) { return codegen::emit_wgsl(k, o); },
          [](const std::string& src, const ir::Kernel&) {
            std::string e = rt::validate_wgsl(src);
            return e.empty() ? e : "wgpu: " + e;
          }};
}

void report(const char* what, test::Tally& t) { test::report(what, "module+pipeline (" + rt::wgpu_adapter_name() + ")", t); }

}  // namespace

TEST_CASE("invalid WGSL is rejected with naga's message") {
  if (!have_wgpu()) return;
  std::string err = rt::validate_wgsl("@compute @workgroup_size(1) fn main() { let x: u32 = 1i; }");
  CHECK_MESSAGE(err.find("u32") != std::string::npos, err);
}

TEST_CASE("every registered kernel passes wgpu validation") {
  if (!have_wgpu()) return;
  samples::register_all();
  test::Tally t;
  for (const auto& e : dsl::registered_kernels()) test::validate_kernel(wgsl(false), e.build(), t);
  for (auto& k : test::codegen_test_kernels()) test::validate_kernel(wgsl(false), k, t);
  report("registered + codegen test kernels", t);
  CHECK(t.pass > 0);
}

TEST_CASE("every elementwise op x dtype passes wgpu validation") {
  if (!have_wgpu()) return;
  test::Tally t;
  for (const auto& c : ops::all_elementwise_cases()) test::validate_kernel(wgsl(false), ops::elementwise_map(c.op, c.dtype), t);
  report("elementwise cases", t);
  CHECK(t.pass > 200);
}

TEST_CASE("f16 kernels pass wgpu validation with `enable f16` where the adapter has shader-f16") {
  if (!have_wgpu()) return;
  if (!rt::wgpu_has_shader_f16()) {
    MESSAGE("SKIPPED: the adapter has no shader-f16 feature (f16 stays packed in u32 words)");
    return;
  }
  test::Tally t;
  test::validate_kernel(wgsl(true), test::half_math(), t);
  for (const auto& c : ops::all_elementwise_cases())
    if (c.dtype.kind == ir::ScalarKind::F16) test::validate_kernel(wgsl(true), ops::elementwise_map(c.op, c.dtype), t);
  report("f16 kernels with shader-f16", t);
  CHECK(t.pass > 10);
}
