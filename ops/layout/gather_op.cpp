// The "gather" OpDef (ops/layout/data_movement_ops.h).
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>

#include "ops/layout/data_movement_ops.h"

namespace kgen::ops::move_ops {

namespace {

// dims = outer, axis_len, inner, n_indices; i64=0|1 (default 1); oob=1
// mixes in indices outside [-axis_len, axis_len).
Gather gather_of(const Problem& p) {
  if (p.dims.size() != 4) throw std::invalid_argument("dims: outer axis_len inner n_indices");
  Gather g;
  g.elem_bytes = elem_bytes(p);
  g.outer = p.dims[0], g.axis_len = p.dims[1], g.inner = p.dims[2], g.n_indices = p.dims[3];
  g.index_kind = p.attr("i64", 1) ? ir::ScalarKind::I64 : ir::ScalarKind::I32;
  return g;
}

// Index j: uniform in [-L, L); with oob, every fourth one outside, among
// them i64 values whose low word is in range (the high word must count).
int64_t index_value(const Gather& g, bool oob, int64_t j, std::mt19937_64& rng) {
  const int64_t L = g.axis_len;
  const bool i64 = g.index_kind == ir::ScalarKind::I64;
  if ((oob && j % 4 == 3) || L == 0) {
    const std::vector<int64_t> bad32 = {L, -L - 1, L + 7, INT32_MAX, INT32_MIN};
    const std::vector<int64_t> bad64 = {(int64_t(1) << 32) + L / 2, -(int64_t(1) << 32) + L / 2, INT64_MIN, INT64_MAX, L, -L - 1};
    const auto& bad = i64 ? bad64 : bad32;
    return bad[rng() % bad.size()];
  }
  return int64_t(rng() % uint64_t(2 * L)) - L;
}

void make_input(const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Gather g = gather_of(p);
  if (input == 0) {
    // Random bits; floats with the exponent's top bit clear (no NaN or inf,
    // so a comparison by value sees every bit that moved).
    const ir::Type t(p.dtype);
    const size_t eb = size_t(g.elem_bytes);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(rng());
    if (t.is_float())
      for (size_t i = eb - 1; i < bytes.size(); i += eb) bytes[i] &= 0xbf;
    return;
  }
  const bool oob = p.attr("oob", 0) != 0;
  for (int64_t j = 0; j < g.n_indices; ++j) {
    const int64_t v = index_value(g, oob, j, rng);
    if (g.index_kind == ir::ScalarKind::I64) std::memcpy(bytes.data() + j * 8, &v, 8);
    else {
      const int32_t w = int32_t(v);
      std::memcpy(bytes.data() + j * 4, &w, 4);
    }
  }
}

Problem gather_prob(std::vector<int64_t> dims, ir::ScalarKind dt, int64_t i64, int64_t oob = 0) {
  Problem p;
  p.op = "gather";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = {{"i64", i64}};
  if (oob) p.attrs["oob"] = 1;
  return p;
}

}  // namespace

void register_gather_op() {
  using K = ir::ScalarKind;
  OpDef d;
  d.name = "gather";
  d.description = "y[o, j, r] = data[o, idx[j], r] (negative idx from the end; out of range: a row of zeros)";
  d.dims_help = "outer axis_len inner n_indices";
  d.attrs_help = "i64=0|1 (index type i32 or i64, default 1) oob=0|1 (mix in out-of-range indices)";
  d.validate = [](const Problem& p) {
    Plan probe;
    plan_gather(probe, gather_of(p), 0, 1, 2, MoveVariant{});
  };
  d.inputs = [](const Problem& p) {
    const Gather g = gather_of(p);
    const ir::ScalarKind ik = g.index_kind;
    return std::vector<TensorSpec>{any_tensor("data", p.dtype, {g.outer, g.axis_len, g.inner}), any_tensor("indices", ik, {g.n_indices})};
  };
  d.outputs = [](const Problem& p) {
    const Gather g = gather_of(p);
    return std::vector<TensorSpec>{any_tensor("y", p.dtype, {g.outer, g.n_indices, g.inner})};
  };
  d.make_input = make_input;
  set_move_variants(d);
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    Plan pl;
    plan_gather(pl, gather_of(p), 0, 1, 2, move_variant(v));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_gather(gather_of(p), in[0], in[1], out[0]);
  };
  d.tolerance = [](const Problem&) { return 0.0; };
  d.bytes = [](const Problem& p) {
    const Gather g = gather_of(p);
    return 2.0 * double(g.outer * g.n_indices * g.inner) * g.elem_bytes;
  };
  d.test_problems = {gather_prob({2, 10, 37, 5}, K::F32, 1, 1),  // lines and a tail, out-of-range rows
                     gather_prob({1, 7, 1, 13}, K::F32, 0),      // scalars
                     gather_prob({3, 5, 6, 4}, K::U8, 1),        // 6-byte rows: u16 words
                     gather_prob({2, 9, 3, 7}, K::U8, 0, 1),     // 3-byte rows: bytes
                     gather_prob({1, 300, 64, 20}, K::F16, 1),   // an embedding lookup
                     gather_prob({4, 6, 5, 3}, K::F64, 0, 1),
                     gather_prob({2, 0, 3, 4}, K::F32, 1),       // an empty axis: every index out of range
                     gather_prob({1, 5, 20000, 3}, K::F32, 0),   // rows split into chunks
                     gather_prob({50, 4, 2, 30}, K::I32, 1, 1)}; // short rows, many per group
  d.bench_problems = {gather_prob({1, 8192, 2048, 512}, K::F16, 1), gather_prob({64, 1000, 1, 4096}, K::F32, 1)};
  register_op(std::move(d));
}

}  // namespace kgen::ops::move_ops
