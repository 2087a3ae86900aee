// Every translated sample on every available device, checked against the
// interpreter with its DSL twin's workload (the same launch and inputs).
#include <doctest/doctest.h>

#include "dsl/registry.h"
#include "ops/rowwise/rowwise.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"
#include "translate_test_util.h"

using namespace kgen;
using namespace kgen::translate::testing;

namespace {
struct Twin {
  const char* file;
  const char* kernel;
  const char* define;      // -D for the file, or nullptr
  const char* registered;  // the DSL twin in the kernel registry
  int64_t n;
};

const Twin kTwins[] = {
    {"saxpy.cpp", "saxpy", nullptr, "saxpy", 1000},
    {"vec_add.cpp", "vec_add", nullptr, "vec_add", 1000},
    {"activations.cpp", "silu", nullptr, "silu", 1000},
    {"activations.cpp", "gelu_tanh", nullptr, "gelu_tanh", 1000},
    {"activations.cpp", "gelu_erf", nullptr, "gelu_erf", 1000},
    {"histogram.cpp", "histogram256", nullptr, "histogram256", 1000},
    {"histogram.cpp", "histogram256_shared", nullptr, "histogram256_shared", 1000},
    {"matmul_tiled.cpp", "matmul_tiled", "TILE=8", "matmul_tiled_t8", 33},
    {"reduce_sum.cpp", "reduce_sum", nullptr, "reduce_sum_i4", 3000},
    {"softmax.cpp", "softmax_rows", nullptr, "softmax_rows", 257},
    {"lines.cpp", "saxpy_l16", nullptr, "saxpy_l16", 1000},
    {"lines.cpp", "dot_l8", nullptr, "dot_l8", 1000},
    {"dot4.cpp", "dot4_l1", nullptr, "dot4_l1", 1000},
    {"dot4.cpp", "dot4_l16", nullptr, "dot4_l16", 100},
    {"dot4.cpp", "dot4_pair_l4", nullptr, "dot4_pair_l4", 1000},
    {"dot4.cpp", "dot4_small_l1", nullptr, "dot4_small_l1", 1000},
    {"dot4.cpp", "dot4_small_l16", nullptr, "dot4_small_l16", 100},
    {"dot2_i16.cpp", "dot2_i16_l1", nullptr, "dot2_i16_l1", 1000},
    {"dot2_i16.cpp", "dot2_i16_l8", nullptr, "dot2_i16_l8", 100},
    {"dot2_bf16.cpp", "dot2_bf16_l1", nullptr, "dot2_bf16_l1", 1000},
    {"dot2_bf16.cpp", "dot2_bf16_l16", nullptr, "dot2_bf16_l16", 100},
    {"permute.cpp", "permute_bytes_t4", nullptr, "permute_bytes_t4", 100},
    {"permute.cpp", "permute_bytes_t64", nullptr, "permute_bytes_t64", 100},
    {"saxpy.cpp", "saxpy_f16", nullptr, "saxpy_f16", 1001},
    {"vec_add.cpp", "vec_add_i32", nullptr, "vec_add_i32", 1001},
    // One row kernel per form (the rest are the same code, and rowwise_test
    // checks each against its DSL twin bit for bit): odd shapes, rows << 32 | cols.
    {"rowwise.cpp", "softmax_rows_pf_f32_l16", nullptr, "softmax_rows_pf_f32_l16", 67ll << 32 | 48},
    {"rowwise.cpp", "layernorm_rows_f32", nullptr, "layernorm_rows_f32", 3ll << 32 | 1000},
    {"rowwise.cpp", "softmax_rows_pf_f32_l16_tail", nullptr, "softmax_rows_pf_f32_l16_tail", 67ll << 32 | 33},
    {"rowwise.cpp", "rmsnorm_rows_f32_l16_tail", nullptr, "rmsnorm_rows_f32_l16_tail", 3ll << 32 | 33},
    {"rowwise.cpp", "softmax_rows_pf_stream_f32_l16", nullptr, "softmax_rows_pf_stream_f32_l16", 67ll << 32 | 48},
    {"rowwise_gpu.cpp", "log_softmax_rows_gpu_sg_f32_wg64", nullptr, "log_softmax_rows_gpu_sg_f32_wg64", 3ll << 32 | 1000},
    {"rowwise_gpu.cpp", "rmsnorm_rows_gpu_f32_wg64", nullptr, "rmsnorm_rows_gpu_f32_wg64", 3ll << 32 | 17},
};
}  // namespace

TEST_CASE("translated samples run on every available device and match the interpreter") {
  samples::register_all();
  ops::register_all();
  std::vector<std::string> devices = rt::available_devices();
  MESSAGE("devices:" << [&] {
    std::string s;
    for (const std::string& d : devices) s += " " + d;
    return s;
  }());
  for (const std::string& name : devices) {
    std::unique_ptr<rt::Device> dev = rt::create_device(name);
    for (const Twin& t : kTwins) {
      CAPTURE(name);
      CAPTURE(std::string(t.kernel));
      translate::Options opt;
      if (t.define) opt.defines = {t.define};
      ir::Kernel k = translate::translate_kernel(sample_path(t.file), t.kernel, opt);
      const dsl::KernelEntry* twin = dsl::find_kernel(t.registered);
      REQUIRE(twin != nullptr);
      rt::CheckOptions co;
      co.time = false;
      co.min_repeats = 1;
      rt::CheckResult r;
      try {
        r = rt::run_and_check(*dev, k, twin->workload(t.n), co);
      } catch (const std::exception& e) {
        // A device that cannot express the kernel (byte permutes or byte
        // lines off the CPU) must refuse its DSL twin too.
        MESSAGE("skip " << std::string(t.kernel) << " on " << name << ": " << std::string(e.what()));
        CHECK_THROWS(rt::run_and_check(*dev, twin->build(), twin->workload(t.n), co));
        continue;
      }
      CAPTURE(r.message);
      CHECK(r.ok);
    }
  }
}
