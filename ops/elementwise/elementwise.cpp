#include "ops/elementwise/elementwise.h"

#include <string>

#include "dsl/dsl.h"
#include "ir/typing.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

constexpr uint32_t kWorkgroup = 256;

bool is_unary(ir::Op op) { return ir::op_class(op) == ir::OpClass::Unary; }

std::string map_name(ir::Op op, ir::Type dt) { return "map_" + std::string(ir::op_name(op)) + "_" + dt.str(); }

}  // namespace

ir::Kernel unary_map(ir::Op op, ir::Type dt) {
  return kernel(map_name(op, dt), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { y[i] = apply(op, x[i]); });
  });
}

ir::Kernel binary_map(ir::Op op, ir::Type dt) {
  const bool compare = ir::op_class(op) == ir::OpClass::Compare;
  return kernel(map_name(op, dt), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.input("y", dt);
    auto z = kb.output("z", compare ? ir::Type(ir::ScalarKind::Bool) : dt);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] { z[i] = apply(op, x[i], y[i]); });
  });
}

ir::Kernel elementwise_map(ir::Op op, ir::Type dt) { return is_unary(op) ? unary_map(op, dt) : binary_map(op, dt); }

ir::Workload elementwise_workload(ir::Op op, ir::Type dt, int64_t n) {
  ir::Workload w;
  w.dims.grid = {uint32_t((n + kWorkgroup - 1) / kWorkgroup), 1, 1};
  w.dims.workgroup = {kWorkgroup, 1, 1};
  ir::BufferSpec in;
  in.elems = size_t(n);
  if (dt.is_float()) {
    in.lo = -4;
    in.hi = 4;
  } else if (dt.is_bool()) {
    in.lo = 0;
    in.hi = 1;
  } else if (dt.is_signed()) {
    in.lo = dt.bits() == 8 ? -100 : dt.bits() == 16 ? -30000 : -100000;
    in.hi = -in.lo;
  } else {
    in.lo = 0;
    in.hi = dt.bits() == 8 ? 200 : dt.bits() == 16 ? 60000 : 200000;
  }
  ir::BufferSpec second = in;
  if (dt.is_int() && (op == ir::Op::Div || op == ir::Op::Rem)) second.lo = 1;  // never divide by zero
  if (dt.is_int() && (op == ir::Op::Shl || op == ir::Op::Shr)) {              // amounts past the width too
    second.lo = 0;
    second.hi = dt.bits() * 2;
  }
  if (op == ir::Op::Pow) {
    in.lo = 0.01;  // negative bases give NaN on every side; keep the test meaningful
    second.lo = -3;
    second.hi = 3;
  }
  ir::BufferSpec out;
  out.elems = size_t(n);
  out.init = false;
  out.check = true;
  if (is_unary(op)) w.buffers = {in, out};
  else w.buffers = {in, second, out};
  w.scalars = {ir::scalar_slot(uint32_t(n))};
  w.bytes = double(n) * dt.bytes() * (is_unary(op) ? 2 : 3);
  w.flops = double(n);
  // Narrow floats round every op; the transcendental functions may differ by a
  // few ulp between libm (interpreter) and vectorised math (JIT).
  switch (dt.kind) {
    case ir::ScalarKind::F16: w.tolerance = 2e-3; break;
    case ir::ScalarKind::BF16: w.tolerance = 1.6e-2; break;
    case ir::ScalarKind::F32: w.tolerance = 2e-6; break;
    case ir::ScalarKind::F64: w.tolerance = 1e-13; break;
    default: w.tolerance = 0; break;
  }
  return w;
}

std::vector<OpDtype> all_elementwise_cases() {
  std::vector<OpDtype> cases;
  const ir::Type dtypes[] = {dsl::bool_, dsl::i8, dsl::i16, dsl::i32, dsl::i64, dsl::u8, dsl::u16,
                             dsl::u32,   dsl::u64, dsl::f16, dsl::bf16, dsl::f32, dsl::f64};
  auto add = [&](ir::Op op) {
    for (ir::Type dt : dtypes) {
      if (!ir::domain_accepts(ir::op_info(op).domain, dt)) continue;
      if (op == ir::Op::Neg && dt.is_int() && !dt.is_signed()) continue;  // the type rules refuse it
      cases.push_back({op, dt});
    }
  };
#define KGEN_X(name, ...) add(ir::Op::name);
  KGEN_UNARY_OPS(KGEN_X)
  KGEN_BINARY_OPS(KGEN_X)
  KGEN_COMPARE_OPS(KGEN_X)
#undef KGEN_X
  return cases;
}

}  // namespace kgen::ops
