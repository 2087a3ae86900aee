// The matmul's fused epilogue: an elementwise expression applied to C where
// the product stores it, so C = A·B + bias, relu(...), + residual, gelu(...)
// and a cast to f16/bf16 take one pass over C instead of a product writing
// C and a chain (ops/elementwise/fusion.h) reading it back.
//
//   MatmulEpilogue e;
//   e.inputs = {{"bias", F32, {N}}, {"res", F16, {M, N}}};
//   e.expr = relu(fusion::in(0) + fusion::in(1)) + fusion::in(2, F16);
//   e.out_dtype = F16;
//   Plan pl = plan_matmul(p, v, caps, &e);  // io: A, B, bias, res, C
//
// Which forms apply it in their own kernels: the CPU macro-kernel (at the
// last K slice's store; a C other than f32 only without K slices), the CPU GEMVs,
// the K splits (CPU GEMM, GEMV K parts, K-split GEMV, GPU line tiles: in the
// launch that sums the partials), the GPU tiles and the GPU GEMV. The
// others (rows in lanes, the swapped product, matrix tiles, bf16 terms) and
// the CPU GEMM's K slices with a narrow C write an f32 C to a temporary and
// run the expression as a chain after it: the result is the same.
#pragma once
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"

namespace kgen::ops {

struct MatmulEpilogue {
  // in(0): C[b, m, n], the f32 sum; in(i) for i >= 1: inputs[i - 1] at (b, m, n).
  fusion::Expr expr;
  // Each input's dtype (any fusion reads), and a shape that broadcasts
  // against [batch, M, N] (numpy's rules): a bias row [N], a per-row scale
  // [M, 1], a residual [M, N] or [batch, M, N].
  std::vector<fusion::Input> inputs;
  ir::ScalarKind out_dtype = ir::ScalarKind::F32;  // C's type: f32, f16, bf16, or u8/i8/i32 (requantized, cast)
};

// The plan of C = epilogue(A·B) for the matmul problem `p` (OpDef "matmul")
// and its variant. io slots: A, B, the epilogue's inputs in order, then C.
// A null epilogue plans the plain product (io A, B, C).
Plan plan_matmul(const Problem& p, const Variant& v, const TargetCaps& caps, const MatmulEpilogue* ep);

// The epilogue as a chain over [batch, M, N] with C (f32) as input 0: the
// forms that do not fuse it run this after the product; the references too.
fusion::Chain epilogue_chain(const Problem& p, const MatmulEpilogue& ep);

// Throws std::invalid_argument when the epilogue does not fit the problem
// (an input that does not broadcast, a kind mismatch, C's type).
void validate_epilogue(const Problem& p, const MatmulEpilogue& ep);

// The same over an explicit [batch, M, N], for other families whose output
// is matmul's C by another name (conv2d's y as [N, OC, OH·OW]). C's type may
// be any kind a chain stores (u8 and i8 after a requantization, i32, ...):
// each family says which of its forms store it.
fusion::Chain epilogue_chain(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep);
void validate_epilogue_shape(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep);

// The epilogue as the kernels see it: per input, along which of C's axes
// (batch, row, column) it varies (it repeats along the others).
struct EpilogueOperand {
  ir::ScalarKind dtype;
  bool batch = false, row = false, col = false;
};
struct EpilogueSpec {
  fusion::Expr expr;
  std::vector<EpilogueOperand> operands;  // in(1), in(2), ...
  ir::ScalarKind out = ir::ScalarKind::F32;
  bool fast = false;    // the CPU forms' arithmetic (fusion::Evaluator's fast sigmoid, tanh, erf)
  bool divide = false;  // ... with the sigmoid's reciprocal by a line division (fusion::ChainVariant::divide)
  // Kernel name suffix: "_ep" and the operands' types and axes.
  std::string tag() const;
};
EpilogueSpec epilogue_spec(const Problem& p, const MatmulEpilogue& ep, const TargetCaps& caps);
// The spec over an explicit [batch, M, N] (validate_epilogue_shape's rules).
EpilogueSpec epilogue_spec(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep, const TargetCaps& caps);

// Records the epilogue inside a kernel: declare() its operand buffers
// ("e1", ...: after the kernel's own buffers), sizes() C's M and N once,
// then apply() at each store of C.
class EpilogueEmitter {
 public:
  explicit EpilogueEmitter(const EpilogueSpec& s) : s_(s) {}
  void declare(dsl::KernelBuilder& kb);
  void sizes(const dsl::Value& M, const dsl::Value& N) { M_ = M, N_ = N; }
  // C's stored value from the sum `acc` at (batch, row, col): a scalar, or
  // a 16-lane line of columns col.. col + 15, all inside N. In s.out's type.
  dsl::Value apply(const dsl::Value& acc, const dsl::Value& batch, const dsl::Value& row, const dsl::Value& col) const;
  ir::ScalarKind out() const { return s_.out; }

 private:
  dsl::Value operand(size_t i, const dsl::Value& batch, const dsl::Value& row, const dsl::Value& col, int lanes) const;

  const EpilogueSpec& s_;
  std::vector<dsl::Array> bufs_;
  dsl::Value M_, N_;
};

}  // namespace kgen::ops
