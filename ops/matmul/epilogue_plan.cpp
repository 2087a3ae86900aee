// plan_matmul (ops/matmul/epilogue.h): the product with its epilogue fused
// into the launch that stores C where the variant's form has one, else the
// product into a temporary and the epilogue as a chain after it.
#include <numeric>

#include "ops/matmul/epilogue.h"
#include "ops/matmul/forms.h"
#include "ops/matmul/matmul_plan.h"

namespace kgen::ops {

using namespace matmul;

bool epilogue_fuses(const Variant& v, ir::ScalarKind out) {
  switch (v.get("impl", kGemm)) {
    case kGemm: {
      // K slices continue from C, so C holds f32 sums until the last one.
      const GemmTile t = tile_of(v);
      return t.ks > 1 || t.kc == 0 || out == ir::ScalarKind::F32;
    }
    case kGemv:
    case kGemvKSplit:
    case kGpu:
    case kGpuGemv:
      return true;
    default:  // rows in lanes, the swapped product, matrix tiles, bf16 terms
      return false;
  }
}

Plan plan_matmul(const Problem& p, const Variant& v, const TargetCaps& caps, const MatmulEpilogue* ep) {
  op_for(p);  // validates the product
  Plan pl;
  if (!ep) {
    plan_matmul_into(pl, p, v, caps, MatmulOut{});
    return pl;
  }
  const EpilogueSpec spec = epilogue_spec(p, *ep, caps);
  const int n_in = int(ep->inputs.size());
  EpilogueUse eu{&spec, std::vector<int>(size_t(n_in))};
  std::iota(eu.slots.begin(), eu.slots.end(), 2);  // io: A, B, the epilogue's inputs, C
  MatmulOut o{2 + n_in, size_t(3 + n_in), &eu};
  if (epilogue_fuses(v, ep->out_dtype)) {
    plan_matmul_into(pl, p, v, caps, o);
    return pl;
  }
  const Shape s = shape_of(p);
  const int c32 = pl.add_temp(o.nio, size_t(s.batch * s.m * s.n) * 4);
  plan_matmul_into(pl, p, v, caps, MatmulOut{c32, o.nio});
  const fusion::Chain ch = epilogue_chain(p, *ep);
  std::vector<int> in = {c32};
  in.insert(in.end(), eu.slots.begin(), eu.slots.end());
  fusion::plan_chain(pl, ch, in, o.c, fusion::chain_variant_for(ch, caps));
  return pl;
}

}  // namespace kgen::ops
