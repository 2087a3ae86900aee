// TopK (opsets 1, 10, 11+) onto ops/select's topk op: k from the attribute
// (opset 1) or a constant input (10+), any axis, largest or smallest. The
// results are always sorted (what sorted=1 asks; sorted=0 leaves the order
// open), equal values in index order as onnxruntime gives them.
#include <cstring>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/select/topk.h"

namespace kgen::graph {

namespace {

bool selectable(ScalarKind k) { return k != ScalarKind::Bool && ir::Type(k).is_numeric(); }

// k: the attribute before opset 10, then input 1 (a one-element int64 tensor).
int64_t k_of(const InferCtx& c) {
  if (c.node.opset < 10) {
    if (!c.node.has("k")) c.invalid("attribute k is required");
    return c.node.attr_int("k", 0);
  }
  const Tensor& k = c.need_constant(1, "k");
  if (k.numel() != 1) c.invalid("k must hold one value, has shape " + shape_str(k.shape));
  return k.ints()[0];
}

// The node's selection as outer × n × inner, checked against x.
ops::TopK topk_of(const InferCtx& c) {
  const Shape& x = c.shape(0);
  if (x.empty()) c.invalid("x must have rank >= 1");
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", -1), int64_t(x.size()));
  ops::TopK t;
  t.dtype = c.dtype(0);
  t.n = x[size_t(axis)];
  for (int64_t i = 0; i < axis; ++i) t.outer *= x[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < x.size(); ++i) t.inner *= x[i];
  t.k = k_of(c);
  if (t.k < 0 || t.k > t.n)
    c.invalid("k=" + std::to_string(t.k) + " outside 0.." + std::to_string(t.n) + " (axis " + std::to_string(axis) + ")");
  t.largest = c.node.opset < 11 || c.node.attr_int("largest", 1) != 0;
  return t;
}

void infer(InferCtx& c) {
  c.require_inputs(c.node.opset < 10 ? 1 : 2, c.node.opset < 10 ? 1 : 2);
  if (!selectable(c.dtype(0))) c.unsupported("TopK of " + ir::Type(c.dtype(0)).str() + " values");
  const ops::TopK t = topk_of(c);
  Shape out = c.shape(0);
  out[size_t(normalize_axis(c, c.node.attr_int("axis", -1), int64_t(out.size())))] = t.k;
  c.set_out(0, t.dtype, out);
  c.set_out(1, ScalarKind::I64, out);
}

void eval(EvalCtx& e) {
  const ops::TopK t = topk_of(InferCtx{e.g, e.node});
  if (t.k == 0 || t.outer == 0 || t.inner == 0) return;  // empty outputs
  std::vector<int64_t> idx(size_t(t.outer * t.k * t.inner));
  std::vector<uint8_t> values(idx.size() * dtype_bytes(t.dtype));
  ops::reference_topk(t, e.in[0]->data(), values.data(), idx.data());
  if (e.out.size() > 0 && e.out[0].numel()) std::memcpy(e.out[0].mutable_data(), values.data(), values.size());
  if (e.out.size() > 1 && e.out[1].numel()) std::memcpy(e.out[1].mutable_data(), idx.data(), idx.size() * 8);
}

// The target holds the values' type (WebGPU: no 64-bit types).
void check_target(const LowerCtx& c, ScalarKind k) {
  const auto& caps = c.caps();
  const bool wide_int = k == ScalarKind::I64 || k == ScalarKind::U64;
  if ((wide_int && !caps.i64) || (k == ScalarKind::F64 && !caps.f64) || (k == ScalarKind::F16 && !caps.f16) ||
      (k == ScalarKind::BF16 && !caps.bf16))
    c.unsupported("TopK of " + ir::Type(k).str() + " values: the target lacks the type");
}

void lower(LowerCtx& c) {
  const ops::TopK t = topk_of(InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)});
  if (t.k == 0 || t.outer == 0 || t.inner == 0) return;  // empty outputs
  check_target(c, t.dtype);
  const size_t count = size_t(t.outer * t.k * t.inner);
  // An unused output still needs somewhere to go.
  const int values = c.has_out(0) ? c.out_slot(0) : c.temp(count * dtype_bytes(t.dtype));
  const int indices = c.has_out(1) ? c.out_slot(1) : c.temp(count * 8);
  ops::Problem p;
  p.op = "topk";
  p.dims = {t.outer, t.n, t.inner};
  p.dtype = t.dtype;
  p.attrs = {{"k", t.k}, {"largest", t.largest}};
  c.op(p, {c.in_slot(0), values, indices});
}

}  // namespace

void register_topk_nodes() {
  OpHandler h;
  h.op = "TopK";
  h.infer = infer;
  h.eval = eval;
  h.lower = lower;
  register_handler(std::move(h));
}

}  // namespace kgen::graph
