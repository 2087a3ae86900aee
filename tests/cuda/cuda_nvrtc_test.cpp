// NVRTC accepts the CUDA the dialect prints: every registered kernel, every
// elementwise (op, dtype) case and the codegen test kernels compile to PTX.
// Needs the CUDA toolkit at build time, not a GPU; without NVRTC the test
// says so and passes nothing off as checked.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include "codegen/cuda.h"
#include "dsl/registry.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "jit/nvrtc.h"
#include "ops/elementwise/elementwise.h"
#include "samples/kernels/kernels.h"
#include "tests/codegen/test_kernels.h"

using namespace kgen;

namespace {

// The source the CUDA device would compile (verified, IR pipeline applied).
std::string cuda_source(ir::Kernel k) {
  ir::verify(k);
  ir::default_pipeline().run(k);
  return codegen::emit_cuda(k);
}

std::string without_prelude(const std::string& src) {
  const std::string end = "// ---- end of prelude ----\n";
  size_t p = src.find(end);
  return p == std::string::npos ? src : src.substr(p + end.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TEST_CASE("NVRTC: a compile error carries the numbered source and the log") {
  if (!jit::nvrtc_available()) {
    MESSAGE("skipped: kgen was built without NVRTC (CUDA toolkit not found)");
    return;
  }
  try {
    jit::nvrtc_compile("extern \"C\" __global__ void k() { undeclared_name = 1; }");
    FAIL("expected a compile error");
  } catch (const jit::CompileError& e) {
    std::string m = e.what();
    CHECK(m.find("undeclared_name") != std::string::npos);
    CHECK(m.find("1 ") != std::string::npos);  // numbered source
  }
}

TEST_CASE("NVRTC: every registered kernel compiles to PTX (one compile each, latency measured)") {
  if (!jit::nvrtc_available()) {
    MESSAGE("skipped: kgen was built without NVRTC (CUDA toolkit not found)");
    return;
  }
  samples::register_all();
  std::vector<std::pair<std::string, std::function<ir::Kernel()>>> kernels;
  for (const auto& e : dsl::registered_kernels()) kernels.emplace_back(e.name, e.build);
  for (auto* f : {&test::saxpy, &test::saxpy_loop, &test::reduce_sum, &test::histogram, &test::transcendental,
                  &test::half_math, &test::casts, &test::matmul_tiled, &test::subgroup_sum})
    kernels.emplace_back(f().name, f);
  for (int l : {2, 3, 4, 8, 16}) kernels.emplace_back("lines" + std::to_string(l), [l] { return test::lines(l); });
  std::vector<double> ms;
  int refused = 0;
  for (const auto& [name, build] : kernels) {
    CAPTURE(name);
    const ir::Kernel k = build();
    try {
      codegen::check_capabilities(k, codegen::cuda_caps());
    } catch (const ir::Error& e) {
      MESSAGE("not for CUDA: " << std::string(e.what()));  // e.g. permute_bytes, a CPU operation (a bare what() prints as a pointer)
      ++refused;
      continue;
    }
    std::string src = cuda_source(k);
    try {
      jit::NvrtcResult r = jit::nvrtc_compile(src);
      CHECK(r.ptx.find(".entry") != std::string::npos);
      ms.push_back(r.ms);
    } catch (const jit::CompileError& e) {
      FAIL_CHECK(e.what());
    }
  }
  MESSAGE("NVRTC " << jit::nvrtc_version() << ": " << ms.size() << " of " << kernels.size() - size_t(refused)
                   << " kernels compile to PTX (compute_80); median " << median(ms) << " ms, max "
                   << (ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end())) << " ms per kernel");
}

TEST_CASE("NVRTC: every elementwise (op, dtype) case compiles to PTX") {
  if (!jit::nvrtc_available()) {
    MESSAGE("skipped: kgen was built without NVRTC (CUDA toolkit not found)");
    return;
  }
  // One translation unit per batch, the prelude once: a compile is mostly
  // header parsing, so this keeps ~180 kernels to a few NVRTC calls. A failing
  // batch is retried kernel by kernel to name the culprit.
  auto cases = ops::all_elementwise_cases();
  CHECK(cases.size() > 150);
  std::vector<std::pair<std::string, std::string>> srcs;  // (case, full source)
  for (const auto& c : cases) {
    ir::Kernel k = ops::elementwise_map(c.op, c.dtype);
    srcs.emplace_back(std::string(ir::op_name(c.op)) + " " + c.dtype.str(), cuda_source(k));
  }
  const size_t batch = 64;
  size_t ok = 0;
  for (size_t b = 0; b < srcs.size(); b += batch) {
    size_t e = std::min(srcs.size(), b + batch);
    std::string tu = srcs[b].second;
    for (size_t i = b + 1; i < e; ++i) tu += without_prelude(srcs[i].second);
    try {
      jit::nvrtc_compile(tu);
      ok += e - b;
    } catch (const jit::CompileError&) {
      for (size_t i = b; i < e; ++i) {
        CAPTURE(srcs[i].first);
        try {
          jit::nvrtc_compile(srcs[i].second);
          ++ok;
        } catch (const jit::CompileError& err) {
          FAIL_CHECK(err.what());
        }
      }
    }
  }
  MESSAGE(ok << " of " << srcs.size() << " elementwise cases compile to PTX");
}
