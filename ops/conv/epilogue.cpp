// plan_conv2d (ops/conv/conv.h): the conv with matmul's epilogue over y
// viewed as [N, OC, OH·OW], applied where the form stores y when it can,
// else as a chain over an f32 temporary after it.
#include <stdexcept>

#include "ops/conv/conv.h"

namespace kgen::ops {

using namespace conv_impl;

fusion::Chain conv_epilogue_chain(const ConvShape& s, const ConvEpilogue& ep) {
  fusion::Chain c = epilogue_chain(s.n, s.oc, s.oh() * s.ow(), ep);
  c.name = "conv_epilogue";
  return c;
}

bool conv_epilogue_fuses(const Variant& v, const TargetCaps& caps) {
  if (!is_cpu(caps)) return false;
  switch (v.get("impl", kDirect)) {
    case kDirect:
    case kDirectOc:
    case kDepthwiseDirect:
    case kDepthwiseSmall:
    case kIm2col:   // the launch compacting C into y applies it
    case kGemm1x1:  // the macro-kernel, or that launch
      return true;
    default:  // depthwise rows, Winograd, the GPU forms
      return false;
  }
}

Plan plan_conv2d(const Problem& p, const Variant& v, const TargetCaps& caps, const ConvEpilogue* ep) {
  const ConvShape s = conv_shape(p);
  const size_t base = s.bias ? 4 : 3;  // x, w, [b], y
  if (!ep) return plan_conv2d_form(p, v, caps, base, nullptr);
  op_for(p);  // validates the conv
  const EpilogueSpec spec = epilogue_spec(s.n, s.oc, s.oh() * s.ow(), *ep, caps);
  const size_t k = ep->inputs.size(), nio = base + k;
  // This plan's io is x, w, [b], the operands, y; the forms' x, w, [b], y,
  // the operands.
  std::vector<int> io(nio);
  for (size_t i = 0; i + 1 < base; ++i) io[i] = int(i);
  io[base - 1] = int(nio - 1);
  for (size_t j = 0; j < k; ++j) io[base + j] = int(base - 1 + j);
  Plan pl;
  if (conv_epilogue_fuses(v, caps)) {
    EpilogueUse eu{&spec, {}};
    for (size_t j = 0; j < k; ++j) eu.slots.push_back(int(base + j));
    pl.append(nio, plan_conv2d_form(p, v, caps, nio, &eu), nio, io);
    return pl;
  }
  const int y32 = pl.add_temp(nio, size_t(s.n * s.oc * s.oh() * s.ow()) * 4);
  std::vector<int> sub(io.begin(), io.begin() + std::ptrdiff_t(base));
  sub[base - 1] = y32;
  pl.append(nio, plan_conv2d_form(p, v, caps, base, nullptr), base, sub);
  const fusion::Chain ch = conv_epilogue_chain(s, *ep);
  std::vector<int> in = {y32};
  for (size_t j = 0; j < k; ++j) in.push_back(int(base - 1 + j));
  fusion::plan_chain(pl, ch, in, int(nio - 1), fusion::chain_variant_for(ch, caps));
  return pl;
}

}  // namespace kgen::ops
