// Elementwise expressions over broadcast tensors, compiled into ONE kernel:
// every input element is loaded once, the whole expression is evaluated in
// registers (each node in its kind: ops/elementwise/expr.h), the result is
// stored once. A single elementwise op (ops/elementwise/broadcast.cpp) is a
// chain of one node; the graph executor builds longer chains (silu(x) * y,
// (x + b) * s + r, quantize steps, ...).
//
//   using namespace kgen::ops::fusion;
//   Chain c;
//   c.inputs = {{"x", F16, {64, 4096}}, {"b", F32, {4096}}};   // b: a row, broadcast
//   c.out = gelu(in(0) + in(1));           // in(i): a float input as f32
//   c.out_dtype = F32;
//   c.shape = broadcast_shape(c);          // {64, 4096}
//   plan_chain(plan, c, {0, 1}, 2, chain_variant_for(c, caps));
//
//   // Any dtype: in(i, dtype) computes in compute_kind(dtype). Quantize:
//   c.inputs = {{"x", F32, {4096}}};
//   c.out = saturate_cast(U8, round(in(0, F32) / lit(0.05)) + lit(128));
//   c.out_dtype = U8;
//
// Broadcasting is numpy's: shapes align at the right, size-1 (or missing)
// axes repeat. The launch collapses adjacent axes that every input treats
// alike (both broadcast or both contiguous), so equal shapes become one flat
// contiguous range (no index math in the loop), and a row vector + matrix
// becomes rows x cols with a contiguous innermost axis.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/core/op.h"
#include "ops/elementwise/activations.h"
#include "ops/elementwise/expr.h"
#include "ops/elementwise/expr_math.h"
#include "ops/elementwise/expr_ops.h"

namespace kgen::ops::fusion {

struct Input {
  std::string name;
  ir::ScalarKind dtype = ir::ScalarKind::F32;  // any; loaded and converted to compute_kind(dtype)
  std::vector<int64_t> shape;                  // broadcast against Chain::shape
};
struct Chain {
  std::string name = "ew";  // kernel name stem
  std::vector<Input> inputs;
  std::vector<int64_t> shape;  // output shape (rank <= 6)
  ir::ScalarKind out_dtype = ir::ScalarKind::F32;  // any; out converts to it as cast() does
  Expr out;
};

// numpy's broadcast of the inputs' shapes; throws std::invalid_argument when
// they do not broadcast or the rank exceeds 6.
std::vector<int64_t> broadcast_shape(const Chain& c);
// Checks dtypes, that every input broadcasts to c.shape and that Input nodes
// name existing inputs in their compute kind.
void validate_chain(const Chain& c);
// Throws ir::Error naming the target and the type when the chain needs one
// the target lacks (f64 or 64-bit integers on WebGPU, ...): chain_variant_for
// calls it, so a chain is refused when it is planned, not deep in a backend.
void check_chain_target(const Chain& c, const TargetCaps& caps);

// The launch layout after collapsing axes: dims outermost first (dims.back()
// is the contiguous inner axis), and per input its element stride on each
// collapsed axis (0: broadcast along it).
// period (per input, empty or 0: none): an input contiguous along a short
// inner axis (P < 16 values) and broadcast along the axis outside it (x -
// mean[c] over NHWC pixels) lets the two axes merge into one long axis; the
// input then repeats every P elements of it (element j reads j % P), so rows
// of 3 elements become one row of lines. Inputs with a period have stride 1
// on the merged axis.
struct Layout {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> period;
  int64_t inner() const { return dims.back(); }
  int64_t rows() const;
  int64_t period_of(size_t i) const { return i < period.size() ? period[i] : 0; }
};
// periodic: fold a short inner axis with periodic inputs (see period).
Layout layout_of(const Chain& c, bool periodic = true);

// Variant: lanes 16 (CPU: one work-item per group walks its chunk of a row in
// 16-lane lines, any row length: lines are built from consecutive elements,
// which clang turns into unaligned vector loads/stores, plus a scalar tail)
// or 1 (GPU: `wg` work-items stride over the chunk). chunk: elements per
// workgroup along the inner axis.
// stream (lanes 16): the output lines are written with streaming stores
// (store_line(stream): no read for ownership, so DRAM sees the output once,
// not twice) where they land on aligned addresses, which every line does
// when rows start on whole lines or there is one row (chain_can_stream); the
// scalar tail and unaligned lines store plainly. For outputs much larger
// than the caches (see ops/common/stream_heuristic.h).
struct ChainVariant {
  int lanes = 16;
  int wg = 1;
  int64_t chunk = 8192;
  bool stream = false;
  // Software prefetch distance in elements (lanes 16, 0: none): each line
  // step hints the line `prefetch` elements ahead in every input read along
  // the inner axis. With streamed stores Intel's hardware prefetcher stops
  // running ahead of a chain with more than a few cycles of arithmetic per
  // line (kStreamPrefetch).
  int64_t prefetch = 0;
  // The CPU form's sigmoid reciprocal (silu, gelu): a line division rather
  // than three Newton steps (ops/elementwise/strategy.h: cheap_line_division).
  bool divide = false;
};
// The prefetch distance (elements) the CPU heuristics pair with streamed
// stores: 1024 and 2048 ahead do as well, 4096 loses.
inline constexpr int64_t kStreamPrefetch = 512;
// Does the chain hold a sigmoid (x / (1 + exp(y))), which `divide` changes?
bool chain_has_sigmoid(const Chain& c);
// Does streaming the chain's output (lanes 16) pay: its rows start on whole
// lines (or it is one contiguous row), so its line stores land aligned.
bool chain_can_stream(const Layout& l);
// The untuned variant of a chain on the target (ops/elementwise/strategy.cpp).
ChainVariant chain_variant_for(const Chain& c, const TargetCaps& caps);
ir::Kernel chain_kernel(const Chain& c, const Layout& l, const ChainVariant& v);
// Appends the chain's launch to `pl`; in_slots: one buffer slot per input.
void plan_chain(Plan& pl, const Chain& c, const std::vector<int>& in_slots, int out_slot, const ChainVariant& v);

// The same over an explicit layout (strided views: a transpose whose inner
// axis stays contiguous); every input's inner stride must be 0 or 1.
void plan_chain_layout(Plan& pl, const Chain& c, const Layout& l, const std::vector<int>& in_slots, int out_slot,
                       const ChainVariant& v);

// The plain C++ reference (each node in its kind, libm), outputs in out_dtype.
void reference_chain(const Chain& c, const std::vector<const void*>& in, void* out);
// Nodes that compute (for flops) and compulsory bytes (inputs at their sizes + output).
double chain_flops(const Chain& c);
double chain_bytes(const Chain& c);
int64_t numel(const std::vector<int64_t>& shape);

// Host conversions used by the references of this family (f32 <-> storage
// type, any kind; to integers as cast() converts).
float load_as_f32(ir::ScalarKind k, const void* base, int64_t i);
// Elements [0, n) of `base` as f32 (exact for f16/bf16): the op references'
// copies of their inputs.
std::vector<float> load_all_as_f32(ir::ScalarKind k, const void* base, int64_t n);
void store_from_f32(ir::ScalarKind k, void* base, int64_t i, float v);

}  // namespace kgen::ops::fusion
