// The row ops in the GPU form (ops/rowwise/rowwise.h: row_op_gpu): a workgroup per row,
// its work-items striding the row so a subgroup's loads are contiguous. The
// CPU kernels of ops/rowwise/rowwise.cpp give each row to one work-item, which on a GPU
// leaves all but a few lanes idle (softmax 4096x4096 on an H200: 24.5 ms).
#include <cmath>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ops/common/gpu_reduce.h"
#include "ops/core/op.h"
#include "ops/rowwise/rowwise.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

Value load_f32(const Array& a, const Value& i) {
  Value v = a[i];
  return v.type().kind == ir::ScalarKind::F32 ? v : cast(f32, v);
}
Value narrow(ir::Type dt, const Value& v) { return dt == f32 ? v : cast(dt, v); }

const char* op_tag(RowOp op) {
  switch (op) {
    case RowOp::Softmax: return "softmax";
    case RowOp::LogSoftmax: return "log_softmax";
    case RowOp::RmsNorm: return "rmsnorm";
    case RowOp::LayerNorm: return "layernorm";
  }
  return "?";
}

}  // namespace

ir::Kernel row_op_gpu(RowOp op, ir::Type dt, int wg, bool subgroups) {
  if (dt != f32 && dt != f16 && dt != bf16) throw std::invalid_argument("row kernels: f32, f16 or bf16");
  if (wg < 1 || wg > 1024 || (wg & (wg - 1))) throw std::invalid_argument("row_op_gpu: wg must be a power of two <= 1024");
  const uint32_t WG = uint32_t(wg);
  const bool norm = op == RowOp::RmsNorm || op == RowOp::LayerNorm;
  const std::string name = std::string(op_tag(op)) + "_rows_gpu" + (subgroups ? "_sg" : "") + "_" + dt.str() + "_wg" +
                           std::to_string(wg);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    Array w, b;
    if (norm) w = kb.input("w", dt);
    if (op == RowOp::LayerNorm) b = kb.input("b", dt);
    auto y = kb.output("y", dt);
    Value eps;
    if (norm) eps = kb.scalar("eps", f32);
    auto nc = kb.scalar("ncols", u32);
    auto nrows = kb.scalar("nrows", u32);
    kb.workgroup(WG);
    auto sh = shared_array(f32, WG);
    Value r = wrapped_group_id(), t = local_id(0);
    if_(r < nrows, [&] {
      Value base = r * nc;
      Value cols = cast(f32, nc);
      auto each = [&](const std::function<void(const Value&)>& fn) { for_range(t, nc, fn, WG); };
      if (!norm) {
        // Online statistics in one read: per work-item max and sum rescaled
        // to it; the workgroup max, then each sum rescaled to that. The max
        // starts at the lowest finite float (an empty work-item's exp(m - M)
        // is then 0, never NaN).
        Var m = var(-3.40282347e38f), s = var(0.0f);
        each([&](Value j) {
          Value v = load_f32(x, base + j);
          Value mn = max(m.get(), v);
          s = s * exp(m - mn) + exp(v - mn);
          m = mn;
        });
        Value M = group_reduce(m.get(), GroupCombine::Max, sh, WG, subgroups);
        Value S = group_reduce(s * exp(m - M), GroupCombine::Sum, sh, WG, subgroups);
        if (op == RowOp::Softmax) {
          Value inv = 1.0f / S;
          each([&](Value j) { y[base + j] = narrow(dt, exp(load_f32(x, base + j) - M) * inv); });
        } else {
          Value c = log(S);
          each([&](Value j) { y[base + j] = narrow(dt, (load_f32(x, base + j) - M) - c); });
        }
      } else if (op == RowOp::RmsNorm) {
        Var ss = var(0.0f);
        each([&](Value j) {
          Value v = load_f32(x, base + j);
          ss = fma(v, v, ss.get());
        });
        Value rs = rsqrt(group_reduce(ss.get(), GroupCombine::Sum, sh, WG, subgroups) / cols + eps);
        each([&](Value j) { y[base + j] = narrow(dt, load_f32(x, base + j) * rs * load_f32(w, j)); });
      } else {
        // One statistics read of d = x - k, k the row's first element: Σd and
        // Σd², then Σ(x - mean)² = Σd² - (Σd)²/n (the shift keeps the
        // cancellation small, as the CPU kernel's does).
        Value k = load_f32(x, base);
        Var s = var(0.0f), sq = var(0.0f);
        each([&](Value j) {
          Value d = load_f32(x, base + j) - k;
          s += d;
          sq = fma(d, d, sq.get());
        });
        Value S = group_reduce(s.get(), GroupCombine::Sum, sh, WG, subgroups);
        Value SQ = group_reduce(sq.get(), GroupCombine::Sum, sh, WG, subgroups);
        Value c = S / cols;
        Value rstd = rsqrt(max(SQ - S * c, 0.0f) / cols + eps);
        each([&](Value j) {
          Value d = (load_f32(x, base + j) - k) - c;
          y[base + j] = narrow(dt, fma(d * rstd, load_f32(w, j), load_f32(b, j)));
        });
      }
    });
  });
}

ir::Workload rowwise_gpu_workload(RowOp op, int wg, int64_t rows, int64_t cols, float eps) {
  ir::Workload w = rowwise_workload(op, 1, true, rows, cols, eps);
  w.dims.grid = wrapped_grid(rows);
  w.dims.workgroup = {uint32_t(wg), 1, 1};
  const bool norm = op == RowOp::RmsNorm || op == RowOp::LayerNorm;
  w.scalars.clear();
  if (norm) w.scalars.push_back(ir::scalar_slot(eps));
  w.scalars.push_back(ir::scalar_slot(uint32_t(cols)));
  w.scalars.push_back(ir::scalar_slot(uint32_t(rows)));
  // Layernorm: the workgroup sums in the target's order (a subgroup
  // butterfly, a tree), not the interpreter's; the other three do not cancel.
  if (op == RowOp::LayerNorm) w.floor = kLayerNormCheckFloor;
  return w;
}

}  // namespace kgen::ops
