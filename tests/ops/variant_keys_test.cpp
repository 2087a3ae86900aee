// Every op declares its variant keys (ops/core/op.h: VariantKey), and what the
// op itself produces stays inside the declaration: every candidate and the
// heuristic's choice for every test and bench problem, on the host, on pinned
// CPU families and on the GPU targets' default capabilities.
#include <doctest/doctest.h>

#include "codegen/cuda.h"
#include "codegen/glsl_dialect.h"
#include "codegen/wgsl_dialect.h"
#include "ops/core/op.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;

namespace {

std::vector<std::pair<std::string, codegen::TargetCaps>> targets() {
  using codegen::CpuFamily;
  auto pinned = [](uint32_t bits, CpuFamily f, bool amx, uint32_t threads) {
    auto c = test::cpu_caps_with(bits, bits == 512 ? 32 : 16);
    c.cpu = codegen::cpu_traits_for(f, bits);
    c.byte_dot = c.byte_lookup = bits == 512;
    c.bf16_dot = bits == 512 && f != CpuFamily::intel_avx512;
    c.matrix_tiles = amx;
    c.threads = threads;
    return c;
  };
  return {{"host", codegen::cpu_caps()},
          {"zen_avx2 2t", pinned(256, CpuFamily::zen_avx2, false, 2)},
          {"zen4 1t", pinned(512, CpuFamily::zen4, false, 1)},
          {"zen5 2t", pinned(512, CpuFamily::zen5, false, 2)},
          {"intel_avx512 amx 2t", pinned(512, CpuFamily::intel_avx512, true, 2)},
          {"cuda", codegen::cuda_caps()},
          {"glsl", codegen::glsl_default_caps()},
          {"wgsl", codegen::wgsl_default_caps()}};
}

void check_declared(const ops::OpDef& op, const ops::Variant& v, const std::string& where) {
  INFO(op.name << " on " << where << ": " << v.str());
  ops::Variant resolved;
  CHECK_NOTHROW(resolved = ops::resolve_variant(op, v));
  CHECK(resolved == v);
}

}  // namespace

TEST_CASE("every variant an op produces uses its declared keys and legal values") {
  ops::register_all_ops();
  for (const auto& [where, caps] : targets()) {
    for (const auto& op : ops::registered_ops()) {
      std::vector<ops::Problem> problems = op.test_problems;
      problems.insert(problems.end(), op.bench_problems.begin(), op.bench_problems.end());
      for (const auto& p : problems) {
        std::vector<ops::Variant> cands;
        try {
          cands = op.candidates(p, caps);
        } catch (const std::exception&) {
          continue;  // a problem the target cannot run (e.g. f64 on WGSL) is refused, not declared
        }
        for (const auto& v : cands) check_declared(op, v, where + " " + p.str());
        check_declared(op, op.heuristic(p, caps), where + " " + p.str() + " (heuristic)");
      }
    }
  }
}

TEST_CASE("every declared key has a full name, legal values and a meaning") {
  ops::register_all_ops();
  for (const auto& op : ops::registered_ops()) {
    for (const auto& k : op.variant_keys) {
      INFO(op.name << " key " << k.key);
      CHECK(!k.key.empty());
      CHECK(!k.name.empty());
      CHECK(k.name != k.key);
      CHECK(!k.meaning.empty());
      CHECK((!k.values.empty() || k.lo <= k.hi));
    }
  }
}

TEST_CASE("resolve_variant: full names, misspelled keys, illegal values") {
  ops::register_all_ops();
  const ops::OpDef& mm = *ops::find_op("matmul");
  REQUIRE(!mm.variant_keys.empty());
  const ops::VariantKey& k = mm.variant_keys.front();
  const int64_t legal = k.values.empty() ? k.lo : k.values.front();
  CHECK(ops::resolve_variant(mm, ops::Variant{}.set(k.name, legal)) == ops::Variant{}.set(k.key, legal));
  try {
    ops::resolve_variant(mm, ops::Variant::parse("nosuchkey=1"));
    FAIL("a misspelled key was accepted");
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    CHECK(m.find("'matmul'") != std::string::npos);
    CHECK(m.find("nosuchkey") != std::string::npos);
    CHECK(m.find(k.key + " (" + k.name + ")") != std::string::npos);
  }
  CHECK_THROWS_AS(ops::resolve_variant(mm, ops::Variant{}.set(k.key, k.values.empty() ? k.hi + 1 : -12345)),
                  std::invalid_argument);
  CHECK_THROWS_AS(ops::resolve_variant(mm, ops::Variant{}.set(k.key, legal).set(k.name, legal)), std::invalid_argument);
}
