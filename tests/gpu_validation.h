// The validation loop shared by the GPU dialects' validator tests (SPIR-V via
// spirv-val, WGSL via naga): every kernel goes through the IR pipeline; the
// ones the dialect cannot express are skipped and grouped by reason; the rest
// are emitted, compiled/validated (timed) and must pass. Counts and the median
// latency are printed.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/passes.h"
#include "tests/codegen/test_kernels.h"

namespace kgen::test {

struct GpuValidator {
  // Why the dialect cannot express the kernel, or "".
  std::function<std::string(const ir::Kernel&)> unsupported;
  // Emits the kernel's source (outside the timed part).
  std::function<std::string(const ir::Kernel&)> emit;
  // Compiles/validates the source (timed): "" when valid, else the error.
  std::function<std::string(const std::string& source, const ir::Kernel&)> validate;
};

struct Tally {
  int pass = 0, skip = 0;
  std::map<std::string, int> reasons;
  std::vector<double> ms;
};

inline void validate_kernel(const GpuValidator& v, ir::Kernel k, Tally& t) {
  CAPTURE(k.name);
  ir::default_pipeline().run(k);
  std::string why = v.unsupported(k);
  if (!why.empty()) {
    ++t.skip;
    ++t.reasons[why.substr(why.find("'", why.find("'") + 1) + 1)];  // group by reason, not kernel name
    return;
  }
  std::string src = v.emit(k);
  auto t0 = std::chrono::steady_clock::now();
  std::string err = v.validate(src, k);
  t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  CHECK_MESSAGE(err.empty(), err << "\n" << src);
  t.pass += err.empty();
}

inline double median_ms(Tally& t) {
  std::sort(t.ms.begin(), t.ms.end());
  return t.ms.empty() ? 0 : t.ms[t.ms.size() / 2];
}

inline void report(const std::string& what, const std::string& latency_label, Tally& t) {
  double med = median_ms(t);
  MESSAGE(what << ": " << t.pass << " valid, " << t.skip << " skipped; " << latency_label << " median " << med << " ms over "
               << t.ms.size());
  for (const auto& [r, n] : t.reasons) MESSAGE("  skipped x" << n << ":" << r);
}

// The codegen test kernels every GPU validator runs besides the registry.
inline std::vector<ir::Kernel> codegen_test_kernels() {
  return {saxpy(),  saxpy_loop(), reduce_sum(), histogram(),    lines(4),     lines(2),      lines(8),
          lines(16), transcendental(), half_math(), casts(), matmul_tiled(), subgroup_sum()};
}

}  // namespace kgen::test
