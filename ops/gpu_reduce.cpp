#include "ops/gpu_reduce.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {
Value combine(bool is_max, const Value& a, const Value& b) { return is_max ? max(a, b) : a + b; }
}  // namespace

Value group_reduce(const Value& v, bool is_max, const Array& sh, uint32_t wg, bool subgroups) {
  Value t = local_id(0);
  if (subgroups) {
    Value r = is_max ? subgroup_max(v) : subgroup_add(v);
    Value sg = subgroup_size();
    if_(subgroup_lane() == 0u, [&] { sh[t / sg] = r; });
    barrier();
    Var acc = var(Value(sh[0u]));
    for_range(1u, uint32_t(wg) / sg, [&](Value i) { acc = combine(is_max, acc.get(), Value(sh[i])); });
    Value out = acc.get();
    barrier();
    return out;
  }
  sh[t] = v;
  barrier();
  for (uint32_t s = wg / 2; s > 0; s /= 2) {
    if_(t < s, [&] { sh[t] = combine(is_max, Value(sh[t]), Value(sh[t + s])); });
    barrier();
  }
  Value out = sh[0u];
  barrier();
  return out;
}

}  // namespace kgen::ops
