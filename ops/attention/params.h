// What every attention kernel shares (ops/attention/kernels.cpp,
// ops/attention/gpu.cpp): the runtime scalar list, the masked score value,
// the kernel-name suffix of an input type, the wrapped group index.
#pragma once
#include <string>

#include "dsl/dsl.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops::attention_detail {

// Masked scores. Finite (not -inf) so that max/exp of a row with no visible
// key stay NaN-free; such rows are zeroed at the end by their empty sum.
constexpr float kMasked = -1e30f;

struct Shape {
  dsl::Value s, skv, skvp, h, g, shift, scale, rows;  // rows: B·H·S
};
inline Shape shape_params(dsl::KernelBuilder& kb) {
  Shape p;
  p.s = kb.scalar("s", dsl::i32);
  p.skv = kb.scalar("skv", dsl::i32);
  p.skvp = kb.scalar("skvp", dsl::i32);
  p.h = kb.scalar("h", dsl::i32);
  p.g = kb.scalar("g", dsl::i32);
  p.shift = kb.scalar("shift", dsl::i32);
  p.scale = kb.scalar("scale", dsl::f32);
  p.rows = kb.scalar("rows", dsl::i32);
  return p;
}

// A workgroup's flat index (ops/common/wrapped_group.h) over axes `axis` and
// axis + 1, clamped to n - 1: the groups past n (the rest of the last layer)
// redo the last one and store the same values, so no guard splits a barrier.
inline dsl::Value wrapped_group(int axis, const dsl::Value& n) {
  return dsl::min(dsl::cast(dsl::i32, wrapped_group_id(axis)), n - 1);
}

// The kernel-name suffix of an input type ("" for f32).
inline std::string dt_tag(ir::Type dt) { return dt == dsl::f32 ? "" : "_" + dt.str(); }

}  // namespace kgen::ops::attention_detail
