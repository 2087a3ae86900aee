// Every registered kernel, every elementwise (op, dtype) case and the codegen
// test kernels: WGSL -> wgpu-native (naga) shader module + compute pipeline on
// the first adapter (lavapipe in CI). Kernels WGSL cannot express are skipped
// with the reason, and the counts are printed. Also reports the median time to
// create the module + pipeline.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "codegen/wgsl_dialect.h"
#include "dsl/registry.h"
#include "ir/passes.h"
#include "ops/elementwise.h"
#include "runtimes/wgpu_validate.h"
#include "samples/kernels/kernels.h"
#include "tests/codegen/test_kernels.h"

using namespace kgen;

namespace {

struct Tally {
  int pass = 0, skip = 0;
  std::map<std::string, int> reasons;
  std::vector<double> ms;
};

// wgpu unavailable (no library, no adapter) is a skip of the whole suite with
// the reason, never a silent pass: the message is printed.
bool have_wgpu() {
  std::string why;
  if (rt::wgpu_available(&why)) return true;
  MESSAGE("SKIPPED: " << why);
  return false;
}

void validate(ir::Kernel k, Tally& t) {
  CAPTURE(k.name);
  ir::default_pipeline().run(k);
  std::string why = codegen::wgsl_unsupported(k);
  if (!why.empty()) {
    ++t.skip;
    ++t.reasons[why.substr(why.find("'", why.find("'") + 1) + 1)];  // group by reason, not kernel name
    return;
  }
  std::string wgsl = codegen::emit_wgsl(k);
  auto t0 = std::chrono::steady_clock::now();
  std::string err = rt::validate_wgsl(wgsl);
  t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  CHECK_MESSAGE(err.empty(), "wgpu: " << err << "\n" << wgsl);
  t.pass += err.empty();
}

void report(const char* what, Tally& t) {
  std::sort(t.ms.begin(), t.ms.end());
  double med = t.ms.empty() ? 0 : t.ms[t.ms.size() / 2];
  MESSAGE(std::string(what) << ": " << t.pass << " valid, " << t.skip << " skipped; module+pipeline median " << med << " ms over "
               << t.ms.size() << " (" << rt::wgpu_adapter_name() << ")");
  for (const auto& [r, n] : t.reasons) MESSAGE("  skipped x" << n << ":" << r);
}

}  // namespace

TEST_CASE("invalid WGSL is rejected with naga's message") {
  if (!have_wgpu()) return;
  std::string err = rt::validate_wgsl("@compute @workgroup_size(1) fn main() { let x: u32 = 1i; }");
  CHECK_MESSAGE(err.find("u32") != std::string::npos, err);
}

TEST_CASE("every registered kernel passes wgpu validation") {
  if (!have_wgpu()) return;
  samples::register_all();
  Tally t;
  for (const auto& e : dsl::registered_kernels()) validate(e.build(), t);
  for (auto k : {test::saxpy(), test::saxpy_loop(), test::reduce_sum(), test::histogram(), test::lines(4), test::lines(2),
                 test::transcendental(), test::half_math(), test::casts(), test::matmul_tiled(), test::subgroup_sum()})
    validate(k, t);
  report("registered + codegen test kernels", t);
  CHECK(t.pass > 0);
}

TEST_CASE("every elementwise op x dtype passes wgpu validation") {
  if (!have_wgpu()) return;
  Tally t;
  for (const auto& c : ops::all_elementwise_cases()) validate(ops::elementwise_map(c.op, c.dtype), t);
  report("elementwise cases", t);
  CHECK(t.pass > 50);
}
