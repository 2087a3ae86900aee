#include "ops/widen.h"

#include "dsl/dsl.h"

namespace kgen::ops {

using namespace kgen::dsl;

ir::Kernel widen_kernel(ir::Type dt) {
  return kernel("widen_" + dt.str() + "_f32", [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(256);
    Value i = global_id(0);
    if_(i < n, [&] { y[i] = cast(f32, Value(x[i])); });
  });
}

}  // namespace kgen::ops
