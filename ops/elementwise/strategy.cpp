// The elementwise family's rules: how a chain is launched on the CPU and on
// GPUs, how its sigmoid divides, and when its output streams. These are the
// only reads of the CPU traits (caps.cpu) in ops/elementwise.
#include "ops/elementwise/strategy.h"

#include "ops/common/stream_heuristic.h"
#include "ops/elementwise/broadcast.h"

namespace kgen::ops {

namespace fusion {

// Rule: divide the sigmoid's denominator as a line where the divider runs
// beside the FMA pipes that bound the chain (AVX2, Zen 4/5); Intel's AVX-512
// vdivps zmm issues once per ~10 cycles, so Newton steps win there.
bool cheap_line_division(const TargetCaps& caps) { return is_cpu(caps) && caps.cpu.fast_line_division; }

namespace {

// Rule: the CPU walks a chunk of 8192 elements in 16-lane lines with one
// work-item (lines are what its vector units load); a GPU strides chunks of
// 4096 with 64 work-items, so a subgroup's loads are contiguous.
void set_launch_shape(ChainVariant& v, const TargetCaps& caps) {
  if (is_cpu(caps)) return;  // ChainVariant's defaults: lanes 16, wg 1, chunk 8192
  v.lanes = 1;
  v.wg = 64;
  v.chunk = 4096;
}

}  // namespace

ChainVariant chain_variant_for(const Chain& c, const TargetCaps& caps) {
  check_chain_target(c, caps);
  ChainVariant v;
  v.divide = cheap_line_division(caps);
  set_launch_shape(v, caps);
  return v;
}

}  // namespace fusion

namespace {

Variant launch_shape(const TargetCaps& caps) {
  fusion::ChainVariant cv;
  fusion::set_launch_shape(cv, caps);
  Variant v;
  v.set("lanes", cv.lanes).set("chunk", cv.chunk);
  if (cv.wg > 1) v.set("wg", cv.wg);
  return v;
}

// Rule: stream the output (with the inputs prefetched ahead) where it is too
// large to be read back from the caches (ops/common/stream_heuristic.h) and its
// lines land aligned. Streamed, the hardware prefetcher falls behind a chain
// of more than a few cycles of arithmetic per line, so the inputs are
// prefetched (streamed gelu(x+b) 8192x4096, 1 thread: 43 ms without, 15 with).
bool streams_output(const fusion::Chain& c, const TargetCaps& caps) {
  const double out_bytes = double(fusion::numel(c.shape)) * ir::Type(c.out_dtype).bytes();
  return is_cpu(caps) && fusion::chain_can_stream(fusion::layout_of(c)) && stream_output(caps, out_bytes);
}

}  // namespace

// Rule: always fused (one read of each input, one write of the output).
Variant elementwise_heuristic(const Problem& p, const TargetCaps& caps) {
  Variant v = launch_shape(caps);
  v.set("impl", kEwFused);
  const fusion::Chain c = elementwise_chain(p);
  if (fusion::cheap_line_division(caps) && fusion::chain_has_sigmoid(c)) v.set("div", 1);
  if (streams_output(c, caps)) v.set("stream", 1).set("pf", fusion::kStreamPrefetch);
  return v;
}

}  // namespace kgen::ops
