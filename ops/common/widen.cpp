#include "ops/common/widen.h"
#include "ops/common/wrapped_group.h"

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
    Value i = wrapped_group_id() * 256u + local_id(0);
    if_(i < n, [&] { y[i] = as_f32(x[i]); });
  });
}

int plan_widen(Plan& pl, size_t n_io, ir::Type dt, int src, int64_t n) {
  const int y = pl.add_temp(n_io, size_t(n) * 4);
  Step w;
  w.kernel = widen_kernel(dt);
  w.dims.grid = wrapped_grid(groups_for(n, 256));
  w.dims.workgroup = {256, 1, 1};
  w.buffers = {src, y};
  w.scalars = {ir::scalar_slot(uint32_t(n))};
  pl.steps.push_back(std::move(w));
  return y;
}

}  // namespace kgen::ops
