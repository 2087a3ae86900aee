// OpDefs over the row kernels of ops/rowwise/rowwise.h: "softmax", "log_softmax",
// "rmsnorm", "layernorm" of a rows x cols matrix (dims "rows cols"), f32, f16
// or bf16 (loaded into f32, math in f32, stored back in the dtype).
// rmsnorm takes a weight (cols), layernorm a weight and a bias; attr eps in
// millionths (default 10 = 1e-5). Variants: impl=1 wg=W, the GPU form (a
// workgroup per row; the GPU default); lanes 16 (rows walked in AVX-512
// lines: cols % 16 == 0, or any cols >= 16 with a masked last line per row,
// ops/rowwise/rowwise.h: tail) or lanes 1 (any cols); stream=1 (lanes 16, cols % 16 ==
// 0, CPU): the output by streaming stores. The untuned choice per target:
// ops/rowwise/strategy.cpp.
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "ops/elementwise/fusion.h"
#include "ops/core/op.h"
#include "ops/rowwise/rowwise.h"
#include "ops/rowwise/strategy.h"

namespace kgen::ops {

namespace {

RowOp row_op(const std::string& name) {
  if (name == "softmax") return RowOp::Softmax;
  if (name == "log_softmax") return RowOp::LogSoftmax;
  if (name == "rmsnorm") return RowOp::RmsNorm;
  return RowOp::LayerNorm;
}
int n_params(RowOp op) { return op == RowOp::LayerNorm ? 2 : op == RowOp::RmsNorm ? 1 : 0; }
float eps_of(const Problem& p) { return float(double(p.attr("eps", 10)) * 1e-6); }

void validate(const Problem& p) {
  if (p.dims.size() != 2) throw std::invalid_argument("dims: rows cols");
  if (p.dim(0) < 1 || p.dim(1) < 1) throw std::invalid_argument("rows and cols must be >= 1");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && p.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument("dtype f32, f16 or bf16 (math in f32)");
  if (double(p.dim(0)) * double(p.dim(1)) >= 2e9) throw std::invalid_argument("too large: 32-bit indices");
  if (p.attr("eps", 10) < 0) throw std::invalid_argument("eps must be >= 0");
}

// The GPU form (impl=1, ops/rowwise/rowwise.h: row_op_gpu): a workgroup of wg per row.
Plan gpu_plan(const Problem& p, RowOp op, int wg, const TargetCaps& caps) {
  if (wg < 32 || wg > 1024 || (wg & (wg - 1))) throw std::invalid_argument("wg must be a power of two in 32..1024");
  if (caps.max_workgroup_threads && uint32_t(wg) > caps.max_workgroup_threads)
    throw std::invalid_argument("wg " + std::to_string(wg) + " exceeds the target's workgroup size");
  ir::Workload w = rowwise_gpu_workload(op, wg, p.dim(0), p.dim(1), eps_of(p));
  Step st{row_op_gpu(op, ir::Type(p.dtype), wg, caps.subgroups), w.dims, {}, w.scalars};
  for (int b = 0; b < 2 + n_params(op); ++b) st.buffers.push_back(b);
  Plan pl;
  pl.steps.push_back(std::move(st));
  return pl;
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  const RowOp op = row_op(p.op);
  const int64_t rows = p.dim(0), cols = p.dim(1);
  if (v.get("impl") == 1) return gpu_plan(p, op, int(v.get("wg", 64)), caps);
  if (v.get("narrow")) {
    const bool norm = op == RowOp::RmsNorm || op == RowOp::LayerNorm;
    if (cols < 2 || cols > (norm ? 16 : 32) || !is_cpu(caps))
      throw std::invalid_argument("narrow=1 (16 rows in lanes) is for the CPU: softmaxes of 2..32 columns, norms of 2..16");
    const int rpg = 256;
    Step st;
    if (norm) {
      st = Step{norm_narrow_rows(ir::Type(p.dtype), int(cols), op == RowOp::RmsNorm, rpg), {}, {},
                {ir::scalar_slot(eps_of(p)), ir::scalar_slot(uint32_t(rows))}};
      for (int b = 0; b < 2 + n_params(op); ++b) st.buffers.push_back(b);
    } else {
      st = Step{softmax_narrow_rows(ir::Type(p.dtype), int(cols), op == RowOp::LogSoftmax, rpg), {}, {0, 1},
                {ir::scalar_slot(uint32_t(rows))}};
    }
    st.dims.grid = {groups_for(rows, rpg), 1, 1};
    Plan pl;
    pl.steps.push_back(std::move(st));
    return pl;
  }
  int lanes = int(v.get("lanes", 1));
  if (lanes != 1 && (lanes != 16 || cols < 16)) throw std::invalid_argument("lanes 16 needs cols >= 16");
  const bool tail = lanes == 16 && cols % 16 != 0;  // rows at any element offset, a masked last line
  const bool stream = v.get("stream") != 0, online = v.get("online") != 0, pf = v.get("pf") != 0;
  if (stream && (lanes != 16 || tail)) throw std::invalid_argument("stream needs lanes 16 and cols % 16 == 0");
  if (online && tail) throw std::invalid_argument("online needs cols % 16 == 0 (or lanes 1)");
  if (pf && ((op != RowOp::Softmax && op != RowOp::LogSoftmax) || online))
    throw std::invalid_argument("pf is a variant of the two-pass softmax and log-softmax");
  const bool scratch = op == RowOp::Softmax && softmax_needs_scratch(online, stream);
  const bool block = v.get("blk") != 0;
  if (block && (lanes != 16 || stream || online || pf))
    throw std::invalid_argument("blk=1 (16 rows a block) is a form of lanes 16, without stream, online or pf");
  if (block && (op == RowOp::RmsNorm || op == RowOp::LayerNorm)) {
    const int rpg = kSoftmaxRowsPerGroup;
    Step st{norm_block_rows(ir::Type(p.dtype), op == RowOp::RmsNorm, tail, rpg), {}, {}, {}};
    st.dims.grid = {groups_for(rows, rpg), 1, 1};
    st.scalars = {ir::scalar_slot(eps_of(p)), ir::scalar_slot(uint32_t(tail ? cols : cols / 16)), ir::scalar_slot(uint32_t(rows))};
    for (int b = 0; b < 2 + n_params(op); ++b) st.buffers.push_back(b);
    Plan pl;
    pl.steps.push_back(std::move(st));
    return pl;
  }
  ir::Kernel k;
  if (block) k = softmax_block_rows(ir::Type(p.dtype), op == RowOp::LogSoftmax, tail);
  else switch (op) {
    case RowOp::Softmax: k = softmax_rows(ir::Type(p.dtype), lanes, online, kSoftmaxRowsPerGroup, is_cpu(caps), stream, pf, tail); break;
    case RowOp::LogSoftmax: k = log_softmax_rows(ir::Type(p.dtype), lanes, kSoftmaxRowsPerGroup, is_cpu(caps), stream, pf, tail); break;
    case RowOp::RmsNorm: k = rmsnorm_rows(ir::Type(p.dtype), lanes, true, stream, tail); break;
    case RowOp::LayerNorm: k = layernorm_rows(ir::Type(p.dtype), lanes, stream, tail); break;
  }
  ir::Workload w = rowwise_workload(op, lanes, true, rows, cols, eps_of(p), false, tail);
  Step st{std::move(k), w.dims, {}, w.scalars};
  for (int b = 0; b < 2 + n_params(op); ++b) st.buffers.push_back(b);
  Plan pl;
  // The streamed softmax's scratch rows (one per workgroup, f32 lines).
  if (scratch) st.buffers.push_back(pl.add_temp(2 + n_params(op), size_t(softmax_scratch_lines(rows, cols, lanes)) * 64));
  pl.steps.push_back(std::move(st));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const RowOp op = row_op(p.op);
  const int64_t rows = p.dim(0), cols = p.dim(1);
  // Inputs widened to f32 (as the kernels load them), math in double,
  // outputs rounded to the dtype.
  const ir::ScalarKind dt = p.dtype;
  auto widen = [&](const void* src, int64_t n) { return fusion::load_all_as_f32(dt, src, n); };
  const std::vector<float> x = widen(in[0], rows * cols);
  const std::vector<float> w = n_params(op) >= 1 ? widen(in[1], cols) : std::vector<float>();
  const std::vector<float> b = n_params(op) >= 2 ? widen(in[2], cols) : std::vector<float>();
  std::vector<float> y(static_cast<size_t>(rows * cols));
  const double eps = eps_of(p);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * cols;
    float* yr = y.data() + r * cols;
    if (op == RowOp::Softmax || op == RowOp::LogSoftmax) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < cols; ++j) m = std::max(m, double(xr[j]));
      for (int64_t j = 0; j < cols; ++j) s += std::exp(double(xr[j]) - m);
      for (int64_t j = 0; j < cols; ++j)
        yr[j] = float(op == RowOp::Softmax ? std::exp(double(xr[j]) - m) / s : double(xr[j]) - m - std::log(s));
    } else if (op == RowOp::RmsNorm) {
      double ss = 0;
      for (int64_t j = 0; j < cols; ++j) ss += double(xr[j]) * xr[j];
      double rs = 1.0 / std::sqrt(ss / double(cols) + eps);
      for (int64_t j = 0; j < cols; ++j) yr[j] = float(xr[j] * rs * w[j]);
    } else {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j) mean += xr[j];
      mean /= double(cols);
      for (int64_t j = 0; j < cols; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      double rs = 1.0 / std::sqrt(var / double(cols) + eps);
      for (int64_t j = 0; j < cols; ++j) yr[j] = float((xr[j] - mean) * rs * w[j] + b[j]);
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) fusion::store_from_f32(dt, out[0], i, y[size_t(i)]);
}

// Every key the candidates, the heuristic and the plan read: online only
// for softmax, pf for the two softmaxes.
std::vector<VariantKey> row_op_variant_keys(RowOp op) {
  std::vector<VariantKey> k = {
      key_set("impl", "implementation", {0, 1}, "0: the CPU row kernels, 1: the GPU form (a workgroup per row)"),
      key_set("wg", "workgroup_size", {32, 64, 128, 256, 512, 1024}, "work-items per row in the GPU form (impl 1)"),
      key_set("lanes", "line_lanes", {1, 16}, "16: rows walked in 16-lane lines (a masked last line off whole lines), 1: scalars"),
      key_set("narrow", "rows_in_lanes", {0, 1}, "1: 16 rows at a time, a row per lane (softmaxes of 2..32 columns, norms of 2..16)"),
      key_set("blk", "row_blocks", {0, 1}, "1: blocks of 16 rows whose statistics meet in one line (lanes 16)"),
      key_set("stream", "streaming_stores", {0, 1}, "1: the output by streaming stores (lanes 16, cols % 16 == 0)")};
  if (op == RowOp::Softmax) k.push_back(key_set("online", "online_statistics", {0, 1}, "1: running max and rescaled sum in one statistics pass"));
  if (op == RowOp::Softmax || op == RowOp::LogSoftmax)
    k.push_back(key_set("pf", "prefetch_rows", {0, 1}, "1: the exp pass prefetches the row after next (two-pass kernels)"));
  return k;
}

Problem prob(const std::string& op, int64_t rows, int64_t cols, ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = op;
  p.dims = {rows, cols};
  p.dtype = dt;
  return p;
}

}  // namespace

void register_rowwise_ops() {
  const char* names[] = {"softmax", "log_softmax", "rmsnorm", "layernorm"};
  const char* descs[] = {"softmax of each row (max, exp, scale passes over an L1-resident row)",
                         "log-softmax of each row", "rmsnorm of each row with a weight",
                         "layernorm of each row with a weight and a bias"};
  for (int i = 0; i < 4; ++i) {
    OpDef d;
    d.name = names[i];
    d.description = descs[i];
    d.dims_help = "rows cols";
    const RowOp op = row_op(d.name);
    d.attrs_help = n_params(op) ? "eps=<millionths, default 10 (1e-5)>" : "";
    if (n_params(op)) d.attr_defaults = {{"eps", 10}};
    d.validate = validate;
    d.inputs = [op](const Problem& p) {
      const double lim = n_params(op) ? 2.0 : 8.0;
      const ir::Type dt(p.dtype);
      std::vector<TensorSpec> t = {tensor("x", dt, p.dims, -lim, lim)};
      if (n_params(op) >= 1) t.push_back(tensor("w", dt, {p.dim(1)}, 0.5, 1.5));
      if (n_params(op) >= 2) t.push_back(tensor("b", dt, {p.dim(1)}, -1.0, 1.0));
      return t;
    };
    d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("y", ir::Type(p.dtype), p.dims)}; };
    d.candidates = [op](const Problem& p, const TargetCaps& caps) {
      std::vector<Variant> v;
      // The GPU form (a workgroup per row); on the CPU a candidate only.
      for (int wg : {64, 128, 256, 512})
        if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
          v.push_back(Variant{}.set("impl", 1).set("wg", wg));
      const bool l16 = p.dim(1) % 16 == 0;
      // Rows off whole lines index in u64 (load_line): not on targets
      // without 64-bit integers (WGSL), which would refuse the kernel.
      if (p.dim(1) >= 16 && (l16 || caps.i64)) v.push_back(Variant{}.set("lanes", 16));
      if (!l16 && p.dim(1) >= 16 && is_cpu(caps) && (op == RowOp::Softmax || op == RowOp::LogSoftmax))
        v.push_back(Variant{}.set("lanes", 16).set("pf", 1));
      if (p.dim(1) >= 16 && is_cpu(caps)) v.push_back(Variant{}.set("lanes", 16).set("blk", 1));
      v.push_back(Variant{}.set("lanes", 1));
      if (is_cpu(caps) && p.dim(1) >= 2 && p.dim(1) <= (op == RowOp::Softmax || op == RowOp::LogSoftmax ? 32 : 16))
        v.push_back(Variant{}.set("narrow", 1));
      if (op == RowOp::Softmax && l16) v.push_back(Variant{}.set("lanes", 16).set("online", 1));
      // Streaming stores matter on the CPU only (GPU dialects drop the hint).
      if (l16 && is_cpu(caps)) {
        v.push_back(Variant{}.set("lanes", 16).set("stream", 1));
        if (op == RowOp::Softmax) v.push_back(Variant{}.set("lanes", 16).set("online", 1).set("stream", 1));
        // Software prefetch (x86 prefetcht0; other dialects drop it).
        if (op == RowOp::Softmax || op == RowOp::LogSoftmax)
          for (int st : {0, 1}) {
            Variant pv = Variant{}.set("lanes", 16).set("pf", 1);
            if (st) pv.set("stream", 1);
            v.push_back(pv);
          }
      }
      return v;
    };
    d.heuristic = [op](const Problem& p, const TargetCaps& caps) { return row_op_heuristic(op, p, caps); };
    d.variant_keys = row_op_variant_keys(op);
    d.plan = plan;
    d.reference = reference;
    // exp/log within 1-2 ulp of libm; log-softmax outputs near zero magnify
    // that through cancellation (relative to the outputs' rms); f32 row sums
    // add ~eps * sqrt(cols).
    // f16/bf16: the outputs' rounding (and log-softmax/softmax store an
    // intermediate in the dtype: two roundings), ~2 ulp of the type.
    d.tolerance = [op](const Problem& p) {
      double base = 2e-6 + 8 * 1.2e-7 * std::sqrt(double(p.dim(1)));
      if (p.dtype == ir::ScalarKind::F16) return base + 2.5e-3;
      if (p.dtype == ir::ScalarKind::BF16) return base + 2e-2;
      return op == RowOp::LogSoftmax ? 1e-4 + base : base;
    };
    d.flops = [](const Problem& p) { return 5.0 * double(p.dim(0) * p.dim(1)); };
    d.bytes = [op](const Problem& p) {
      const double eb = double(ir::Type(p.dtype).bytes());
      return eb * (2.0 * double(p.dim(0) * p.dim(1)) + n_params(op) * double(p.dim(1)));
    };
    d.memory_bound = true;
    d.test_problems = {prob(d.name, 1, 1), prob(d.name, 3, 17), prob(d.name, 5, 1000), prob(d.name, 70, 48),
                       prob(d.name, 2, 4096), prob(d.name, 3, 4112), prob(d.name, 5, 1000, ir::ScalarKind::F16),
                       prob(d.name, 4, 48, ir::ScalarKind::BF16), prob(d.name, 3, 37, ir::ScalarKind::BF16),
                       prob(d.name, 67, 1001)};  // lines with a masked tail; softmax's second row group
    // Blocks of 16 rows for the norms: a partial block, a tail, a second group.
    // ... and of 2-16 columns, a row per lane (remainder rows, a second group of 256, 16-bit).
    if (n_params(op)) {
      for (auto [r, c] : {std::pair{21, 32}, {70, 20}, {35, 48}, {300, 8}, {37, 12}, {40, 16}}) d.test_problems.push_back(prob(d.name, r, c));
      d.test_problems.push_back(prob(d.name, 50, 6, ir::ScalarKind::BF16));
    }
    if (!n_params(op)) {
      // Softmax and log-softmax (the norms of a few columns are ill-conditioned: a row of 3 nearly
      // equal values normalises rounding noise). Narrow rows, 16 in lanes: remainder rows, a second
      // group, n = 2^s·m, 16-bit; blocks of 16 rows: a partial last block, tails, a second group.
      for (auto [r, c, dt] : {std::tuple{37, 8, ir::ScalarKind::F32}, {300, 3, ir::ScalarKind::F32}, {21, 12, ir::ScalarKind::BF16},
                              {35, 17, ir::ScalarKind::F32}, {40, 24, ir::ScalarKind::F16},
                              {18, 16, ir::ScalarKind::F16}, {40, 10, ir::ScalarKind::F32}, {21, 32, ir::ScalarKind::F32},
                              {70, 20, ir::ScalarKind::F32}, {33, 100, ir::ScalarKind::BF16}})
        d.test_problems.push_back(prob(d.name, r, c, dt));
    }
    d.bench_problems = {n_params(op) ? prob(d.name, 2048, 1024) : prob(d.name, 4096, 4096)};
    register_op(std::move(d));
  }
}

}  // namespace kgen::ops
