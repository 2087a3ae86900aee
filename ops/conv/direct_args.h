// The buffers and scalars the two CPU direct kernels share (ops/conv/direct.cpp,
// ops/conv/direct_oc.cpp), declared in the order their plans pass them: xq, tab,
// wp, [bias], y; count (Cg·T), c, cg, chan_stride, ocg, oblocks, oc, oh, ow,
// wq, then the kernel's own last scalar. With a fused epilogue y has its
// output type and the epilogue's operands follow it.
#pragma once
#include <memory>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"

namespace kgen::ops {

struct DirectArgs {
  dsl::Array xq, tab, wp, b, y;
  dsl::Value J, C, CG, CS, OCG, OB, OC, OH, OW, WQ;
};

inline DirectArgs declare_direct_args(dsl::KernelBuilder& kb, bool bias, EpilogueEmitter* em = nullptr) {
  using namespace kgen::dsl;
  DirectArgs a;
  a.xq = kb.input("xq", f32);
  a.tab = kb.input("tab", u32);
  a.wp = kb.input("wp", f32);
  if (bias) a.b = kb.input("b", f32);
  a.y = kb.output("y", em ? ir::Type(em->out()) : f32);
  if (em) em->declare(kb);
  a.J = kb.scalar("count", u32);
  a.C = kb.scalar("c", u32);
  a.CG = kb.scalar("cg", u32);
  a.CS = kb.scalar("chan_stride", u32);
  a.OCG = kb.scalar("ocg", u32);
  a.OB = kb.scalar("oblocks", u32);  // OC blocks per group
  a.OC = kb.scalar("oc", u32);
  a.OH = kb.scalar("oh", u32);
  a.OW = kb.scalar("ow", u32);
  a.WQ = kb.scalar("wq", u32);
  if (em) em->sizes(a.OC, a.OH * a.OW);
  return a;
}

// The plan's side: the buffers (xq and tab from the pre-pass, the weights'
// slot), then the same scalars and `last`.
inline std::vector<int> direct_buffers(const ConvShape& s, const ConvPrep& pr, int wp, const EpilogueUse* eu = nullptr) {
  std::vector<int> b = {pr.xq, pr.tab, wp};
  if (s.bias) b.push_back(2);
  b.push_back(s.bias ? 3 : 2);  // y
  if (eu) b.insert(b.end(), eu->slots.begin(), eu->slots.end());
  return b;
}

// A fused epilogue's emitter for a kernel (null without one).
inline std::unique_ptr<EpilogueEmitter> emitter_of(const EpilogueSpec* ep) {
  return ep ? std::make_unique<EpilogueEmitter>(*ep) : nullptr;
}
// The plan's side: the same scalars, then `last`.
inline std::vector<uint64_t> direct_scalars(const ConvShape& s, int64_t oblocks, int64_t last) {
  auto u = [](int64_t v) { return ir::scalar_slot(uint32_t(v)); };
  return {u(s.cg() * s.taps()), u(s.c), u(s.cg()), u(s.chan_stride()), u(s.ocg()), u(oblocks),
          u(s.oc), u(s.oh()), u(s.ow()), u(s.wq()), u(last)};
}

}  // namespace kgen::ops
