// Elementwise kernels: one element per work-item, a bounds check for the
// last partial group, dtype as a plain C++ parameter.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

namespace {
std::string suffixed(const char* base, ir::Type dt, ir::Type default_dt = f32) {
  return dt == default_dt ? std::string(base) : std::string(base) + "_" + dt.str();
}
}  // namespace

ir::Kernel saxpy(ir::Type dt) {
  return kernel(suffixed("saxpy", dt), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.inout("y", dt);
    auto a = kb.scalar("a", dt);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { y[i] = a * x[i] + y[i]; });
  });
}

ir::Kernel activation(Activation act, ir::Type dt) {
  const char* name = act == Activation::Silu ? "silu" : act == Activation::GeluTanh ? "gelu_tanh" : "gelu_erf";
  return kernel(suffixed(name, dt), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      Value v = x[i];
      switch (act) {
        case Activation::Silu:  // x * sigmoid(x)
          y[i] = v / (1 + exp(-v));
          break;
        case Activation::GeluTanh:  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
          y[i] = 0.5f * v * (1 + tanh(0.7978845608028654 * (v + 0.044715f * v * v * v)));
          break;
        case Activation::GeluErf:  // 0.5 x (1 + erf(x / sqrt(2)))
          y[i] = 0.5f * v * (1 + erf(v * 0.7071067811865476));
          break;
      }
    });
  });
}

ir::Kernel vec_add(ir::Type dt) {
  return kernel(suffixed("vec_add", dt), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.input("y", dt);
    auto z = kb.output("z", dt);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { z[i] = x[i] + y[i]; });
  });
}

void register_elementwise() {
  constexpr uint32_t kWg = 256;
  for (ir::Type dt : {f32, f16}) {
    register_kernel({saxpy(dt).name, "y = a*x + y (" + dt.str() + ")", [dt] { return saxpy(dt); },
                     [dt](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, kWg);
                       w.buffers = {input_spec(n), inout_spec(n)};
                       w.scalars = {slot_as(dt, 1.5), ir::scalar_slot(uint32_t(n))};
                       w.bytes = 3.0 * n * dt.bytes();
                       w.flops = 2.0 * n;
                       w.tolerance = elementwise_tolerance(dt);
                       return w;
                     },
                     1 << 22, {1, 7, 255, 257, 1000, 4099}, "bandwidth"});
  }
  struct Act {
    Activation act;
    const char* what;
    double flops;
  };
  for (Act a : {Act{Activation::Silu, "x * sigmoid(x)", 4}, Act{Activation::GeluTanh, "GELU, tanh approximation", 9},
                Act{Activation::GeluErf, "GELU, exact (erf)", 5}}) {
    register_kernel({activation(a.act, f32).name, std::string(a.what) + " (f32)",
                     [act = a.act] { return activation(act, f32); },
                     [flops = a.flops](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, kWg);
                       w.buffers = {input_spec(n, -4.0, 4.0), output_spec(n)};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.bytes = 8.0 * n;
                       w.flops = flops * n;
                       w.tolerance = 1e-5;
                       return w;
                     },
                     1 << 22, {1, 7, 255, 1000, 4099}, "bandwidth"});
  }
  for (ir::Type dt : {f32, i32}) {
    register_kernel({vec_add(dt).name, "z = x + y (" + dt.str() + ")", [dt] { return vec_add(dt); },
                     [dt](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, kWg);
                       double r = dt.is_int() ? 1000.0 : 1.0;
                       w.buffers = {input_spec(n, -r, r), input_spec(n, -r, r), output_spec(n)};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.bytes = 3.0 * n * dt.bytes();
                       w.flops = double(n);
                       w.tolerance = elementwise_tolerance(dt);
                       return w;
                     },
                     1 << 22, {1, 7, 255, 1000, 4099}, "bandwidth"});
  }
}

}  // namespace kgen::samples
