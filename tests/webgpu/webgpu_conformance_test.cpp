// The conformance suite on the "webgpu" device (wgpu-native on lavapipe in
// CI): every registered kernel and every elementwise (op, dtype) case WGSL can
// express, against the interpreter (fresh random inputs, odd sizes, poisoned
// outputs). Unsupported pairs are skipped with the reason; pass/skip counts are
// printed. Without wgpu-native or an adapter the suite says so and passes.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "codegen/wgsl_dialect.h"
#include "dsl/registry.h"
#include "ir/passes.h"
#include "ops/elementwise.h"
#include "runtimes/check.h"
#include "tests/conformance/device_suite.h"
#include "runtimes/runtime.h"
#include "runtimes/webgpu_device.h"
#include "samples/kernels/kernels.h"

using namespace kgen;

namespace {

std::unique_ptr<rt::Device> webgpu_or_skip() {
  std::string why;
  if (!rt::webgpu_available(&why)) {
    MESSAGE("no WebGPU device (" << why << "): conformance on 'webgpu' skipped");
    return nullptr;
  }
  auto dev = rt::create_device("webgpu");
  MESSAGE(dev->description());
  return dev;
}

std::string unsupported(rt::Device& dev, ir::Kernel k) {
  ir::default_pipeline().run(k);
  codegen::WgslOptions o;
  o.caps = dev.caps();
  return codegen::wgsl_unsupported(k, o);
}

// WGSL builtins used as they are, with WebGPU's accuracy rules (WGSL spec,
// "Floating Point Accuracy"): exp/exp2 3 + 2|x| ulp, log/log2 3 ulp (absolute
// 2^-21 near 1), sin/cos absolute 2^-11, pow via exp2(y log2 x), tanh through
// exp. f32 % is the exact kg_fmod helper, not WGSL's %.
double wgsl_tolerance(ir::Op op, ir::Type t, double spec_tol) {
  if (!t.is_float()) return spec_tol;
  switch (op) {
    case ir::Op::Sin:
    case ir::Op::Cos: return std::max(spec_tol, 5e-4);
    // log/log2 are only bounded absolutely (2^-21) near 1, where the result
    // is near 0: lavapipe is within that but 3.9e-4 relative was seen.
    // (GLSL uses its own kg_log; porting it to WGSL would tighten this.)
    case ir::Op::Log: case ir::Op::Log2: return std::max(spec_tol, 2e-3);
    case ir::Op::Exp: case ir::Op::Exp2: case ir::Op::Pow: return std::max(spec_tol, 1e-4);
    default: return spec_tol;
  }
}

// Registered kernels whose output cancels a transcendental: gelu_tanh's
// 1 + tanh(x) for x near -4 is ~1e-4, so the builtin tanh's error near -1
// (WGSL inherits it from sinh/cosh: loose) is amplified ~1e4; lavapipe's
// tanh gives 2.05e-3 relative there, hence 5e-3 (GLSL has its own kg_tanh).
double kernel_tolerance(const ir::Kernel& k, double spec_tol) {
  bool loose = false;
  ir::walk(k.body, [&](const ir::Instr& in) {
    loose |= in.op == ir::Op::Exp || in.op == ir::Op::Tanh || in.op == ir::Op::Log || in.op == ir::Op::Exp2;
  });
  return loose ? std::max(spec_tol, 5e-3) : spec_tol;
}

}  // namespace

conformance::DeviceSuite suite(rt::Device& dev) {
  conformance::DeviceSuite s;
  s.name = "webgpu";
  s.unsupported = [&dev](const ir::Kernel& k) { return unsupported(dev, k); };
  s.op_tolerance = wgsl_tolerance;
  s.kernel_tolerance = kernel_tolerance;
  return s;
}

TEST_CASE("every registered kernel matches the interpreter on webgpu") {
  auto dev = webgpu_or_skip();
  if (!dev) return;
  samples::register_all();
  conformance::check_registered_kernels(*dev, suite(*dev));
}

TEST_CASE("every elementwise op x dtype the device supports matches the interpreter on webgpu") {
  auto dev = webgpu_or_skip();
  if (!dev) return;
  conformance::check_elementwise_cases(*dev, suite(*dev));
}
