// The matmul epilogue's description and its recording inside a kernel
// (ops/matmul/epilogue.h).
#include "ops/matmul/epilogue.h"

#include <stdexcept>

#include "ops/common/widen.h"
#include "ops/elementwise/chain_eval.h"
#include "ops/matmul/forms.h"

namespace kgen::ops {

using namespace kgen::dsl;
using ir::ScalarKind;

fusion::Chain epilogue_chain(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep) {
  fusion::Chain c;
  c.name = "matmul_epilogue";
  c.inputs.push_back({"c", ScalarKind::F32, {batch, m, n}});
  c.inputs.insert(c.inputs.end(), ep.inputs.begin(), ep.inputs.end());
  c.shape = {batch, m, n};
  c.out_dtype = ep.out_dtype;
  c.out = ep.expr;
  return c;
}

fusion::Chain epilogue_chain(const Problem& p, const MatmulEpilogue& ep) {
  const matmul::Shape s = matmul::shape_of(p);
  return epilogue_chain(s.batch, s.m, s.n, ep);
}

void validate_epilogue_shape(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep) {
  // (Shapes: rank <= 3 and broadcasting to [batch, M, N]; kinds of in(i).)
  for (const auto& in : ep.inputs)
    if (in.shape.size() > 3) throw std::invalid_argument("epilogue input '" + in.name + "': rank above 3 ([batch, M, N])");
  fusion::validate_chain(epilogue_chain(batch, m, n, ep));
}

void validate_epilogue(const Problem& p, const MatmulEpilogue& ep) {
  const ScalarKind o = ep.out_dtype;
  if (o != ScalarKind::F32 && o != ScalarKind::F16 && o != ScalarKind::BF16 && o != ScalarKind::U8 && o != ScalarKind::I8 &&
      o != ScalarKind::I32)
    throw std::invalid_argument("matmul epilogue: C's type must be f32, f16, bf16, u8, i8 or i32");
  const matmul::Shape s = matmul::shape_of(p);
  validate_epilogue_shape(s.batch, s.m, s.n, ep);
}

EpilogueSpec epilogue_spec(const Problem& p, const MatmulEpilogue& ep, const TargetCaps& caps) {
  validate_epilogue(p, ep);
  const matmul::Shape s = matmul::shape_of(p);
  return epilogue_spec(s.batch, s.m, s.n, ep, caps);
}

EpilogueSpec epilogue_spec(int64_t batch, int64_t m, int64_t n, const MatmulEpilogue& ep, const TargetCaps& caps) {
  validate_epilogue_shape(batch, m, n, ep);
  EpilogueSpec s;
  s.expr = ep.expr;
  s.out = ep.out_dtype;
  s.fast = is_cpu(caps);
  s.divide = fusion::chain_variant_for(epilogue_chain(batch, m, n, ep), caps).divide;
  for (const auto& in : ep.inputs) {
    // Right-aligned against [batch, M, N]: an axis of size 1 repeats.
    std::vector<int64_t> d(3, 1);
    for (size_t i = 0; i < in.shape.size(); ++i) d[3 - in.shape.size() + i] = in.shape[i];
    s.operands.push_back({in.dtype, d[0] != 1, d[1] != 1, d[2] != 1});
  }
  return s;
}

std::string EpilogueSpec::tag() const {
  std::string t = "_ep";
  for (const auto& o : operands)
    t += std::string(ir::scalar_name(o.dtype)) + (o.batch ? "b" : "") + (o.row ? "m" : "") + (o.col ? "n" : "") + "_";
  return t + std::string(ir::scalar_name(out));
}

void EpilogueEmitter::declare(KernelBuilder& kb) {
  for (size_t i = 0; i < s_.operands.size(); ++i) bufs_.push_back(kb.input("e" + std::to_string(i + 1), ir::Type(s_.operands[i].dtype)));
}

// Operand i at (batch, row, col) in its compute kind: its own row-major
// index over the axes it varies along; a line where it varies along the
// columns, else its one value splatted.
Value EpilogueEmitter::operand(size_t i, const Value& batch, const Value& row, const Value& col, int lanes) const {
  const EpilogueOperand& o = s_.operands[i];
  Value at = constant(u32, 0u);
  if (o.batch) at = batch;
  if (o.row) at = o.batch ? at * M_ + row : row;
  if (o.col) at = o.batch || o.row ? at * N_ + col : col;
  const ir::Type ct(fusion::compute_kind(o.dtype));
  if (lanes == 1) return cast(ct, bufs_[i][at]);
  if (o.col) return cast(line(ct, lanes), load_line(bufs_[i], at, lanes));
  return splat(cast(ct, bufs_[i][at]), lanes);
}

Value EpilogueEmitter::apply(const Value& acc, const Value& batch, const Value& row, const Value& col) const {
  const int lanes = int(acc.type().lanes);
  auto input = [&](int i) { return i == 0 ? acc : operand(size_t(i - 1), batch, row, col, lanes); };
  fusion::Evaluator ev(lanes, input, s_.fast, s_.divide);
  return ev.to_output(s_.expr.kind(), s_.out, ev.eval(s_.expr));
}

}  // namespace kgen::ops
