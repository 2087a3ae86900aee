#include "ops/common/gpu_reduce.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

Value combine(GroupCombine c, const Value& a, const Value& b) {
  switch (c) {
    case GroupCombine::Max: return max(a, b);
    case GroupCombine::Min: return min(a, b);
    default: return a + b;
  }
}

Value subgroup_combine(GroupCombine c, const Value& v) {
  switch (c) {
    case GroupCombine::Max: return subgroup_max(v);
    case GroupCombine::Min: return subgroup_min(v);
    default: return subgroup_add(v);
  }
}

// (v, i) replaced by (ov, oi) when that pair wins: a larger value, or an
// equal one at a smaller index.
void argmax_fold(Var& v, Var& i, const Value& ov, const Value& oi) {
  Value take = ov > v.get() || (ov == v.get() && oi < i.get());
  v = select(take, ov, v.get());
  i = select(take, oi, i.get());
}

}  // namespace

Value group_reduce(const Value& v, GroupCombine c, const Array& sh, uint32_t wg, bool subgroups) {
  Value t = local_id(0);
  if (subgroups) {
    Value r = subgroup_combine(c, v);
    Value sg = subgroup_size();
    if_(subgroup_lane() == 0u, [&] { sh[t / sg] = r; });
    barrier();
    Var acc = var(Value(sh[0u]));
    for_range(1u, uint32_t(wg) / sg, [&](Value i) { acc = combine(c, acc.get(), Value(sh[i])); });
    Value out = acc.get();
    barrier();
    return out;
  }
  sh[t] = v;
  barrier();
  for (uint32_t s = wg / 2; s > 0; s /= 2) {
    if_(t < s, [&] { sh[t] = combine(c, Value(sh[t]), Value(sh[t + s])); });
    barrier();
  }
  Value out = sh[0u];
  barrier();
  return out;
}

std::pair<Value, Value> group_argmax(const Value& v, const Value& idx, const Array& sv, const Array& si, uint32_t wg,
                                     bool subgroups) {
  Value t = local_id(0);
  if (subgroups) {
    Value m = subgroup_max(v);
    Value at = subgroup_min(select(v == m, idx, constant(i32, 0x7fffffff)));
    Value sg = subgroup_size();
    if_(subgroup_lane() == 0u, [&] {
      sv[t / sg] = m;
      si[t / sg] = at;
    });
    barrier();
    Var bv = var(Value(sv[0u])), bi = var(Value(si[0u]));
    for_range(1u, uint32_t(wg) / sg, [&](Value i) { argmax_fold(bv, bi, sv[i], si[i]); });
    std::pair<Value, Value> out{bv.get(), bi.get()};
    barrier();
    return out;
  }
  sv[t] = v;
  si[t] = idx;
  barrier();
  for (uint32_t half = wg / 2; half > 0; half /= 2) {
    if_(t < half, [&] {
      Var mv = var(Value(sv[t])), mi = var(Value(si[t]));
      argmax_fold(mv, mi, sv[t + half], si[t + half]);
      sv[t] = mv.get();
      si[t] = mi.get();
    });
    barrier();
  }
  std::pair<Value, Value> out{sv[0u], si[0u]};
  barrier();
  return out;
}

}  // namespace kgen::ops
