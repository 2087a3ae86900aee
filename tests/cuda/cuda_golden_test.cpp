// Golden tests for the CUDA dialect: the emitted kernel (after the prelude)
// of a few kernels is compared to files in tests/cuda/golden/.
// KGEN_UPDATE_GOLDEN=1 rewrites them. That they compile is test_cuda_nvrtc's job.
#include <doctest/doctest.h>

#include "tests/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/cuda.h"
#include "tests/codegen/test_kernels.h"

namespace {

void check_golden(const std::string& name, const std::string& text) { kgen::test::check_golden("cuda/golden", name, text); }

std::string body(const std::string& src) {
  size_t p = src.find("// ---- end of prelude ----");
  return p == std::string::npos ? src : src.substr(p);
}

}  // namespace

using kgen::codegen::emit_cuda;

TEST_CASE("cuda golden: saxpy") { check_golden("saxpy.cu", body(emit_cuda(kgen::test::saxpy()))); }
TEST_CASE("cuda golden: reduce_sum (__shared__, __syncthreads)") {
  check_golden("reduce_sum.cu", body(emit_cuda(kgen::test::reduce_sum())));
}
TEST_CASE("cuda golden: subgroup_sum (warp shuffles)") {
  check_golden("subgroup_sum.cu", body(emit_cuda(kgen::test::subgroup_sum())));
}
TEST_CASE("cuda golden: lines8 (struct lines, lane-wise math)") {
  check_golden("lines8.cu", body(emit_cuda(kgen::test::lines(8))));
}

TEST_CASE("cuda: capabilities allow subgroups, refuse oversized workgroups") {
  CHECK(kgen::codegen::cuda_caps().subgroup_size == 32);
  kgen::ir::Kernel k = kgen::test::reduce_sum();
  k.workgroup_size = {2048, 1, 1};
  CHECK_THROWS_WITH_AS(emit_cuda(k), doctest::Contains("target 'cuda' allows at most 1024"), kgen::ir::Error);
}
