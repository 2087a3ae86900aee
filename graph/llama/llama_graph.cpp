#include "graph/llama/llama_graph.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "ops/quant/formats.h"

namespace kgen::graph::llama {

namespace {

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

// Appends values and nodes with the few attributes the llama uses.
struct Builder {
  Graph g;
  const Checkpoint& ck;

  int value(const std::string& name, ScalarKind dt, Shape shape) {
    Value v;
    v.name = name;
    v.dtype = dt;
    v.shape = shape;
    for (int64_t d : shape) v.dims.push_back(Dim{d, ""});
    v.shaped = true;
    return g.add_value(std::move(v));
  }
  int constant(const std::string& name, Tensor t) {
    const int v = value(name, t.dtype, t.shape);
    g.values[size_t(v)].constant = std::move(t);
    return v;
  }
  int node(const std::string& op, std::vector<int> inputs, const std::string& out_name,
           std::map<std::string, Attribute> attrs = {}, const std::string& domain = "") {
    Node n;
    n.name = out_name;
    n.op = op;
    n.domain = domain;
    n.opset = domain.empty() ? 23 : 1;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    Value out;
    out.name = out_name;
    const int o = g.add_value(std::move(out));
    n.outputs = {o};
    g.values[size_t(o)].producer = int(g.nodes.size());
    g.nodes.push_back(std::move(n));
    return o;
  }

  // A weight as an f32 constant: [rows, k] for a matrix (GGML ne {k, rows}),
  // [n] for a vector; f32 bytes in place, others converted once.
  int weight(const std::string& name) { return weight(ck.weight(name)); }
  int weight(const WeightRef& w) {
    const std::string& name = w.name;
    Shape shape(w.ne.rbegin(), w.ne.rend());
    if (is_quantized(w.type)) return constant(name, dequantized(w, shape));
    const ScalarKind dt = w.type == GgmlType::F32 ? ScalarKind::F32 : w.type == GgmlType::F16 ? ScalarKind::F16 : ScalarKind::BF16;
    // f16/bf16 weights are widened once here (the graph computes in f32).
    Tensor t = Tensor::wrap(dt, shape, w.data, ck.owner);
    return constant(name, dt == ScalarKind::F32 ? t : t.to_f32());
  }

  // The tensor itself when 64-byte aligned (used in place), else an aligned copy.
  static Tensor aligned(const Tensor& t) {
    if (reinterpret_cast<uintptr_t>(t.data()) % 64 == 0) return t;
    Tensor copy(t.dtype, t.shape);
    std::memcpy(copy.mutable_data(), t.data(), t.bytes());
    return copy;
  }

  static bool is_quantized(GgmlType t) { return t != GgmlType::F32 && t != GgmlType::F16 && t != GgmlType::BF16; }

  static Tensor dequantized(const WeightRef& w, const Shape& shape) {
    Tensor t(ScalarKind::F32, shape);
    const auto f = ops::quant::QFormat(int(w.type));
    ops::quant::dequantize_ref(f, w.data, reinterpret_cast<float*>(t.mutable_data()), w.numel() / ops::quant::info(f).block_elems);
    return t;
  }

  // y = x · Wᵀ: Gemm over an f32 weight, kgen.GgmlLinear over f16/bf16 rows
  // or GGML blocks (padded to whole words), in place when aligned.
  int linear(int x, const std::string& name, const std::string& out) { return linear(x, ck.weight(name), out); }
  int linear(int x, const WeightRef& w, const std::string& out) {
    const std::string& name = w.name;
    if (w.type == GgmlType::F32) return node("Gemm", {x, weight(w)}, out, {{"transB", int_attr(1)}});
    const int64_t wk = w.ne.at(0), wn = w.numel() / wk;
    if (!is_quantized(w.type)) {
      const ScalarKind dt = w.type == GgmlType::F16 ? ScalarKind::F16 : ScalarKind::BF16;
      Tensor t = Tensor::wrap(dt, {wn, wk}, w.data, ck.owner);
      return node("GgmlLinear", {x, constant(name, aligned(t))}, out,
                  {{"format", int_attr(int64_t(w.type))}, {"n", int_attr(wn)}, {"k", int_attr(wk)}}, "kgen");
    }
    const auto f = ops::quant::QFormat(int(w.type));
    const int64_t k = w.ne.at(0), n = w.numel() / k;
    const size_t padded = ops::quant::padded_bytes(f, n, k);
    Tensor bytes = Tensor::wrap(ScalarKind::U8, {int64_t(w.bytes)}, w.data, ck.owner);
    if (padded != w.bytes || reinterpret_cast<uintptr_t>(w.data) % 64) {
      Tensor copy(ScalarKind::U8, {int64_t(padded)});
      std::memcpy(copy.mutable_data(), w.data, w.bytes);
      bytes = copy;
    }
    return node("GgmlLinear", {x, constant(name, bytes)}, out,
                {{"format", int_attr(int64_t(f))}, {"n", int_attr(n)}, {"k", int_attr(k)}}, "kgen");
  }
};

Attribute float_attr(double v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}

// cos and sin of p · rope_scale · base^(-2i/dims) for every position p of
// the cache and pair i (RotaryEmbedding's caches, [capacity, dims/2]).
std::pair<Tensor, Tensor> rope_tables(const LlamaConfig& c, int64_t capacity) {
  const int64_t half = c.rope_dims / 2;
  Tensor cs(ScalarKind::F32, {capacity, half}), sn(ScalarKind::F32, {capacity, half});
  float* pc = reinterpret_cast<float*>(cs.mutable_data());
  float* ps = reinterpret_cast<float*>(sn.mutable_data());
  for (int64_t p = 0; p < capacity; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(double(c.rope_base), -2.0 * double(i) / double(c.rope_dims));
      const double angle = double(p) * double(c.rope_scale) * freq;
      pc[p * half + i] = float(std::cos(angle));
      ps[p * half + i] = float(std::sin(angle));
    }
  return {cs, sn};
}

Tensor shape_tensor(Shape s) { return Tensor::from_ints(ScalarKind::I64, {int64_t(s.size())}, s); }

// Expert e of a stacked expert tensor (ne {k, rows, n_expert}): its matrix in place.
WeightRef expert(const WeightRef& w, int64_t e) {
  if (w.ne.size() != 3 || e >= w.ne[2]) throw std::invalid_argument("weight '" + w.name + "' is not a stack of experts");
  WeightRef r = w;
  r.name = w.name + "." + std::to_string(e);
  r.ne = {w.ne[0], w.ne[1]};
  r.bytes = w.bytes / size_t(w.ne[2]);
  r.data = w.data + size_t(e) * r.bytes;
  return r;
}

// SwiGLU: down(silu(gate·h) * up·h).
int gated_ffn(Builder& b, int h, const WeightRef& gate, const WeightRef& up, const WeightRef& down, const std::string& p) {
  const int g = b.linear(h, gate, p + "gate");
  const int silu = b.node("Mul", {g, b.node("Sigmoid", {g}, p + "gate_sig")}, p + "silu");
  return b.linear(b.node("Mul", {silu, b.linear(h, up, p + "up")}, p + "ffn_act"), down, p + "ffn_out");
}

// Mixtral's routing, computed densely: every expert runs and is weighted by
// its renormalised probability when among the top k, else 0. The k-th
// largest probability is found by k-1 rounds of "mask what is >= the
// current max": no TopK, no data-dependent launches.
int moe_ffn(Builder& b, int h, const LlamaConfig& c, const std::string& p) {
  const Checkpoint& ck = b.ck;
  const int probs = b.node("Softmax", {b.linear(h, p + "ffn_gate_inp.weight", p + "router")}, p + "router_p", {{"axis", int_attr(-1)}});
  const int axes = b.constant(p + "moe.axes", Tensor::from_ints(ScalarKind::I64, {1}, {-1}));
  const int minus1 = b.constant(p + "moe.minus1", Tensor::scalar(ScalarKind::F32, -1.0));
  const int zero = b.constant(p + "moe.zero", Tensor::scalar(ScalarKind::F32, 0.0));
  int kth = b.node("ReduceMax", {probs, axes}, p + "moe.max0", {{"keepdims", int_attr(1)}});
  for (int64_t i = 1; i < c.n_experts_used; ++i) {
    const std::string n = std::to_string(i);
    const int rest = b.node("Where", {b.node("GreaterOrEqual", {probs, kth}, p + "moe.ge" + n), minus1, probs}, p + "moe.rest" + n);
    kth = b.node("ReduceMax", {rest, axes}, p + "moe.max" + n, {{"keepdims", int_attr(1)}});
  }
  const int kept = b.node("Where", {b.node("GreaterOrEqual", {probs, kth}, p + "moe.sel"), probs, zero}, p + "moe.kept");
  const int w = b.node("Div", {kept, b.node("ReduceSum", {kept, axes}, p + "moe.sum", {{"keepdims", int_attr(1)}})}, p + "moe.w");
  const WeightRef &gate = ck.weight(p + "ffn_gate_exps.weight"), &up = ck.weight(p + "ffn_up_exps.weight"),
                  &down = ck.weight(p + "ffn_down_exps.weight");
  int sum = -1;
  for (int64_t e = 0; e < c.n_experts; ++e) {
    const std::string pe = p + "expert" + std::to_string(e) + ".";
    const int idx = b.constant(pe + "index", Tensor::from_ints(ScalarKind::I64, {1}, {e}));
    const int we = b.node("Gather", {w, idx}, pe + "w", {{"axis", int_attr(1)}});
    const int ye = b.node("Mul", {gated_ffn(b, h, expert(gate, e), expert(up, e), expert(down, e), pe), we}, pe + "y");
    sum = sum < 0 ? ye : b.node("Add", {sum, ye}, pe + "sum");
  }
  return sum;
}

}  // namespace

std::string k_cache_name(int64_t layer) { return "blk." + std::to_string(layer) + ".k_cache"; }
std::string v_cache_name(int64_t layer) { return "blk." + std::to_string(layer) + ".v_cache"; }

Graph build_llama_graph(const Checkpoint& ck, int64_t T, int64_t capacity) {
  const LlamaConfig& c = ck.config;
  if (T < 1 || capacity < T) throw std::invalid_argument("llama graph: need 1 <= tokens <= capacity");
  if (c.n_experts > 0 && (c.n_experts_used < 1 || c.n_experts_used > c.n_experts))
    throw std::invalid_argument("llama graph: expert_used_count must be in 1..expert_count");
  if (c.rope_dims != c.head_dim) throw std::invalid_argument("llama graph: partial rotary dimensions are not supported yet");
  Builder b{Graph{}, ck};
  b.g.name = ck.name.empty() ? "llama" : ck.name;
  b.g.opsets = {{"", 23}, {"kgen", 1}};
  const int64_t H = c.n_heads, Hkv = c.n_kv_heads, D = c.head_dim;

  const int tokens = b.value("tokens", ScalarKind::I64, {T});
  const int positions = b.value("positions", ScalarKind::I64, {1, T});
  const int pos = b.value("pos", ScalarKind::I32, {1});
  const int last = b.value("last", ScalarKind::I64, {1});
  b.g.inputs = {tokens, positions, pos, last};

  auto [cos_t, sin_t] = rope_tables(c, capacity);
  const int cos_v = b.constant("rope.cos", cos_t), sin_v = b.constant("rope.sin", sin_t);
  const int q3 = b.constant("shape.q3", shape_tensor({1, T, H * D}));
  const int kv3 = b.constant("shape.kv3", shape_tensor({1, T, Hkv * D}));
  const int rows2 = b.constant("shape.rows", shape_tensor({T, H * D}));
  auto norm = [&](int x, const std::string& w, const std::string& out) {
    return b.node("RMSNormalization", {x, b.weight(w)}, out, {{"epsilon", float_attr(c.rms_eps)}, {"axis", int_attr(-1)}});
  };
  auto linear = [&](int x, const std::string& w, const std::string& out) { return b.linear(x, w, out); };
  auto rope = [&](int x3, int64_t heads, const std::string& out) {
    return b.node("RotaryEmbedding", {x3, cos_v, sin_v, positions}, out, {{"interleaved", int_attr(1)}, {"num_heads", int_attr(heads)}});
  };

  int x = b.node("Gather", {b.weight("token_embd.weight"), tokens}, "embd", {{"axis", int_attr(0)}});
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const int h = norm(x, p + "attn_norm.weight", p + "attn_in");
    const int q = rope(b.node("Reshape", {linear(h, p + "attn_q.weight", p + "q"), q3}, p + "q3"), H, p + "q_rope");
    const int k = rope(b.node("Reshape", {linear(h, p + "attn_k.weight", p + "k"), kv3}, p + "k3"), Hkv, p + "k_rope");
    const int v = linear(h, p + "attn_v.weight", p + "v");
    const int kc = b.value(k_cache_name(l), ScalarKind::F32, {Hkv, capacity, D});
    const int vc = b.value(v_cache_name(l), ScalarKind::F32, {Hkv, capacity, D});
    b.g.values[size_t(kc)].state = b.g.values[size_t(vc)].state = true;
    const int att = b.node("KvAttention", {q, k, v, pos, kc, vc}, p + "attn",
                           {{"num_heads", int_attr(H)}, {"kv_num_heads", int_attr(Hkv)}}, "kgen");
    const int att2 = b.node("Reshape", {att, rows2}, p + "attn2");
    x = b.node("Add", {x, linear(att2, p + "attn_output.weight", p + "attn_out")}, p + "attn_res");
    const int h2 = norm(x, p + "ffn_norm.weight", p + "ffn_in");
    const int ffn = c.n_experts > 0 ? moe_ffn(b, h2, c, p)
                                    : gated_ffn(b, h2, ck.weight(p + "ffn_gate.weight"), ck.weight(p + "ffn_up.weight"),
                                                ck.weight(p + "ffn_down.weight"), p);
    x = b.node("Add", {x, ffn}, p + "ffn_res");
  }
  // Only the row whose next token is wanted goes through the head.
  const int x_last = T == 1 ? x : b.node("Gather", {x, last}, "last_row", {{"axis", int_attr(0)}});
  const int xn = norm(x_last, "output_norm.weight", "out_norm");
  const std::string head = ck.find("output.weight") ? "output.weight" : "token_embd.weight";
  b.g.outputs = {linear(xn, head, "logits")};
  return std::move(b.g);
}

}  // namespace kgen::graph::llama
