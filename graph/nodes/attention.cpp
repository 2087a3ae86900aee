// The transformer ops: Attention (opsets 23-24) and RotaryEmbedding (23).
//
// Attention: Y = softmax(softcap(Q·Kᵀ·scale) + bias)·V per head, K and V
// after their past caches (the present_key / present_value outputs), each
// group of Hq/Hkv query heads sharing a kv head. Without a mask, a softcap
// or the qk output, with equal head sizes and where ONNX's causal alignment
// (top-left, shifted by the past length) is kgen's (bottom-right: S new keys
// for S queries), it runs the attention op. Else it is composed: batched
// matmuls (a kv head's query heads as one G·S-row product, so K and V are
// never repeated), a bias chain (mask, causal, key padding), the softmax op
// and ONNX's guard zeroing rows that see no key.
//
// RotaryEmbedding: the cos/sin rows gathered by position_ids, both halves
// (or the interleaved pairs) of the rotated part written by one chain. kgen's
// rope op computes its own angles, so it does not apply to given caches.
#include <cmath>
#include <limits>

#include "graph/lower.h"
#include "graph/nodes/reduce_more.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;

constexpr double kInf = std::numeric_limits<double>::infinity();

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

bool float_kind(ScalarKind k) { return k == ScalarKind::F32 || k == ScalarKind::F16 || k == ScalarKind::BF16; }

void strided_copy(LowerCtx& c, const ops::StridedCopy& cp, int src, int dst) {
  if (numel(cp.shape) == 0) return;
  c.strided_copy(cp, src, dst);
}

// ---- Attention ----
struct AttDims {
  bool three_d = false;
  int64_t b = 0, hq = 0, hkv = 0, s = 0, kv_new = 0, past = 0, skv = 0, d = 0, dv = 0;
  int64_t group() const { return hq / hkv; }
};

AttDims att_dims(const InferCtx& c) {
  const Shape &q = c.shape(0), &k = c.shape(1), &v = c.shape(2);
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    c.invalid("Q, K and V must all be 3-D or all 4-D");
  AttDims a;
  a.three_d = q.size() == 3;
  a.b = q[0];
  if (a.three_d) {
    a.hq = c.node.attr_int("q_num_heads", 0);
    a.hkv = c.node.attr_int("kv_num_heads", 0);
    if (a.hq < 1 || a.hkv < 1) c.invalid("3-D inputs need q_num_heads and kv_num_heads");
    if (q[2] % a.hq || k[2] % a.hkv || v[2] % a.hkv) c.invalid("hidden sizes that the head counts do not divide");
    a.s = q[1], a.kv_new = k[1], a.d = q[2] / a.hq, a.dv = v[2] / a.hkv;
    if (k[2] / a.hkv != a.d || v[1] != k[1] || k[0] != a.b || v[0] != a.b) c.invalid("Q, K and V sizes disagree");
  } else {
    a.hq = q[1], a.hkv = k[1], a.s = q[2], a.kv_new = k[2], a.d = q[3], a.dv = v[3];
    if (k[3] != a.d || v[1] != a.hkv || v[2] != a.kv_new || k[0] != a.b || v[0] != a.b)
      c.invalid("Q, K and V sizes disagree");
  }
  if (a.hkv < 1 || a.hq % a.hkv) c.invalid("q heads not a multiple of kv heads");
  if (c.has_in(4) != c.has_in(5)) c.invalid("past_key and past_value come together");
  if (c.has_in(4)) {
    const Shape &pk = c.shape(4), &pv = c.shape(5);
    if (pk.size() != 4 || pv.size() != 4 || pk != Shape{a.b, a.hkv, pk[2], a.d} || pv != Shape{a.b, a.hkv, pk[2], a.dv})
      c.invalid("past_key " + shape_str(pk) + " or past_value " + shape_str(pv) + " do not fit K and V");
    a.past = pk[2];
  }
  a.skv = a.past + a.kv_new;
  if (c.has_in(3)) {
    const Shape& m = c.shape(3);
    if (m.empty() || m.back() > a.skv)
      c.invalid("attn_mask " + shape_str(m) + " longer than the " + std::to_string(a.skv) + " keys");
    Shape padded = m;
    padded.back() = a.skv;
    broadcast_shapes(c, {padded, {a.b, a.hq, a.s, a.skv}});
  }
  return a;
}

void infer_attention(InferCtx& c) {
  c.require_inputs(3, 7);
  const AttDims a = att_dims(c);
  c.set_out(0, c.dtype(0), a.three_d ? Shape{a.b, a.s, a.hq * a.dv} : Shape{a.b, a.hq, a.s, a.dv});
  c.set_out(1, c.dtype(1), {a.b, a.hkv, a.skv, a.d});
  c.set_out(2, c.dtype(2), {a.b, a.hkv, a.skv, a.dv});
  c.set_out(3, c.dtype(0), {a.b, a.hq, a.s, a.skv});
}

// Input i as [B, H, rows, d]: a 3-D [B, rows, H·d] input permuted (into dst,
// else a temp); a 4-D one as it is (copied when dst is given).
int heads_first(LowerCtx& c, const AttDims& a, int i, int64_t h, int64_t d, int dst = -1) {
  const ScalarKind k = c.in(i).dtype;
  const Shape& x = c.in(i).shape;
  const int64_t rows = a.three_d ? x[1] : x[2];
  if (!a.three_d && dst < 0) return c.in_slot(i);
  if (dst < 0) dst = temp_of(c, {a.b, h, rows, d}, k);
  if (a.three_d) lower_permute(c, c.in_slot(i), {a.b, rows, h, d}, k, {0, 2, 1, 3}, dst);
  else lower_permute(c, c.in_slot(i), x, k, {0, 1, 2, 3}, dst);
  return dst;
}

// `piece` [B, H, n, d] into `full` [B, H, N, d] at row `at`.
void place_rows(LowerCtx& c, int piece, const Shape& ps, const Shape& full, int64_t at, ScalarKind k, int dst) {
  ops::StridedCopy cp;
  cp.elem_bytes = int(dtype_bytes(k));
  cp.shape = ps;
  cp.in_strides = strides_of(ps);
  cp.out_strides = strides_of(full);
  cp.out_offset = at * cp.out_strides[2];
  strided_copy(c, cp, piece, dst);
}

// K (cur 1, past 4, output 1) or V (2, 5, 2) after its past cache:
// [B, Hkv, Skv, d], in the present output when asked for, else a temp.
int with_past(LowerCtx& c, const AttDims& a, int cur, int past, int out, int64_t d) {
  const int dst = c.has_out(out) ? c.out_slot(out) : -1;
  if (!c.has_in(past)) return heads_first(c, a, cur, a.hkv, d, dst);
  const ScalarKind k = c.in(cur).dtype;
  const Shape full = {a.b, a.hkv, a.skv, d};
  const int to = dst >= 0 ? dst : temp_of(c, full, k);
  place_rows(c, c.in_slot(past), {a.b, a.hkv, a.past, d}, full, 0, k, to);
  place_rows(c, heads_first(c, a, cur, a.hkv, d), {a.b, a.hkv, a.kv_new, d}, full, a.past, k, to);
  return to;
}

double att_scale(const LowerCtx& c, const AttDims& a) {
  return c.node.has("scale") ? c.node.attr_float("scale", 1.0) : 1.0 / std::sqrt(double(a.d));
}

double softcap_of(const LowerCtx& c) { return c.node.attr_float("softcap", 0.0); }

// The attention op applies: no mask, padding, softcap or qk output, one head
// size, and ONNX's causal frontier (key j <= i + past) equal to kgen's
// (j <= i + Skv - S).
bool fits_attention_op(const LowerCtx& c, const AttDims& a) {
  if (c.has_in(3) || c.has_in(6) || c.has_out(3) || softcap_of(c) > 0) return false;
  if (a.d != a.dv || a.d > 256) return false;
  if (c.node.attr_int("is_causal", 0) && a.kv_new != a.s) return false;
  return true;
}

// The attention op into y4 (f32 [B, Hq, S, D]); a scale kgen's whole
// thousandths do not hold exactly is applied to Q first.
void lower_attention_op(LowerCtx& c, const AttDims& a, int q, int kp, int vp, int y4) {
  const ScalarKind k = c.in(0).dtype;
  ops::Problem p;
  p.op = "attention";
  p.dtype = k;
  p.dims = {a.b, a.hq, a.s, a.d, a.hkv, a.skv};
  if (c.node.attr_int("is_causal", 0)) p.attrs["causal"] = 1;
  if (c.node.has("scale")) {
    const double scale = att_scale(c, a);
    const int64_t milli = std::llround(scale * 1000);
    if (float(milli) / 1000.0f == float(scale)) {
      p.attrs["scale_milli"] = milli;
    } else {
      const Shape qs = {a.b, a.hq, a.s, a.d};
      const int scaled = temp_of(c, qs, k);
      MapChain ch;
      ch.write(c, "attention_scale_q", ch.in(q, k, qs) * fz::lit(scale), k, qs, scaled);
      q = scaled;
      p.attrs["scale_milli"] = 1000;
    }
  }
  c.op(p, {q, kp, vp, y4});
}

void batched_matmul(LowerCtx& c, ScalarKind b_kind, bool a_f32, int64_t batch, Shape mnk, bool trans_b, int a, int b,
                    int out) {
  ops::Problem p;
  p.op = "matmul";
  p.dtype = b_kind;
  p.dims = std::move(mnk);
  if (batch != 1) p.attrs["batch"] = batch;
  if (trans_b) p.attrs["trans_b"] = 1;
  if (a_f32 && b_kind != ScalarKind::F32) p.attrs["a_f32"] = 1;
  c.op(p, {a, b, out});
}

// The additive bias (0 or -inf per key, or the float mask's values), f32.
struct Bias {
  int slot = -1;
  Shape shape;
  bool masks_rows = false;  // some row may see no key: the guard is needed
};

// attn_mask with its key axis padded to Skv (-inf, or false, past its end).
int padded_mask(LowerCtx& c, const AttDims& a, Shape& shape) {
  const ScalarKind k = c.in(3).dtype;
  shape = c.in(3).shape;
  if (shape.back() == a.skv) return c.in_slot(3);
  ops::Pad p;
  p.elem_bytes = int(dtype_bytes(k));
  p.in_shape = shape;
  p.pads_begin.assign(shape.size(), 0);
  p.pads_end.assign(shape.size(), 0);
  p.pads_end.back() = a.skv - shape.back();
  p.value_bits = k == ScalarKind::F32    ? 0xff800000u
                 : k == ScalarKind::F16  ? 0xfc00u
                 : k == ScalarKind::BF16 ? 0xff80u
                                         : 0u;
  shape.back() = a.skv;
  const int dst = temp_of(c, shape, k);
  ops::Plan plan;
  ops::plan_pad(plan, p, 0, 1, ops::move_variant_for(c.caps()));
  c.steps(plan, {c.in_slot(3), dst});
  return dst;
}

Tensor iota(const Shape& shape) {
  Tensor t(ScalarKind::F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, double(i));
  return t;
}

Expr allow(const Expr& visible) { return fz::where(visible, fz::lit(0), fz::lit(-kInf)); }

Bias attention_bias(LowerCtx& c, const AttDims& a) {
  const bool causal = c.node.attr_int("is_causal", 0) != 0, padded = c.has_in(6);
  if (!c.has_in(3) && !causal && !padded) return {};
  MapChain ch;
  std::vector<Expr> terms;
  std::vector<Shape> shapes;
  Bias bias;
  if (c.has_in(3)) {
    const ScalarKind k = c.in(3).dtype;
    if (k != ScalarKind::Bool && !float_kind(k)) c.unsupported("attn_mask of type " + std::string(ir::scalar_name(k)));
    Shape ms;
    const int m = padded_mask(c, a, ms);
    const Expr e = ch.in(m, k, ms);
    terms.push_back(k == ScalarKind::Bool ? allow(e) : e);
    shapes.push_back(ms);
    bias.masks_rows = true;
  }
  const Shape rows = {a.s, 1}, cols = {a.skv};
  if (padded) {
    // Keys at and past nonpad_kv_seqlen[b] are hidden; causal: query i sees
    // key j <= i + nonpad_kv_seqlen[b] - S (opset 24).
    const ScalarKind lk = c.in(6).dtype;
    const Expr len = fz::cast(ScalarKind::F32, ch.in(c.in_slot(6), lk, {a.b, 1, 1, 1}));
    const Expr col = ch.in(c.constant_slot(iota(cols)), ScalarKind::F32, cols);
    terms.push_back(allow(fz::lt(col, len)));
    if (causal) {
      const Expr row = ch.in(c.constant_slot(iota(rows)), ScalarKind::F32, rows);
      terms.push_back(allow(fz::le(col, row + len - fz::lit(double(a.s)))));
    }
    shapes.push_back({a.b, 1, a.s, a.skv});
    bias.masks_rows = true;
  } else if (causal) {
    // Query i sees key j <= i + past (ONNX's frontier): never an empty row.
    Tensor t(ScalarKind::F32, {a.s, a.skv});
    for (int64_t i = 0; i < a.s; ++i)
      for (int64_t j = 0; j < a.skv; ++j) t.set(i * a.skv + j, j <= i + a.past ? 0.0 : -kInf);
    terms.push_back(ch.in(c.constant_slot(std::move(t)), ScalarKind::F32, {a.s, a.skv}));
    shapes.push_back({a.s, a.skv});
  }
  Expr sum = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) sum = sum + terms[i];
  bias.shape = broadcast_shapes(ctx_of(c), shapes);
  bias.slot = temp_of(c, bias.shape, ScalarKind::F32);
  ch.write(c, "attention_bias", sum, ScalarKind::F32, bias.shape, bias.slot);
  return bias;
}

// scores·scale, softcapped where asked (ONNX caps before the bias).
Expr capped_scores(LowerCtx& c, const AttDims& a, MapChain& ch, int scores, const Shape& ss) {
  Expr x = ch.in(scores, ScalarKind::F32, ss) * fz::lit(att_scale(c, a));
  if (const double cap = softcap_of(c); cap > 0) x = fz::lit(cap) * fz::tanh(x / fz::lit(cap));
  return x;
}

// The qk_matmul_output output: 0 and 1 the (capped) scores, 2 with the bias,
// 3 the probabilities.
void qk_output(LowerCtx& c, const AttDims& a, int scores, int logits, int probs, const Shape& ss) {
  if (!c.has_out(3)) return;
  const int64_t mode = c.node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) c.unsupported("qk_matmul_output_mode " + std::to_string(mode));
  MapChain ch;
  const Expr e =
      mode <= 1 ? capped_scores(c, a, ch, scores, ss) : ch.in(mode == 2 ? logits : probs, ScalarKind::F32, ss);
  ch.write(c, "attention_qk", e, c.out(3).dtype, ss, c.out_slot(3));
}

// Composed: scores = Q·Kᵀ (batch B·Hkv, G·S rows), logits with the bias,
// softmax, the empty-row guard, then P·V into y4 (f32 [B, Hq, S, Dv]).
void lower_attention_composed(LowerCtx& c, const AttDims& a, int q, int kp, int vp, int y4) {
  const ScalarKind qk = c.in(0).dtype, vk = c.in(2).dtype;
  const Shape ss = {a.b, a.hq, a.s, a.skv};
  const int scores = temp_of(c, ss, ScalarKind::F32);
  batched_matmul(c, qk, false, a.b * a.hkv, {a.group() * a.s, a.skv, a.d}, true, q, kp, scores);
  const Bias bias = attention_bias(c, a);
  const int logits = temp_of(c, ss, ScalarKind::F32), probs = temp_of(c, ss, ScalarKind::F32);
  MapChain lg;
  Expr x = capped_scores(c, a, lg, scores, ss);
  if (bias.slot >= 0) x = x + lg.in(bias.slot, ScalarKind::F32, bias.shape);
  lg.write(c, "attention_logits", x, ScalarKind::F32, ss, logits);
  ops::Problem sm;
  sm.op = "softmax";
  sm.dtype = ScalarKind::F32;
  sm.dims = {a.b * a.hq * a.s, a.skv};
  c.op(sm, {logits, probs});
  int p = probs;
  if (bias.masks_rows) {
    // ONNX: a row whose bias is -inf everywhere has probabilities 0 (softmax gives NaN).
    std::vector<bool> last(bias.shape.size(), false);
    last.back() = true;
    const Shape rs = keepdims_shape(bias.shape, last);
    const int row_max = temp_of(c, rs, ScalarKind::F32);
    lower_reduce_axes(c, bias.slot, bias.shape, ScalarKind::F32, last, Combine::Max, row_max);
    p = temp_of(c, ss, ScalarKind::F32);
    MapChain g;
    const Expr empty = fz::isinf(g.in(row_max, ScalarKind::F32, rs), false, true);
    g.write(c, "attention_guard", fz::where(empty, fz::lit(0), g.in(probs, ScalarKind::F32, ss)), ScalarKind::F32, ss,
            p);
  }
  qk_output(c, a, scores, logits, p, ss);
  batched_matmul(c, vk, true, a.b * a.hkv, {a.group() * a.s, a.dv, a.skv}, false, p, vp, y4);
}

// y4 (f32 [B, Hq, S, Dv]) into Y: cast to its type, 3-D heads joined.
void write_y(LowerCtx& c, const AttDims& a, int y4) {
  const ScalarKind k = c.out(0).dtype;
  const Shape s4 = {a.b, a.hq, a.s, a.dv};
  int src = y4;
  if (k != ScalarKind::F32) {
    src = a.three_d ? temp_of(c, s4, k) : c.out_slot(0);
    MapChain ch;
    ch.write(c, "attention_cast", ch.in(y4, ScalarKind::F32, s4), k, s4, src);
  }
  if (a.three_d) lower_permute(c, src, s4, k, {0, 2, 1, 3}, c.out_slot(0));
}

void lower_attention(LowerCtx& c) {
  const AttDims a = att_dims(ctx_of(c));
  const ScalarKind k = c.in(0).dtype;
  if (!float_kind(k) || c.in(1).dtype != k || c.in(2).dtype != k)
    c.unsupported("Q, K, V of types " + std::string(ir::scalar_name(k)) + ", " +
                  std::string(ir::scalar_name(c.in(1).dtype)) + ", " + std::string(ir::scalar_name(c.in(2).dtype)) +
                  " (one float type)");
  if (c.node.attr_int("left_window_size", -1) != -1 || c.node.attr_int("right_window_size", -1) != -1)
    c.unsupported("sliding windows (left_window_size / right_window_size)");
  if (c.has_in(6) && c.has_in(4)) c.unsupported("nonpad_kv_seqlen with past_key");
  if (a.skv == 0 || a.s == 0) c.unsupported("attention over no keys or no queries");
  const int q = heads_first(c, a, 0, a.hq, a.d);
  const int kp = with_past(c, a, 1, 4, 1, a.d), vp = with_past(c, a, 2, 5, 2, a.dv);
  const bool direct = !a.three_d && c.out(0).dtype == ScalarKind::F32;
  const int y4 = direct ? c.out_slot(0) : temp_of(c, {a.b, a.hq, a.s, a.dv}, ScalarKind::F32);
  if (fits_attention_op(c, a)) lower_attention_op(c, a, q, kp, vp, y4);
  else lower_attention_composed(c, a, q, kp, vp, y4);
  if (!direct) write_y(c, a, y4);
}

// ---- RotaryEmbedding ----
struct RopeDims {
  bool four_d = false;  // [B, H, S, Dh]; else [B, S, H·Dh]
  int64_t b = 0, s = 0, h = 0, dh = 0, rd = 0;
  int64_t half() const { return rd / 2; }
};

RopeDims rope_dims(const InferCtx& c) {
  const Shape& x = c.shape(0);
  RopeDims r;
  if (x.size() == 4) {
    r.four_d = true;
    r.b = x[0], r.h = x[1], r.s = x[2], r.dh = x[3];
  } else if (x.size() == 3) {
    r.h = c.node.attr_int("num_heads", 0);
    if (r.h < 1 || x[2] % r.h) c.invalid("3-D input needs num_heads dividing its hidden size");
    r.b = x[0], r.s = x[1], r.dh = x[2] / r.h;
  } else {
    c.invalid("input " + shape_str(x) + ": 3-D or 4-D");
  }
  r.rd = c.node.attr_int("rotary_embedding_dim", 0);
  if (r.rd == 0) r.rd = r.dh;
  if (r.rd < 2 || r.rd % 2 || r.rd > r.dh)
    c.invalid("rotary_embedding_dim " + std::to_string(r.rd) + " for heads of " + std::to_string(r.dh));
  // Caches of [positions, half] rows with position_ids, else [B, S, half].
  for (int i : {1, 2}) {
    const Shape& cs = c.shape(i);
    const bool fits = c.has_in(3) ? cs.size() == 2 && cs[1] == r.half() : cs == Shape{r.b, r.s, r.half()};
    if (!fits) c.invalid("cos/sin cache " + shape_str(cs) + " for " + std::to_string(r.half()) + " rotated pairs");
  }
  if (c.has_in(3) && c.shape(3) != Shape{r.b, r.s})
    c.invalid("position_ids " + shape_str(c.shape(3)) + ", expected [B, S]");
  return r;
}

void infer_rope(InferCtx& c) {
  c.require_inputs(3, 4);
  rope_dims(c);
  if (c.dtype(1) != c.dtype(0) || c.dtype(2) != c.dtype(0)) c.invalid("caches of another type than the input");
  c.set_out(0, c.dtype(0), c.shape(0));
}

// Cache input i's rows for each (batch, position): [B, S, half].
int cache_rows(LowerCtx& c, const RopeDims& r, int i) {
  if (!c.has_in(3)) return c.in_slot(i);
  ops::Gather g;
  g.elem_bytes = int(dtype_bytes(c.in(i).dtype));
  g.axis_len = c.in(i).shape[0];
  g.inner = r.half();
  g.n_indices = r.b * r.s;
  g.index_kind = c.in(3).dtype;
  if (g.index_kind != ScalarKind::I64 && g.index_kind != ScalarKind::I32)
    c.unsupported("position_ids not int64 or int32");
  const int dst = temp_of(c, {r.b, r.s, r.half()}, c.in(i).dtype);
  ops::Plan plan;
  ops::plan_gather(plan, g, 0, 1, 2, ops::move_variant_for(c.caps()));
  c.steps(plan, {c.in_slot(i), c.in_slot(3), dst});
  return dst;
}

void lower_rope(LowerCtx& c) {
  const RopeDims r = rope_dims(ctx_of(c));
  const ScalarKind k = c.in(0).dtype;
  if (!float_kind(k)) c.unsupported("input of type " + std::string(ir::scalar_name(k)));
  const bool inter = c.node.attr_int("interleaved", 0) != 0;
  const int64_t rows = r.b * r.s * r.h, half = r.half();
  // x viewed as [B, A1, A2, Dh]: A1, A2 = H, S (4-D) or S, H (3-D).
  const int64_t a1 = r.four_d ? r.h : r.s, a2 = r.four_d ? r.s : r.h;
  // The rotated part as [..., 2, half] (halves) or [..., half, 2] (pairs).
  const Shape out5 = inter ? Shape{r.b, a1, a2, half, 2} : Shape{r.b, a1, a2, 2, half};
  const Shape part = inter ? Shape{r.b, a1, a2, half, 1} : Shape{r.b, a1, a2, 1, half};
  Shape cs = r.four_d ? Shape{r.b, 1, r.s, 1, half} : Shape{r.b, r.s, 1, 1, half};
  if (inter) cs = r.four_d ? Shape{r.b, 1, r.s, half, 1} : Shape{r.b, r.s, 1, half, 1};
  int x12[2];
  for (int j = 0; j < 2; ++j) {
    ops::StridedCopy cp;
    cp.elem_bytes = int(dtype_bytes(k));
    cp.shape = {rows, half};
    cp.in_strides = {r.dh, inter ? 2 : 1};
    cp.in_offset = j == 0 ? 0 : inter ? 1 : half;
    x12[j] = temp_of(c, {rows, half}, k);
    strided_copy(c, cp, c.in_slot(0), x12[j]);
  }
  Tensor second(ScalarKind::Bool, inter ? Shape{2} : Shape{2, 1});
  second.set(1, 1);
  const Shape sel_shape = second.shape;
  MapChain ch;
  const Expr x1 = ch.in(x12[0], k, part), x2 = ch.in(x12[1], k, part);
  const Expr cosv = ch.in(cache_rows(c, r, 1), k, cs), sinv = ch.in(cache_rows(c, r, 2), k, cs);
  const Expr sel = ch.in(c.constant_slot(std::move(second)), ScalarKind::Bool, sel_shape);
  const Expr y = fz::where(sel, sinv * x1 + cosv * x2, cosv * x1 - sinv * x2);
  const bool whole = r.rd == r.dh;
  const int rot = whole ? c.out_slot(0) : temp_of(c, {rows, r.rd}, k);
  ch.write(c, "rotary", y, k, out5, rot);
  if (whole) return;
  // The rotated part and the untouched tail into their places in each head.
  ops::StridedCopy cp;
  cp.elem_bytes = int(dtype_bytes(k));
  cp.shape = {rows, r.rd};
  cp.in_strides = {r.rd, 1};
  cp.out_strides = {r.dh, 1};
  strided_copy(c, cp, rot, c.out_slot(0));
  cp.shape = {rows, r.dh - r.rd};
  cp.in_strides = {r.dh, 1};
  cp.in_offset = cp.out_offset = r.rd;
  strided_copy(c, cp, c.in_slot(0), c.out_slot(0));
}

}  // namespace

void register_attention_nodes() {
  OpHandler att;
  att.op = "Attention";
  att.infer = infer_attention;
  att.lower = lower_attention;
  register_handler(std::move(att));
  OpHandler rope;
  rope.op = "RotaryEmbedding";
  rope.infer = infer_rope;
  rope.lower = lower_rope;
  register_handler(std::move(rope));
}

}  // namespace kgen::graph
