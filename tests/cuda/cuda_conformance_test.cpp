// The conformance suite of tests/conformance/device_suite.h (every registered kernel, every
// elementwise op x dtype, against the interpreter on fresh random inputs,
// odd sizes, poisoned outputs) on the "cuda" device. Without a GPU it says
// "no CUDA device: <reason>" and checks nothing.
#include <doctest/doctest.h>

#include "dsl/registry.h"
#include "ops/elementwise/elementwise.h"
#include "runtimes/check.h"
#include "runtimes/cuda_device.h"
#include "runtimes/runtime.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tests/conformance/device_suite.h"

using namespace kgen;

namespace {

bool have_gpu() {
  std::string why;
  if (rt::cuda_device_available(&why)) return true;
  MESSAGE("skipped: no CUDA device: " << why);
  return false;
}

}  // namespace

TEST_CASE("without a GPU, create_device(\"cuda\") says why") {
  std::string why;
  if (rt::cuda_device_available(&why)) return;
  CHECK_THROWS_WITH_AS(rt::create_device("cuda"), doctest::Contains("no CUDA device: "), std::runtime_error);
}

// What CUDA cannot express (byte permutes) is skipped by the suite's
// capability check. Its erff/tanhf are libdevice's.
conformance::DeviceSuite cuda_suite() {
  conformance::DeviceSuite s;
  s.name = "cuda";
  s.kernel_tolerance = conformance::cancelling_math_tolerance;
  return s;
}

TEST_CASE("every registered kernel matches the interpreter on CUDA") {
  if (!have_gpu()) return;
  samples::register_all();
  ops::register_all();
  auto dev = rt::create_device("cuda");
  MESSAGE(dev->description());
  conformance::check_registered_kernels(*dev, cuda_suite());
}

TEST_CASE("every elementwise op x dtype matches the interpreter on CUDA") {
  if (!have_gpu()) return;
  auto dev = rt::create_device("cuda");
  conformance::check_elementwise_cases(*dev, cuda_suite());
}

TEST_CASE("long loops run to the end on CUDA") {
  if (!have_gpu()) return;
  auto dev = rt::create_device("cuda");
  conformance::check_long_loops(*dev);
}
