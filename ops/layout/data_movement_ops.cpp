#include "ops/layout/data_movement_ops.h"

#include <cmath>
#include <stdexcept>

namespace kgen::ops {

void register_data_movement_ops() {
  move_ops::register_copy_ops();
  move_ops::register_gather_op();
  move_ops::register_pad_op();
  move_ops::register_resize_op();
}

namespace move_ops {

int elem_bytes(const Problem& p) {
  const int b = int(ir::Type(p.dtype).bytes());
  if (b != 1 && b != 2 && b != 4 && b != 8) throw std::invalid_argument("dtype must have 1, 2, 4 or 8-byte elements");
  return b;
}

TensorSpec any_tensor(std::string name, ir::ScalarKind k, std::vector<int64_t> shape) {
  const ir::Type t(k);
  double lo = -1, hi = 1;
  if (t.is_int()) {
    lo = t.is_signed() ? -std::ldexp(1.0, t.bits() - 1) : 0.0;
    hi = t.is_signed() ? std::ldexp(1.0, t.bits() - 1) - 1 : std::ldexp(1.0, t.bits()) - 1;
  }
  return tensor(std::move(name), t, std::move(shape), lo, hi);
}

std::vector<int64_t> axis_attrs(const Problem& p, const std::string& prefix, size_t rank, int64_t dflt) {
  std::vector<int64_t> v;
  for (size_t a = 0; a < rank; ++a) v.push_back(p.attr(prefix + std::to_string(a), dflt));
  return v;
}

bool has_axis_attr(const Problem& p, const std::string& prefix, size_t rank) {
  for (size_t a = 0; a < rank; ++a)
    if (p.attrs.count(prefix + std::to_string(a))) return true;
  return false;
}

void set_move_variants(OpDef& d) {
  d.candidates = [](const Problem&, const TargetCaps& caps) {
    std::vector<Variant> v = {Variant{}.set("impl", 0)};
    if (is_cpu(caps)) v.push_back(Variant{}.set("impl", 1));
    return v;
  };
  d.heuristic = [](const Problem&, const TargetCaps& caps) { return Variant{}.set("impl", move_variant_for(caps).rows ? 1 : 0); };
  d.variant_keys = {key_set("impl", "implementation", {0, 1},
                            "0 one work-item per output element, 1 CPU: a group walks output rows in 16-lane lines"),
                    key_set("wide", "wide_indices", {0, 1}, "u64 index arithmetic where u32 would do (resize: always u32)")};
  d.flops = [](const Problem&) { return 0.0; };
  d.memory_bound = true;
}

MoveVariant move_variant(const Variant& v) {
  MoveVariant m;
  m.rows = v.get("impl") == 1;
  m.wide = v.get("wide") == 1;
  return m;
}

}  // namespace move_ops
}  // namespace kgen::ops
