// GGUF weights used in their own type (kgen's own domain; the llama runner
// builds these nodes from GGUF tensors):
//
//   kgen.GgmlLinear(x, w) -> y    y [..., N] = x [..., K] · Wᵀ for W N rows
//     of K weights, f32 x and y:
//     - f16 / bf16 W [N, K]: the matmul op with a_f32 (x stays f32, W is read
//       as stored);
//     - block-quantized W: a u8 constant of the GGML blocks padded to whole
//       u32 words (or, with layout=16, the rows interleaved by 16 of
//       ops/quant/formats.h): the qmatmul op, a GEMV decoding blocks in
//       registers for one row of x, the tiled forms for prompts.
//     attrs format (GGML type id), n, k, layout (0|16).
#include "graph/handler.h"
#include "graph/lower.h"
#include "graph/nodes/nodes.h"
#include "ops/quant/formats.h"

namespace kgen::graph {

namespace {

void infer_qmatmul(InferCtx& c) {
  c.require_inputs(2, 2);
  const int64_t n = c.node.attr_int("n", 0), k = c.node.attr_int("k", 0);
  const Shape& x = c.shape(0);
  if (c.dtype(0) != ScalarKind::F32) c.unsupported("x must be f32");
  if (x.empty() || x.back() != k) c.invalid("x's last dimension must be k = " + std::to_string(k) + ", got " + shape_str(x));
  const ScalarKind w = c.dtype(1);
  if (!c.constant(1) || (w != ScalarKind::U8 && w != ScalarKind::F16 && w != ScalarKind::BF16))
    c.unsupported("w must be a constant: u8 packed blocks, or f16 / bf16 rows");
  if (n < 1) c.invalid("n must be positive");
  Shape y = x;
  y.back() = n;
  c.set_out(0, ScalarKind::F32, y);
}

void lower_qmatmul(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const int64_t k = x.back(), m = numel(x) / k;
  ops::Problem p;
  p.dims = {m, c.node.attr_int("n", 0), k};
  if (c.in(1).dtype != ScalarKind::U8) {
    p.op = "matmul";
    p.dtype = c.in(1).dtype;
    p.attrs = {{"trans_b", 1}, {"a_f32", 1}};
    c.op(p, {c.in_slot(0), c.in_slot(1), c.out_slot(0)});
    return;
  }
  p.op = "qmatmul";
  p.attrs["format"] = c.node.attr_int("format", 0);
  if (const int64_t layout = c.node.attr_int("layout", 0)) p.attrs["layout"] = layout;
  c.op(p, {c.in_slot(0), c.in_slot(1), c.out_slot(0)});
}

}  // namespace

void register_ggml_nodes() {
  OpHandler h;
  h.op = "GgmlLinear";
  h.domain = "kgen";
  h.infer = infer_qmatmul;
  h.lower = lower_qmatmul;
  register_handler(std::move(h));
}

}  // namespace kgen::graph
