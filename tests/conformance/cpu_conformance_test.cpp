// The conformance suite (tests/conformance/device_suite.h) on the CPU device,
// with 1 and 2 worker threads: every registered kernel (samples and the op
// library's row kernels) and every elementwise (op, dtype) case against the
// reference interpreter. The CPU expresses everything, so nothing is skipped.
#include <doctest/doctest.h>

#include "ops/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tests/conformance/device_suite.h"

using namespace kgen;

namespace {

std::unique_ptr<rt::Device> cpu(unsigned threads) {
  rt::DeviceOptions opt;
  opt.threads = threads;
  return rt::create_device("cpu", opt);
}

conformance::DeviceSuite cpu_suite() {
  conformance::DeviceSuite s;
  s.name = "cpu";
  return s;
}

}  // namespace

TEST_CASE("every registered kernel matches the interpreter on the CPU (1 thread)") {
  samples::register_all();
  ops::register_all();
  conformance::check_registered_kernels(*cpu(1), cpu_suite());
}

TEST_CASE("every registered kernel matches the interpreter on the CPU (2 threads)") {
  samples::register_all();
  ops::register_all();
  conformance::check_registered_kernels(*cpu(2), cpu_suite());
}

TEST_CASE("every elementwise op x dtype matches the interpreter on the CPU") {
  auto dev = cpu(0);
  conformance::check_elementwise_cases(*dev, cpu_suite());
}
