#include "ops/widen.h"

namespace kgen::ops {

using namespace kgen::dsl;

Value as_f32(const Value& v) {
  if (v.type().kind == ir::ScalarKind::F32) return v;
  return cast(v.type().lanes > 1 ? line(f32, v.type().lanes) : ir::Type(f32), v);
}

ir::Kernel widen_kernel(ir::Type dt) {
  return kernel("widen_" + dt.str() + "_f32", [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(256);
    Value i = global_id(0);
    if_(i < n, [&] { y[i] = as_f32(x[i]); });
  });
}

}  // namespace kgen::ops
