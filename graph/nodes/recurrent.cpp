// RNN, GRU and LSTM (f32, the default activations) unrolled over their
// static sequence length onto existing ops: one matmul projects every step's
// input for all gates at once; each step then multiplies the previous hidden
// state by each gate's recurrence weights and a few fused elementwise chains
// apply the cell. Forward, reverse and bidirectional; layout 0 and 1; bias,
// initial states, (LSTM) peepholes, (GRU) linear_before_reset; sequence_lens
// only where every sequence runs the whole length.
//
// Chains read their operands as whole slots, so the per-step, per-gate
// blocks live in padded buffers (every block starting on the devices' view
// alignment) and each step reads and writes views of them; strided copies
// move the results into the node's outputs in its layout.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "graph/lower.h"
#include "graph/nodes/reduce_more.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;

enum class Cell { Rnn, Gru, Lstm };

// The node's sizes and options, checked.
struct Recurrence {
  Cell cell;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, gates = 1, dirs = 1;
  bool batch_major = false;    // layout 1: X [batch, seq, input], states [batch, dirs, hidden]
  bool reverse = false;        // direction "reverse" (one direction, backwards)
  bool linear_before_reset = false;  // GRU
};

int gates_of(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

std::vector<std::string> default_activations(Cell c) {
  if (c == Cell::Rnn) return {"tanh"};
  if (c == Cell::Gru) return {"sigmoid", "tanh"};
  return {"sigmoid", "tanh", "tanh"};
}

std::string lower_case(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Only the default activations, without clipping, are lowered.
void check_attributes(const InferCtx& c, Cell cell, int64_t dirs) {
  for (const char* a : {"activation_alpha", "activation_beta", "clip"})
    if (c.node.has(a)) c.unsupported("attribute '" + std::string(a) + "' (only the default activations, unclipped)");
  if (c.node.attr_int("input_forget", 0) != 0) c.unsupported("attribute 'input_forget'=1");
  if (!c.node.has("activations")) return;
  const Attribute& a = c.node.attrs.at("activations");
  std::vector<std::string> want;
  for (int64_t d = 0; d < dirs; ++d)
    for (const std::string& s : default_activations(cell)) want.push_back(s);
  std::vector<std::string> got;
  for (const std::string& s : a.strings) got.push_back(lower_case(s));
  // Some exporters list one direction's activations for both.
  if (got != want && got != default_activations(cell)) c.unsupported("attribute 'activations' other than the defaults");
}

Recurrence recurrence_of(const InferCtx& c, Cell cell) {
  Recurrence r;
  r.cell = cell;
  r.gates = gates_of(cell);
  const std::string dir = c.node.attr_str("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") c.invalid("direction '" + dir + "'");
  r.dirs = dir == "bidirectional" ? 2 : 1;
  r.reverse = dir == "reverse";
  check_attributes(c, cell, r.dirs);
  const int64_t layout = c.node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.invalid("layout " + std::to_string(layout));
  r.batch_major = layout == 1;
  r.linear_before_reset = c.node.attr_int("linear_before_reset", 0) != 0;
  for (int i = 0; i < c.n_in(); ++i)
    if (c.has_in(i) && i != 4 && c.dtype(i) != ScalarKind::F32)
      c.unsupported(std::string("type ") + std::string(ir::scalar_name(c.dtype(i))) + " of input " + std::to_string(i) +
                    " (f32 only)");
  const Shape& x = c.shape(0);
  if (x.size() != 3) c.invalid("X must have rank 3, has shape " + shape_str(x));
  r.seq = r.batch_major ? x[1] : x[0];
  r.batch = r.batch_major ? x[0] : x[1];
  r.input = x[2];
  const Shape& rw = c.shape(2);
  if (rw.size() != 3) c.invalid("R must have rank 3, has shape " + shape_str(rw));
  r.hidden = c.node.attr_int("hidden_size", rw[2]);
  if (r.seq < 1 || r.batch < 1 || r.hidden < 1) c.unsupported("an empty sequence, batch or hidden state");
  const int64_t gh = r.gates * r.hidden;
  auto expect = [&](int i, const Shape& want, const char* name) {
    if (c.has_in(i) && c.shape(i) != want)
      c.invalid(std::string(name) + " of shape " + shape_str(c.shape(i)) + ", expected " + shape_str(want));
  };
  expect(1, {r.dirs, gh, r.input}, "W");
  expect(2, {r.dirs, gh, r.hidden}, "R");
  expect(3, {r.dirs, 2 * gh}, "B");
  const Shape state = r.batch_major ? Shape{r.batch, r.dirs, r.hidden} : Shape{r.dirs, r.batch, r.hidden};
  expect(5, state, "initial_h");
  if (cell == Cell::Lstm) {
    expect(6, state, "initial_c");
    expect(7, {r.dirs, 3 * r.hidden}, "P");
  }
  if (c.has_in(4)) {  // sequence_lens: every batch entry must run the whole sequence
    for (int64_t len : c.need_constant(4, "sequence_lens").ints())
      if (len != r.seq)
        c.unsupported("sequence_lens " + std::to_string(len) + " shorter than the sequence (" + std::to_string(r.seq) + ")");
  }
  return r;
}

Shape y_shape(const Recurrence& r) {
  return r.batch_major ? Shape{r.batch, r.seq, r.dirs, r.hidden} : Shape{r.seq, r.dirs, r.batch, r.hidden};
}
Shape state_shape(const Recurrence& r) {
  return r.batch_major ? Shape{r.batch, r.dirs, r.hidden} : Shape{r.dirs, r.batch, r.hidden};
}

void infer_cell(InferCtx& c, Cell cell) {
  c.require_inputs(3, cell == Cell::Lstm ? 8 : 6);
  const Recurrence r = recurrence_of(c, cell);
  c.set_out(0, ScalarKind::F32, y_shape(r));
  c.set_out(1, ScalarKind::F32, state_shape(r));
  if (cell == Cell::Lstm) c.set_out(2, ScalarKind::F32, state_shape(r));
}

// ---- lowering pieces ----

constexpr size_t kF32 = 4;

void strided_copy(LowerCtx& c, int src, int dst, const std::vector<int64_t>& shape, int64_t in_offset,
                  const std::vector<int64_t>& in_strides, int64_t out_offset, const std::vector<int64_t>& out_strides) {
  ops::StridedCopy cp;
  cp.elem_bytes = int(kF32);
  cp.shape = shape;
  cp.in_offset = in_offset;
  cp.in_strides = in_strides;
  cp.out_offset = out_offset;
  cp.out_strides = out_strides;
  c.strided_copy(cp, src, dst);
}

// A contiguous block of `count` floats of input i at element `offset`: a
// constant slice where the input is constant (weights), else copied per run.
int input_block(LowerCtx& c, int i, int64_t offset, int64_t count) {
  if (const Tensor* t = c.constant(i)) {
    Tensor slice(ScalarKind::F32, {count});
    std::memcpy(slice.mutable_data(), t->data() + size_t(offset) * kF32, size_t(count) * kF32);
    return c.constant_slot(std::move(slice));
  }
  const int dst = c.temp(size_t(count) * kF32);
  strided_copy(c, c.in_slot(i), dst, {count}, offset, {1}, 0, {1});
  return dst;
}

// A view of `count` floats of `root` at element `offset` (aligned by the caller).
int view_of(LowerCtx& c, int root, int64_t offset, int64_t count) {
  Slot s;
  s.kind = Slot::Kind::Temp;
  s.bytes = size_t(count) * kF32;
  s.alias = root;
  s.alias_offset = size_t(offset) * kF32;
  return c.prog.add_slot(s);
}

// dst (m × n) = a (m × k) · bᵀ (b: n × k), f32.
void matmul_bt(LowerCtx& c, int a, int b, int64_t m, int64_t n, int64_t k, int dst) {
  ops::Problem p;
  p.op = "matmul";
  p.dtype = ScalarKind::F32;
  p.dims = {m, n, k};
  p.attrs["trans_b"] = 1;
  c.op(p, {a, b, dst});
}

// One direction's weights, split per gate.
struct DirWeights {
  std::vector<int> r;       // per gate: hidden × hidden
  std::vector<int> b;       // per gate: Wb + Rb, hidden (-1 without B)
  int wb_h = -1, rb_h = -1;  // GRU with linear_before_reset: the h gate's biases apart
  std::vector<int> p;       // LSTM peepholes i, o, f: hidden (empty without P)
  int h0 = -1, c0 = -1;     // initial states: batch × hidden
};

// The per-step block size: batch × hidden floats rounded up to the view alignment.
int64_t block_elems(const LowerCtx& c, const Recurrence& r) {
  const int64_t align = int64_t(std::max<size_t>(256, c.dev.view_alignment()) / kF32);
  return (r.batch * r.hidden + align - 1) / align * align;
}

// An initial state of direction d (input i, or zeros) as batch × hidden.
int initial_state(LowerCtx& c, const Recurrence& r, int i, int64_t d) {
  const int64_t bh = r.batch * r.hidden;
  if (!c.has_in(i)) return c.constant_slot(Tensor(ScalarKind::F32, {r.batch, r.hidden}));
  const int dst = c.temp(size_t(bh) * kF32);
  if (r.batch_major)
    strided_copy(c, c.in_slot(i), dst, {r.batch, r.hidden}, d * r.hidden, {r.dirs * r.hidden, 1}, 0, {r.hidden, 1});
  else
    strided_copy(c, c.in_slot(i), dst, {bh}, d * bh, {1}, 0, {1});
  return dst;
}

// Wb + Rb of gate g (one chain), and the two apart where asked.
int summed_bias(LowerCtx& c, const Recurrence& r, int64_t d, int64_t g, int* wb, int* rb) {
  const int64_t h = r.hidden, gh = r.gates * h;
  const int w = input_block(c, 3, d * 2 * gh + g * h, h), rr = input_block(c, 3, d * 2 * gh + gh + g * h, h);
  if (wb) *wb = w, *rb = rr;
  MapChain ch;
  const Expr sum = ch.in(w, ScalarKind::F32, {h}) + ch.in(rr, ScalarKind::F32, {h});
  const int dst = c.temp(size_t(h) * kF32);
  ch.write(c, "rnn_bias", sum, ScalarKind::F32, {h}, dst);
  return dst;
}

DirWeights weights_of(LowerCtx& c, const Recurrence& r, int64_t d) {
  DirWeights w;
  const int64_t h = r.hidden;
  for (int64_t g = 0; g < r.gates; ++g) {
    w.r.push_back(input_block(c, 2, (d * r.gates + g) * h * h, h * h));
    const bool apart = r.cell == Cell::Gru && g == 2 && r.linear_before_reset;
    w.b.push_back(c.has_in(3) ? summed_bias(c, r, d, g, apart ? &w.wb_h : nullptr, apart ? &w.rb_h : nullptr) : -1);
  }
  if (r.cell == Cell::Lstm && c.has_in(7))
    for (int64_t j = 0; j < 3; ++j) w.p.push_back(input_block(c, 7, d * 3 * h + j * h, h));
  w.h0 = initial_state(c, r, 5, d);
  if (r.cell == Cell::Lstm) w.c0 = initial_state(c, r, 6, d);
  return w;
}

// Every step's input projection of direction d, gate by gate in padded
// blocks: element ((t · gates + g) · blk + b · hidden + j).
int project_inputs(LowerCtx& c, const Recurrence& r, int64_t d, int64_t blk) {
  const int64_t h = r.hidden, gh = r.gates * h, rows = r.seq * r.batch;
  const int w = r.dirs == 1 ? c.in_slot(1) : input_block(c, 1, d * gh * r.input, gh * r.input);
  const int xw = c.temp(size_t(rows * gh) * kF32);
  matmul_bt(c, c.in_slot(0), w, rows, gh, r.input, xw);  // rows in X's order
  const int padded = c.temp(size_t(r.seq * r.gates * blk) * kF32);
  const int64_t t_stride = r.batch_major ? gh : r.batch * gh, b_stride = r.batch_major ? r.seq * gh : gh;
  strided_copy(c, xw, padded, {r.seq, r.gates, r.batch, h}, 0, {t_stride, h, b_stride, 1}, 0, {r.gates * blk, blk, h, 1});
  return padded;
}

// A chain over (batch, hidden) slots and per-hidden vectors. Chains keep
// to 6 inputs: WebGPU binds 8 storage buffers per kernel, and the output and
// the launch's parameters take two.
struct StepChain {
  const Recurrence& r;
  MapChain ch;
  Expr state(int slot) { return ch.in(slot, ScalarKind::F32, {r.batch, r.hidden}); }
  Expr vec(int slot) { return ch.in(slot, ScalarKind::F32, {r.hidden}); }
  void write(LowerCtx& c, const char* name, const Expr& e, int dst) {
    ch.write(c, name, e, ScalarKind::F32, {r.batch, r.hidden}, dst);
  }
  // x + h (+ b) of gate g: its pre-activation from the step's input projection and recurrence product.
  Expr pre(int x, int h, const DirWeights& w, int64_t g) {
    Expr e = state(x) + state(h);
    return w.b[size_t(g)] >= 0 ? e + vec(w.b[size_t(g)]) : e;
  }
};

struct StepSlots {
  std::vector<int> x;  // per gate: this step's input projection (views)
  int h_prev, h_out;
  int c_prev = -1, c_out = -1;  // LSTM cell states
};

int state_temp(LowerCtx& c, const Recurrence& r) { return c.temp(size_t(r.batch * r.hidden) * kF32); }

// H_prev · R_gᵀ for the first n_gates gates.
std::vector<int> recurrent_products(LowerCtx& c, const Recurrence& r, const DirWeights& w, int h_prev, int64_t n_gates) {
  std::vector<int> hr;
  for (int64_t g = 0; g < n_gates; ++g) {
    hr.push_back(state_temp(c, r));
    matmul_bt(c, h_prev, w.r[size_t(g)], r.batch, r.hidden, r.hidden, hr.back());
  }
  return hr;
}

void rnn_step(LowerCtx& c, const Recurrence& r, const DirWeights& w, const StepSlots& s) {
  const std::vector<int> hr = recurrent_products(c, r, w, s.h_prev, 1);
  StepChain k{r, {}};
  k.write(c, "rnn_cell", fz::tanh(k.pre(s.x[0], hr[0], w, 0)), s.h_out);
}

// σ(pre-activation of gate g (+ peephole ⊙ the previous cell state)) into a
// new temp; peephole -1: none.
int gate_activation(LowerCtx& c, const Recurrence& r, const DirWeights& w, const StepSlots& s, const std::vector<int>& hr,
                    int64_t g, int peephole = -1) {
  StepChain k{r, {}};
  Expr e = k.pre(s.x[size_t(g)], hr[size_t(g)], w, g);
  if (peephole >= 0 && !w.p.empty()) e = e + k.vec(w.p[size_t(peephole)]) * k.state(s.c_prev);
  const int dst = state_temp(c, r);
  k.write(c, "rnn_gate", fz::sigmoid(e), dst);
  return dst;
}

// The GRU candidate n of gates z, r, h. linear_before_reset applies r after
// the recurrence product (r ⊙ (H·Rhᵀ + Rbh)); otherwise before it
// ((r ⊙ H)·Rhᵀ + Rbh).
int gru_candidate(LowerCtx& c, const Recurrence& r, const DirWeights& w, const StepSlots& s, const std::vector<int>& hr) {
  const int n = state_temp(c, r);
  if (r.linear_before_reset) {
    const int reset = gate_activation(c, r, w, s, hr, 1);
    StepChain k{r, {}};
    Expr rec = k.state(hr[2]), cand = k.state(s.x[2]);
    if (w.rb_h >= 0) rec = rec + k.vec(w.rb_h), cand = cand + k.vec(w.wb_h);
    k.write(c, "gru_candidate", fz::tanh(cand + k.state(reset) * rec), n);
    return n;
  }
  const int rh = state_temp(c, r), hh = state_temp(c, r);
  StepChain reset{r, {}};
  reset.write(c, "gru_reset", fz::sigmoid(reset.pre(s.x[1], hr[1], w, 1)) * reset.state(s.h_prev), rh);
  matmul_bt(c, rh, w.r[2], r.batch, r.hidden, r.hidden, hh);
  StepChain k{r, {}};
  k.write(c, "gru_candidate", fz::tanh(k.pre(s.x[2], hh, w, 2)), n);
  return n;
}

void gru_step(LowerCtx& c, const Recurrence& r, const DirWeights& w, const StepSlots& s) {
  const std::vector<int> hr = recurrent_products(c, r, w, s.h_prev, r.linear_before_reset ? 3 : 2);
  const int n = gru_candidate(c, r, w, s, hr);
  StepChain k{r, {}};
  const Expr z = fz::sigmoid(k.pre(s.x[0], hr[0], w, 0));
  k.write(c, "gru_cell", (fz::lit(1.0) - z) * k.state(n) + z * k.state(s.h_prev), s.h_out);
}

// Gates i, o, f, c; peepholes i, o, f.
void lstm_step(LowerCtx& c, const Recurrence& r, const DirWeights& w, const StepSlots& s) {
  const std::vector<int> hr = recurrent_products(c, r, w, s.h_prev, 4);
  const int i = gate_activation(c, r, w, s, hr, 0, 0), f = gate_activation(c, r, w, s, hr, 2, 2);
  {
    StepChain k{r, {}};
    const Expr cand = fz::tanh(k.pre(s.x[3], hr[3], w, 3));
    k.write(c, "lstm_cell_state", k.state(f) * k.state(s.c_prev) + k.state(i) * cand, s.c_out);
  }
  StepChain k{r, {}};
  const Expr c_new = k.state(s.c_out);
  Expr po = k.pre(s.x[1], hr[1], w, 1);
  if (!w.p.empty()) po = po + k.vec(w.p[1]) * c_new;
  k.write(c, "lstm_hidden", fz::sigmoid(po) * fz::tanh(c_new), s.h_out);
}

// The outputs of direction d: Y from the steps' hidden states (hall, padded
// blocks), Y_h from the last step's, Y_c from the last cell state.
void write_outputs(LowerCtx& c, const Recurrence& r, int64_t d, int hall, int64_t blk, int64_t last_t, int c_last) {
  const int64_t h = r.hidden;
  if (c.has_out(0)) {
    const std::vector<int64_t> out_strides = r.batch_major ? std::vector<int64_t>{r.dirs * h, r.seq * r.dirs * h, 1}
                                                           : std::vector<int64_t>{r.dirs * r.batch * h, h, 1};
    strided_copy(c, hall, c.out_slot(0), {r.seq, r.batch, h}, 0, {blk, h, 1}, d * (r.batch_major ? h : r.batch * h), out_strides);
  }
  auto state_out = [&](int out, int src, int64_t in_offset) {
    if (!c.has_out(out)) return;
    const std::vector<int64_t> out_strides = r.batch_major ? std::vector<int64_t>{r.dirs * h, 1} : std::vector<int64_t>{h, 1};
    strided_copy(c, src, c.out_slot(out), {r.batch, h}, in_offset, {h, 1}, d * (r.batch_major ? h : r.batch * h), out_strides);
  };
  state_out(1, hall, last_t * blk);
  if (r.cell == Cell::Lstm) state_out(2, c_last, 0);
}

void lower_direction(LowerCtx& c, const Recurrence& r, int64_t d) {
  const bool backwards = r.reverse || d == 1;
  const int64_t blk = block_elems(c, r), bh = r.batch * r.hidden;
  const DirWeights w = weights_of(c, r, d);
  const int xs = project_inputs(c, r, d, blk);
  const int hall = c.temp(size_t(r.seq * blk) * kF32);
  int h_prev = w.h0, c_prev = w.c0;
  for (int64_t step = 0; step < r.seq; ++step) {
    const int64_t t = backwards ? r.seq - 1 - step : step;
    StepSlots s;
    for (int64_t g = 0; g < r.gates; ++g) s.x.push_back(view_of(c, xs, (t * r.gates + g) * blk, bh));
    s.h_prev = h_prev;
    s.h_out = view_of(c, hall, t * blk, bh);
    if (r.cell == Cell::Lstm) {
      s.c_prev = c_prev;
      s.c_out = state_temp(c, r);
    }
    if (r.cell == Cell::Rnn) rnn_step(c, r, w, s);
    else if (r.cell == Cell::Gru) gru_step(c, r, w, s);
    else lstm_step(c, r, w, s);
    h_prev = s.h_out;
    c_prev = s.c_out;
  }
  write_outputs(c, r, d, hall, blk, backwards ? 0 : r.seq - 1, c_prev);
}

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

OpHandler cell_handler(const char* op, Cell cell) {
  OpHandler h;
  h.op = op;
  h.infer = [cell](InferCtx& c) { infer_cell(c, cell); };
  h.lower = [cell](LowerCtx& c) {
    const Recurrence r = recurrence_of(ctx_of(c), cell);
    for (int64_t d = 0; d < r.dirs; ++d) lower_direction(c, r, d);
  };
  return h;
}

}  // namespace

void register_recurrent_nodes() {
  register_handler(cell_handler("RNN", Cell::Rnn));
  register_handler(cell_handler("GRU", Cell::Gru));
  register_handler(cell_handler("LSTM", Cell::Lstm));
}

}  // namespace kgen::graph
