// MatMul (numpy semantics: 1-D operands promoted, batch axes broadcast) and
// Gemm (alpha, beta, C, transposes) onto ops/matmul. Both absorb the
// elementwise nodes after them (a bias Add, an activation, a residual Add,
// a cast) into the product's epilogue (ops/matmul/epilogue.h): one launch
// stores the finished C, as does Gemm's alpha·A·B + beta·C.
#include <optional>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/core/executor.h"
#include "ops/matmul/epilogue.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;

struct MatmulDims {
  Shape batch_a, batch_b, batch;  // batch axes of A, B and of the result
  int64_t m, n, k;
  bool a_vec, b_vec;              // 1-D operands
};

MatmulDims matmul_dims(const InferCtx& c, Shape a, Shape b) {
  MatmulDims d;
  d.a_vec = a.size() == 1;
  d.b_vec = b.size() == 1;
  if (a.empty() || b.empty()) c.invalid("MatMul of a scalar");
  if (d.a_vec) a.insert(a.begin(), 1);
  if (d.b_vec) b.push_back(1);
  d.m = a[a.size() - 2], d.k = a.back(), d.n = b.back();
  if (b[b.size() - 2] != d.k) c.invalid("inner dimensions " + shape_str(a) + " x " + shape_str(b));
  d.batch_a.assign(a.begin(), a.end() - 2);
  d.batch_b.assign(b.begin(), b.end() - 2);
  d.batch = broadcast_shapes(c, {d.batch_a, d.batch_b});
  return d;
}

Shape matmul_out(const MatmulDims& d) {
  Shape s = d.batch;
  if (!d.a_vec) s.push_back(d.m);
  if (!d.b_vec) s.push_back(d.n);
  return s;
}

void infer_matmul(InferCtx& c) {
  c.require_inputs(2, 2);
  if (c.dtype(0) != c.dtype(1)) c.invalid("A and B of different types");
  c.set_out(0, c.dtype(0), matmul_out(matmul_dims(c, c.shape(0), c.shape(1))));
}

MatmulDims dims_at_lower(const LowerCtx& c) {
  InferCtx ic{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)};
  return matmul_dims(ic, c.in(0).shape, c.in(1).shape);
}

// The matmul problem of C = A·B, A's batch folded into rows when B is shared.
ops::Problem matmul_problem(const LowerCtx& c, const MatmulDims& d, bool trans_b) {
  ops::Problem p;
  p.op = "matmul";
  p.dtype = c.in(1).dtype;
  if (c.in(0).dtype != p.dtype) p.attrs["a_f32"] = 1;
  if (trans_b) p.attrs["trans_b"] = 1;
  const int64_t ba = numel(d.batch_a), bb = numel(d.batch_b);
  if (bb == 1) {
    p.dims = {ba * d.m, d.n, d.k};
  } else if (d.batch_a == d.batch_b) {
    p.dims = {d.m, d.n, d.k};
    p.attrs["batch"] = ba;
  } else {
    c.unsupported("batch axes " + shape_str(d.batch_a) + " and " + shape_str(d.batch_b) + " that broadcast B");
  }
  return p;
}

// C = A·B into `out` (f32).
void plan_matmul(LowerCtx& c, const MatmulDims& d, int a, int b, int out, bool trans_b) {
  c.op(matmul_problem(c, d, trans_b), {a, b, out});
}

// The f32 result into the output's type where it differs.
void to_output(LowerCtx& c, int f32_slot, int out_slot, const Shape& shape) {
  fz::Chain ch;
  ch.name = "cast";
  ch.inputs = {{"y", ScalarKind::F32, shape}};
  ch.shape = shape;
  ch.out_dtype = c.out(0).dtype;
  ch.out = fz::in(0);
  c.chain(ch, {f32_slot}, out_slot);
}

// Null where the product takes no epilogue (1-D operands, B's batch broadcast).
std::optional<ProductView> product_view(const Graph& g, const Node& self) {
  ProductView v;
  v.out = g.values[size_t(self.outputs[0])].shape;
  if (self.op == "Gemm") {
    if (v.out.size() != 2) return std::nullopt;
    v.n_from = 1, v.m = v.out[0], v.n = v.out[1];
    return v;
  }
  InferCtx ic{const_cast<Graph&>(g), const_cast<Node&>(self)};
  const MatmulDims d = matmul_dims(ic, ic.shape(0), ic.shape(1));
  if (d.a_vec || d.b_vec) return std::nullopt;
  const size_t r = v.out.size();
  v.n_from = r - 1, v.n = d.n;
  if (numel(d.batch_b) == 1) v.m = numel(d.batch_a) * d.m;
  else if (d.batch_a == d.batch_b) v.m_from = r - 2, v.m = d.m, v.batch = numel(d.batch_a);
  else return std::nullopt;
  return v;
}

// OpHandler::absorbs of MatMul and Gemm: a consumer epilogue_absorbs takes,
// of a float type.
bool absorbs(const Graph& g, const Node& self, const Node& consumer) {
  const ScalarKind t = g.values[size_t(self.outputs[0])].dtype;
  if (!float_io(t) || (self.op == "Gemm" && (t != ScalarKind::F32 || self.attr_int("transA", 0)))) return false;
  const auto view = product_view(g, self);
  if (consumer.outputs.size() != 1 || consumer.outputs[0] < 0) return false;
  return view && float_io(g.values[size_t(consumer.outputs[0])].dtype) && epilogue_absorbs(g, self, *view, consumer);
}

// The product with the epilogue the builder holds, into the group's output.
void plan_with_epilogue(LowerCtx& c, const ops::Problem& p, const EpilogueBuilder& b) {
  plan_product(c, p, c.in_slot(0), c.in_slot(1), b.ep, b.slots, c.out_slot(0));
}

void lower_matmul(LowerCtx& c) {
  const ScalarKind t = c.out(0).dtype;
  if (!float_io(t)) c.unsupported(std::string("type ") + std::string(ir::scalar_name(t)) + " (MatMul runs f32, f16, bf16)");
  const MatmulDims d = dims_at_lower(c);
  if (!c.epilogue.empty()) {
    const ProductView view = *product_view(c.g, c.node);
    EpilogueBuilder b{c, view};
    // (A narrow product is rounded to its type before the nodes read it.)
    b.absorb(t == ScalarKind::F32 ? fz::in(0) : fz::round_to(t, fz::in(0)), t);
    return plan_with_epilogue(c, matmul_problem(c, d, false), b);
  }
  const Shape out = c.out(0).shape.empty() ? Shape{1} : c.out(0).shape;
  if (t == ScalarKind::F32) return plan_matmul(c, d, c.in_slot(0), c.in_slot(1), c.out_slot(0), false);
  const int tmp = c.temp(size_t(numel(out)) * 4);
  plan_matmul(c, d, c.in_slot(0), c.in_slot(1), tmp, false);
  to_output(c, tmp, c.out_slot(0), out);
}

void infer_gemm(InferCtx& c) {
  c.require_inputs(2, 3);
  const Shape& a = c.shape(0);
  const Shape& b = c.shape(1);
  if (a.size() != 2 || b.size() != 2) c.invalid("A and B must be 2-D");
  const bool ta = c.node.attr_int("transA", 0), tb = c.node.attr_int("transB", 0);
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb) c.invalid("inner dimensions " + shape_str(a) + " x " + shape_str(b));
  if (c.has_in(2)) broadcast_shapes(c, {c.shape(2), {m, n}});
  c.set_out(0, c.dtype(0), {m, n});
}

// alpha·A·B + beta·C and the absorbed nodes: all in the product's epilogue.
void lower_gemm(LowerCtx& c) {
  if (c.out(0).dtype != ScalarKind::F32) c.unsupported("types other than f32");
  if (c.node.attr_int("transA", 0)) c.unsupported("transA=1");
  const Shape out = c.out(0).shape;
  MatmulDims d;
  d.m = out[0], d.n = out[1], d.k = c.in(0).shape[1];
  d.a_vec = d.b_vec = false;
  const bool trans_b = c.node.attr_int("transB", 0) != 0;
  const double alpha = c.node.attr_float("alpha", 1.0), beta = c.node.attr_float("beta", 1.0);
  const bool with_c = c.has_in(2) && beta != 0.0;
  if (!with_c && alpha == 1.0 && c.epilogue.empty()) return plan_matmul(c, d, c.in_slot(0), c.in_slot(1), c.out_slot(0), trans_b);
  const ProductView view = *product_view(c.g, c.node);
  EpilogueBuilder b{c, view};
  fz::Expr acc = alpha == 1.0 ? fz::in(0) : fz::in(0) * fz::lit(alpha);
  if (with_c) acc = acc + (beta == 1.0 ? b.value(c.node.inputs[2]) : b.value(c.node.inputs[2]) * fz::lit(beta));
  b.absorb(acc, ScalarKind::F32);
  plan_with_epilogue(c, matmul_problem(c, d, trans_b), b);
}

}  // namespace

void register_matmul_nodes() {
  OpHandler mm;
  mm.op = "MatMul";
  mm.infer = infer_matmul;
  mm.lower = lower_matmul;
  mm.absorbs = absorbs;
  register_handler(std::move(mm));
  OpHandler gemm;
  gemm.op = "Gemm";
  gemm.infer = infer_gemm;
  gemm.lower = lower_gemm;
  gemm.absorbs = absorbs;
  register_handler(std::move(gemm));
}

}  // namespace kgen::graph
