// The "matmul_epilogue" op: the matmul op's product with one of a few fixed
// epilogues (ops/matmul/epilogue.h), so that the conformance suite, `kgen op`
// and the tuner run plan_matmul on every device. The graph lowering builds
// its epilogues from the nodes it absorbs instead.
#include <algorithm>
#include <stdexcept>

#include "ops/matmul/epilogue.h"
#include "ops/matmul/forms.h"

namespace kgen::ops {

namespace {

using ir::ScalarKind;
namespace fz = fusion;

// The epilogues: 1 bias row [N]; 2 relu(C + bias); 3 C + bias + residual
// [batch, M, N]; 4 gelu(C + bias); 5 C · scale [M, 1] + residual [M, N]
// (shared by the batch); 6 a requantization to u8/i8, round(C · m[N]) + zp
// (onnxruntime's QLinearMatMul). The residual has C's type; the bias B's.
constexpr int kEpilogues = 6;
constexpr int kRequantize = 6;

ScalarKind out_kind(const Problem& p) {
  static const ScalarKind kinds[] = {ScalarKind::F32, ScalarKind::F16, ScalarKind::BF16, ScalarKind::U8, ScalarKind::I8};
  return kinds[std::clamp<int64_t>(p.attr("out", 0), 0, 4)];
}

// The matmul problem under the epilogue.
Problem base_of(const Problem& p) {
  Problem q = p;
  q.op = "matmul";
  q.attrs.erase("epilogue");
  q.attrs.erase("out");
  return q;
}

MatmulEpilogue epilogue_of(const Problem& p) {
  const matmul::Shape s = matmul::shape_of(p);
  const ScalarKind out = out_kind(p), bias_t = p.dtype;
  MatmulEpilogue e;
  e.out_dtype = out;
  const int64_t kind = p.attr("epilogue", 1);
  const fz::Expr c = fz::in(0);
  if (kind == kRequantize) {
    e.inputs = {{"m", ScalarKind::F32, {s.n}}, {"zp", out, {1}}};
    e.expr = fz::saturate_cast(out, fz::round(c * fz::in(1)) + fz::cast(ScalarKind::F32, fz::in(2, out)));
    return e;
  }
  if (kind == 5) {
    e.inputs = {{"scale", ScalarKind::F32, {s.m, 1}}, {"residual", out, {s.m, s.n}}};
    e.expr = c * fz::in(1) + fz::in(2, out);
    return e;
  }
  e.inputs = {{"bias", bias_t, {s.n}}};
  const fz::Expr biased = c + fz::in(1, bias_t);
  e.expr = kind == 2 ? fz::relu(biased) : kind == 4 ? fz::gelu(biased) : biased;
  if (kind == 3) {
    e.inputs.push_back({"residual", out, {s.batch, s.m, s.n}});
    e.expr = biased + fz::in(2, out);
  }
  return e;
}

const OpDef& matmul_def() { return *find_op("matmul"); }

void validate(const Problem& p) {
  for (const auto& [k, v] : p.attrs)
    if (k != "trans_b" && k != "batch" && k != "a_f32" && k != "prec" && k != "epilogue" && k != "out")
      throw std::invalid_argument("unknown attribute '" + k + "' (trans_b, batch, a_f32, prec, epilogue, out)");
  const int64_t e = p.attr("epilogue", 1), o = p.attr("out", 0);
  if (e < 1 || e > kEpilogues) throw std::invalid_argument("epilogue must be 1..6");
  if (o < 0 || o > 4) throw std::invalid_argument("out must be 0 (f32), 1 (f16), 2 (bf16), 3 (u8) or 4 (i8)");
  if ((e == kRequantize) != (o >= 3)) throw std::invalid_argument("a u8/i8 C (out=3|4) goes with the requantization (epilogue=6) only");
  op_for(base_of(p));
  validate_epilogue(base_of(p), epilogue_of(p));
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const Problem q = base_of(p);
  const matmul::Shape s = matmul::shape_of(q);
  std::vector<float> c(size_t(s.batch * s.m * s.n));
  matmul_def().reference(q, {in[0], in[1]}, {c.data()});
  std::vector<const void*> ins = {c.data()};
  ins.insert(ins.end(), in.begin() + 2, in.end());
  fz::reference_chain(epilogue_chain(q, epilogue_of(p)), ins, out[0]);
}

Problem mm(std::vector<int64_t> dims, int64_t epilogue, std::map<std::string, int64_t> attrs = {},
           ScalarKind dt = ScalarKind::F32) {
  Problem p;
  p.op = "matmul_epilogue";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = std::move(attrs);
  p.attrs["epilogue"] = epilogue;
  return p;
}

}  // namespace

void register_matmul_epilogue_op() {
  OpDef d;
  d.name = "matmul_epilogue";
  d.attr_defaults = {{"trans_b", 0}, {"batch", 1}, {"a_f32", 0}, {"prec", 0}, {"out", 0}};
  d.description = "C = epilogue(A·B), the matmul op with a fused epilogue: 1 + bias, 2 relu(+ bias), 3 + bias + residual, "
                  "4 gelu(+ bias), 5 · row scale + residual, 6 requantized to u8/i8";
  d.dims_help = "M N K";
  d.attrs_help = "matmul's (trans_b batch a_f32 prec) and epilogue=1..6 out=0|1|2|3|4 (C f32, f16, bf16, u8, i8)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    std::vector<TensorSpec> in = matmul_def().inputs(base_of(p));
    for (const auto& i : epilogue_of(p).inputs) in.push_back(tensor(i.name, ir::Type(i.dtype), i.shape));
    return in;
  };
  d.outputs = [](const Problem& p) {
    const matmul::Shape s = matmul::shape_of(p);
    return std::vector<TensorSpec>{tensor("c", ir::Type(out_kind(p)), {s.batch, s.m, s.n})};
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) { return matmul_def().candidates(base_of(p), caps); };
  d.heuristic = [](const Problem& p, const TargetCaps& caps) { return matmul_def().heuristic(base_of(p), caps); };
  d.variant_keys = matmul_def().variant_keys;
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps& caps) {
    const MatmulEpilogue e = epilogue_of(p);
    return plan_matmul(base_of(p), v, caps, &e);
  };
  d.reference = reference;
  // The product's, then one rounding step of a narrow C (kernel and
  // reference may round to neighbours) and the fast gelu's few ulp; a
  // requantized C, one unit where C·m lands next to a half (of an rms of
  // ~100 units; a wrong scale or zero point is off by far more).
  d.tolerance = [](const Problem& p) {
    const ScalarKind o = out_kind(p);
    if (p.attr("epilogue", 1) == kRequantize) return 0.02;
    return matmul_def().tolerance(base_of(p)) + (o == ScalarKind::F16 ? 2e-3 : o == ScalarKind::BF16 ? 1.6e-2 : 2e-5);
  };
  d.flops = [](const Problem& p) {
    const Problem q = base_of(p);
    return matmul_def().flops(q) + fz::chain_flops(epilogue_chain(q, epilogue_of(p)));
  };
  d.bytes = [](const Problem& p) {
    const Problem q = base_of(p);
    const fz::Chain c = epilogue_chain(q, epilogue_of(p));
    // The product's bytes less its f32 C, plus the epilogue's inputs and C.
    return matmul_def().bytes(q) + fz::chain_bytes(c) - 2.0 * 4.0 * double(fz::numel(c.shape));
  };
  const auto F16 = ScalarKind::F16, BF16 = ScalarKind::BF16;
  d.test_problems = {
      mm({17, 33, 29}, 1),                                // GEMM, C through the tile scratch (N % 16 != 0)
      mm({37, 64, 300}, 2, {{"trans_b", 1}}),             // GEMM, C as lines
      mm({29, 45, 600}, 3),                               // K slices (the last one applies it)
      mm({20, 30, 2100}, 4, {{"batch", 2}}),              // K split: the sum applies it
      mm({15, 19, 23}, 3, {{"trans_b", 1}, {"batch", 3}}),
      mm({33, 48, 40}, 2, {{"out", 1}}),                  // f16 C from lines
      mm({17, 33, 29}, 4, {{"trans_b", 1}, {"out", 2}}),  // bf16 C from the scratch
      mm({20, 50, 33}, 5, {{"batch", 2}}, F16),           // f16 A, B; per-row scale, residual shared by the batch
      mm({1, 77, 96}, 2, {{"trans_b", 1}}),               // GEMV over Bᵀ rows (M = 1)
      mm({1, 37, 29}, 3, {{"trans_b", 1}, {"batch", 2}, {"out", 1}}),  // ... K off lines
      mm({3, 48, 32}, 5, {{"batch", 2}}),                 // GEMV over K×N lines, batched
      mm({2, 64, 48}, 1, {{"batch", 3}}),                 // K-split GEMV
      mm({1, 37, 29}, 4, {{"batch", 2}}, BF16),           // ... N off lines
      mm({300, 3, 3}, 2),                                 // rows in lanes: the chain after it
      mm({33, 48, 40}, 6, {{"out", 3}}),                  // u8 C from lines
      mm({17, 33, 29}, 6, {{"trans_b", 1}, {"out", 4}}),  // i8 C from the scratch
      mm({29, 45, 600}, 6, {{"out", 3}}),                 // K slices with a u8 C: the chain after C
      mm({20, 30, 2100}, 6, {{"batch", 2}, {"out", 4}}),  // K split: the sum requantizes
      mm({1, 77, 96}, 6, {{"trans_b", 1}, {"out", 3}}),   // GEMV over Bᵀ rows
      mm({3, 48, 32}, 6, {{"batch", 2}, {"out", 4}}),     // GEMV over K×N lines
      mm({70, 300, 50}, 3, {{"trans_b", 1}}),             // the swapped product where the heuristic takes it
  };
  d.bench_problems = {mm({512, 512, 512}, 2), mm({1024, 1024, 1024}, 3), mm({1, 4096, 4096}, 4, {{"trans_b", 1}})};
  register_op(std::move(d));
}

}  // namespace kgen::ops
