// Nodes of kgen's own domain for decoding with a KV cache (the llama runner
// builds them; no ONNX model carries them):
//
//   kgen.KvAttention(q, k, v, pos, k_cache, v_cache) -> o
//     q [..., T, H·D], k and v [..., T, Hkv·D] for T new tokens at positions
//     pos..pos+T-1 (pos: i32 [1], read by the kernels at run time); the caches
//     are state values [Hkv, C, D] updated in place with the new rows, then
//     each query attends causally over rows 0..its position. attrs num_heads,
//     kv_num_heads, scale (default 1/sqrt(D)). o has q's shape.
//
// One prepared step serves every position: nothing in its launches depends
// on pos but the pos buffer.
#include <cmath>

#include "graph/handler.h"
#include "graph/lower.h"
#include "graph/nodes/nodes.h"

namespace kgen::graph {

namespace {

struct KvShape {
  int64_t t, h, hkv, d, capacity;
};

KvShape kv_shape(const Graph& g, const Node& n, const Shape& q, const Shape& cache) {
  KvShape s;
  s.h = n.attr_int("num_heads", 0);
  s.hkv = n.attr_int("kv_num_heads", s.h);
  if (s.h < 1 || s.hkv < 1 || s.h % s.hkv) throw UnsupportedError(n.where() + ": num_heads must be a positive multiple of kv_num_heads");
  if (q.empty() || q.back() % s.h) throw UnsupportedError(n.where() + ": q's last dimension is not num_heads·D");
  s.d = q.back() / s.h;
  s.t = numel(q) / q.back();
  if (cache.size() != 3 || cache[0] != s.hkv || cache[2] != s.d)
    throw UnsupportedError(n.where() + ": the caches must be [kv_num_heads, capacity, D], got " + shape_str(cache));
  s.capacity = cache[1];
  return s;
}

void infer_kv_attention(InferCtx& c) {
  c.require_inputs(6, 6);
  for (int i : {4, 5})
    if (!c.in(i).state) c.unsupported("input " + std::to_string(i) + " (a cache) must be a state value");
  if (c.dtype(3) != ScalarKind::I32 || numel(c.shape(3)) != 1) c.unsupported("pos must be i32 [1]");
  for (int i : {0, 1, 2, 4, 5})
    if (c.dtype(i) != ScalarKind::F32) c.unsupported("q, k, v and the caches must be f32");
  const KvShape s = kv_shape(c.g, c.node, c.shape(0), c.shape(4));
  if (numel(c.shape(1)) != s.t * s.hkv * s.d || numel(c.shape(2)) != s.t * s.hkv * s.d)
    c.invalid("k and v must hold T·kv_num_heads·D values");
  if (c.shape(5) != c.shape(4)) c.invalid("the k and v caches differ in shape");
  c.set_out(0, ScalarKind::F32, c.shape(0));
}

void lower_kv_attention(LowerCtx& c) {
  const KvShape s = kv_shape(c.g, c.node, c.in(0).shape, c.in(4).shape);
  ops::Problem p;
  p.op = "kv_attention";
  p.dims = {s.t, s.h, s.d, s.hkv, s.capacity};
  if (c.node.has("scale")) p.attrs["scale_milli"] = int64_t(std::lround(c.node.attr_float("scale", 0) * 1000));
  c.op(p, {c.in_slot(0), c.in_slot(1), c.in_slot(2), c.in_slot(3), c.in_slot(4), c.in_slot(5), c.out_slot(0)});
}

}  // namespace

void register_kv_cache_nodes() {
  OpHandler h;
  h.op = "KvAttention";
  h.domain = "kgen";
  h.infer = infer_kv_attention;
  h.lower = lower_kv_attention;
  register_handler(std::move(h));
}

}  // namespace kgen::graph
