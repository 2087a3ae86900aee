// The "rope" op: rotary position embedding of x (T x H x D, f32): position
// t = pos + t_index rotates each pair of features (a, b) of every head by the
// angle t * base^(-2i/D):
//   mode 0 (interleaved: GPT-J, llama.cpp NORM): pairs (2i, 2i+1)
//   mode 1 (neox halves): pairs (i, i + D/2)
// attrs base (theta, default 10000), mode, pos (position offset, default 0).
//
// The frequency is exp2(i * c) with c = -2 log2(base) / D computed on the
// host in f32, the angle float(t) * freq: the reference does the same f32
// steps, so only exp2/sin/cos rounding (1 ulp) separates kernel and reference.
// Kernels: impl 2 (CPU, D a multiple of 16/32, at most 2048): lines, below;
// impl 0 (CPU, any D): one work-item per position, scalar; impl 1 (GPU): one
// work-item per (position, pair). Each computes a pair's cos/sin once and
// applies it to every head.
#include <array>
#include <cmath>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ops/attention/rope.h"
#include "ops/attention/strategy.h"
#include "ops/elementwise/broadcast.h"

namespace kgen::ops {

namespace rope_detail {

Shape shape_of(const Problem& p) {
  if (p.dims.size() != 3) throw std::invalid_argument("dims: T H D");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("only f32 for now");
  Shape s{p.dim(0), p.dim(1), p.dim(2), int(p.attr("mode")), p.attr("pos"), 0};
  if (s.T < 1 || s.H < 1 || s.D < 2 || s.D % 2) throw std::invalid_argument("T, H >= 1 and D even >= 2");
  if (s.mode != 0 && s.mode != 1) throw std::invalid_argument("mode 0 (interleaved) or 1 (neox)");
  if (s.pos < 0 || s.pos + s.T > (int64_t(1) << 24)) throw std::invalid_argument("positions must be in [0, 2^24)");
  int64_t base = p.attr("base", 10000);
  if (base < 2) throw std::invalid_argument("base must be >= 2");
  s.c = -2.0f * float(std::log2(double(base))) / float(s.D);
  if (double(s.T * s.H * s.D) >= 2e9) throw std::invalid_argument("too large: 32-bit indices");
  return s;
}

bool lines_fit(int mode, int64_t D) { return D <= kLinesMaxD && (mode == 0 ? D % 16 == 0 : D % 2 == 0 && D >= 32); }
bool neox_tail(int mode, int64_t D) { return mode == 1 && D % 32 != 0; }

}  // namespace rope_detail

using namespace kgen::dsl;
using namespace rope_detail;

namespace {

// Element offsets of pair i's two features within a head.
std::pair<Value, Value> pair_at(int mode, const Value& i, const Value& half) {
  if (mode == 0) return {i * 2u, i * 2u + 1u};
  return {i, i + half};
}

ir::Kernel rope_kernel(int mode, bool gpu, int wg) {
  std::string name = std::string("rope_") + (mode == 0 ? "norm" : "neox") + (gpu ? "_gpu" + std::to_string(wg) : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto y = kb.output("y", f32);
    auto T = kb.scalar("T", u32);
    auto H = kb.scalar("H", u32);
    auto D = kb.scalar("D", u32);
    auto pos = kb.scalar("pos", u32);
    auto c = kb.scalar("c", f32);
    Value half = D / 2u;
    auto rotate = [&](const Value& t, const Value& i) {
      Value freq = exp2(cast(f32, i) * c);
      Value ang = cast(f32, pos + t) * freq;
      Value cs = cos(ang), sn = sin(ang);
      auto [ia, ib] = pair_at(mode, i, half);
      for_range(0u, H, [&](Value h) {
        Value base = (t * H + h) * D;
        Value a = x[base + ia], b = x[base + ib];
        y[base + ia] = a * cs - b * sn;
        y[base + ib] = a * sn + b * cs;
      });
    };
    if (!gpu) {
      kb.workgroup(1);
      Value t = group_id(0);
      for_range(0u, half, [&](Value i) { rotate(t, i); });
    } else {
      kb.workgroup(uint32_t(wg));
      Value e = group_id(0) * uint32_t(wg) + local_id(0);  // pair index within position group_id(1)
      if_(e < half, [&] { rotate(group_id(1), e); });
    }
    (void)T;
  });
}

// CPU lines (impl 2): one work-item per position, D a compile-time constant.
// First the position's cos/sin lines into a small shared table (trig of 16
// distinct pairs per line: the table is D/2 cos and D/2 sin values, in L1),
// then every head streams through in memory order, one line per 16
// features, so the hardware prefetcher sees one forward stream per position.
//   neox: lines j and j + D/32 of a head hold pairs (i, i + D/2); D % 32 == 0.
//   Other even D >= 32 (Phi-2's 80, 48): x and y are scalar buffers, pairs
//   i0..i0+15 are the lines at element offsets i0 and D/2 + i0 of the head
//   (unaligned), and the last 16 pairs one more line pair (its own table row),
//   which rewrites the pairs it shares with the last whole line unchanged.
//   interleaved: a line holds 8 pairs (x0 x1 x2 x3 ...), rotated as
//   x * cos + swap(x) * (-sin, sin, ...), swap exchanging each pair's lanes
//   (one in-lane shuffle); the table stores cos and signed sin with each
//   pair's value in both of its lanes. D % 16 == 0.
// `stream` writes y with non-temporal stores (outputs larger than the cache).
// D is a kernel constant and sizes the cos/sin table (kLinesMaxD, rope.h).

// The line whose lane l is v's lane src[l] (one shuffle: the C++ emitter
// writes a line of another line's lanes as a shufflevector).
Value permute_lanes(const Value& v, const std::array<int, 16>& src) {
  std::vector<Value> lanes;
  for (int l : src) lanes.push_back(extract(v, l));
  return make_line(lanes);
}

ir::Kernel rope_lines_kernel(int mode, int64_t D, bool stream) {
  std::string name = std::string("rope_lines_") + (mode == 0 ? "norm" : "neox") + "_d" + std::to_string(D) +
                     (stream ? "_st" : "");
  const bool tail = neox_tail(mode, D);
  if (tail && stream) throw std::invalid_argument("rope_lines_kernel: streaming stores need whole lines (neox: D % 32 == 0)");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", tail ? f32 : line(f32, 16));
    auto y = kb.output("y", tail ? f32 : line(f32, 16));
    auto H = kb.scalar("H", u32);
    auto pos = kb.scalar("pos", u32);
    auto c = kb.scalar("c", f32);
    kb.workgroup(1);
    const uint32_t L = uint32_t(D / 16);                  // lines per head
    const uint32_t P = uint32_t(D / 2), whole = P / 16;  // pairs, whole lines of them
    // Trig lines of 16 pairs (tail: the whole lines, then the last 16 pairs).
    const uint32_t blocks = tail ? whole + 1 : (P + 15) / 16;
    const int64_t rows = mode == 0 ? 2 * int64_t(blocks) : int64_t(blocks);
    auto cs = shared_array(line(f32, 16), rows), sn = shared_array(line(f32, 16), rows);
    Value t = group_id(0);
    Value tpos = splat(cast(f32, pos + t), 16);
    Value rel = make_line(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u);
    for_range(0u, blocks, [&](Value b) {
      // Pairs past D/2 (interleaved, D % 32 == 16) fill a table row no line reads.
      Value first = tail ? select(b < whole, b * 16u, constant(u32, P - 16)) : b * 16u;  // the row's first pair
      Value fi = cast(line(f32, 16), splat(first, 16) + rel);
      Value ang = tpos * exp2(fi * splat(c, 16));
      Value cv = cos(ang), sv = sin(ang);
      if (mode == 1) {
        cs[b] = cv;
        sn[b] = sv;
        return;
      }
      std::array<int, 16> lo{}, hi{};
      for (int l = 0; l < 16; ++l) lo[size_t(l)] = l / 2, hi[size_t(l)] = 8 + l / 2;
      Value sgn = make_line(-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f,
                            -1.0f, 1.0f);
      cs[b * 2u] = permute_lanes(cv, lo);
      cs[b * 2u + 1u] = permute_lanes(cv, hi);
      sn[b * 2u] = permute_lanes(sv, lo) * sgn;
      sn[b * 2u + 1u] = permute_lanes(sv, hi) * sgn;
    });
    auto put = [&](const Value& at, const Value& v) {
      if (stream) y[at].stream(v);
      else y[at] = v;
    };
    std::array<int, 16> swap{};
    for (int l = 0; l < 16; ++l) swap[size_t(l)] = l ^ 1;
    for_range(0u, H, [&](Value h) {
      if (tail) {
        const Value hb = cast(u64, (t * H + h) * uint32_t(D));
        // Pairs i0..i0+15 with table row r.
        auto pairs = [&](const Value& i0, const Value& r) {
          Value a = load_line(x, hb + i0), b = load_line(x, hb + i0 + uint64_t(P));
          Value cv = cs[r], sv = sn[r];
          store_line(y, hb + i0, a * cv - b * sv);
          store_line(y, hb + i0 + uint64_t(P), a * sv + b * cv);
        };
        for_range(0u, whole, [&](Value j) { pairs(cast(u64, j) * 16u, j); });
        pairs(constant(u64, uint64_t(P - 16)), constant(u32, whole));
        return;
      }
      Value base = (t * H + h) * L;
      if (mode == 0) {
        for_range(0u, L, [&](Value j) {
          Value v = x[base + j];
          put(base + j, v * Value(cs[j]) + permute_lanes(v, swap) * Value(sn[j]));
        });
      } else {
        for_range(0u, L / 2, [&](Value j) {
          Value a = x[base + j], b = x[base + j + L / 2];
          Value cv = cs[j], sv = sn[j];
          put(base + j, a * cv - b * sv);
          put(base + j + L / 2, a * sv + b * cv);
        });
      }
    });
  });
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  Shape s = shape_of(p);
  const bool gpu = v.get("impl") == 1, lines = v.get("impl") == 2;
  const int wg = int(v.get("wg", 64));
  if (lines && !lines_fit(s.mode, s.D))
    throw std::invalid_argument("rope lines: D <= 2048, and D % 16 == 0 (interleaved) or even D >= 32 (neox)");
  const bool stream = v.get("st") == 1;
  if (stream && !lines) throw std::invalid_argument("rope: st=1 needs the lines kernel (impl=2)");
  // Off whole lines, nontemporal stores of the aligned lines would share
  // cache lines with plain stores of the unaligned ones.
  // 4096×32×80: 6.6 GB/s streamed against 44 plain.
  if (stream && neox_tail(s.mode, s.D)) throw std::invalid_argument("rope: st=1 needs whole lines (neox: D % 32 == 0)");
  Step st;
  st.kernel = lines ? rope_lines_kernel(s.mode, s.D, stream) : rope_kernel(s.mode, gpu, wg);
  st.buffers = {0, 1};
  if (lines)
    st.scalars = {ir::scalar_slot(uint32_t(s.H)), ir::scalar_slot(uint32_t(s.pos)), ir::scalar_slot(s.c)};
  else
    st.scalars = {ir::scalar_slot(uint32_t(s.T)), ir::scalar_slot(uint32_t(s.H)), ir::scalar_slot(uint32_t(s.D)),
                  ir::scalar_slot(uint32_t(s.pos)), ir::scalar_slot(s.c)};
  if (!gpu) st.dims.grid = {uint32_t(s.T), 1, 1};
  else {
    st.dims.grid = {groups_for(s.D / 2, wg), uint32_t(s.T), 1};
    st.dims.workgroup = {uint32_t(wg), 1, 1};
  }
  (void)caps;
  Plan pl;
  pl.steps.push_back(std::move(st));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Shape s = shape_of(p);
  const float* x = static_cast<const float*>(in[0]);
  float* y = static_cast<float*>(out[0]);
  const int64_t half = s.D / 2;
  for (int64_t t = 0; t < s.T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      float freq = std::exp2(float(i) * s.c);
      float ang = float(uint32_t(s.pos + t)) * freq;
      double cs = std::cos(double(ang)), sn = std::sin(double(ang));
      int64_t ia = s.mode == 0 ? 2 * i : i, ib = s.mode == 0 ? 2 * i + 1 : i + half;
      for (int64_t h = 0; h < s.H; ++h) {
        int64_t b = (t * s.H + h) * s.D;
        double a = x[b + ia], bb = x[b + ib];
        y[b + ia] = float(a * cs - bb * sn);
        y[b + ib] = float(a * sn + bb * cs);
      }
    }
}

Problem prob(int64_t T, int64_t H, int64_t D, int mode, int64_t pos = 0, int64_t base = 10000) {
  Problem p;
  p.op = "rope";
  p.dims = {T, H, D};
  p.attrs = {{"mode", mode}, {"pos", pos}, {"base", base}};
  return p;
}

}  // namespace

void register_rope_op() {
  OpDef d;
  d.name = "rope";
  d.attr_defaults = {{"mode", 0}, {"base", 10000}, {"pos", 0}};
  d.description = "rotary position embedding of T x H x D (interleaved/NORM or neox halves)";
  d.dims_help = "T H D";
  d.attrs_help = "mode=0 interleaved (GPT-J, llama.cpp NORM)|1 neox halves base=<theta, 10000> pos=<offset>";
  d.validate = [](const Problem& p) { shape_of(p); };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("x", ir::Type(f32), p.dims)}; };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("y", ir::Type(f32), p.dims)}; };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    std::vector<Variant> v;
    Shape s = shape_of(p);
    if (is_cpu(caps)) v.push_back(Variant{}.set("impl", 0));
    if (is_cpu(caps) && lines_fit(s.mode, s.D))
      for (int stream : {0, 1})
        if (!stream || !neox_tail(s.mode, s.D)) v.push_back(Variant{}.set("impl", 2).set("st", stream));
    v.push_back(Variant{}.set("impl", 1).set("wg", 64));
    return v;
  };
  d.heuristic = rope_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {0, 1, 2}, "0 CPU scalar per position, 1 GPU work-item per pair, 2 CPU lines"),
      key_range("wg", "workgroup", 1, 1024, "GPU: work-items per workgroup"),
      key_set("st", "streaming_stores", {0, 1}, "CPU lines: write y with non-temporal stores"),
  };
  d.plan = plan;
  d.reference = reference;
  // exp2, sin and cos within ~1 ulp: the angle t * freq may differ by an ulp
  // of itself (up to (pos + T) * 6e-8 rad), the products by a few ulp.
  d.tolerance = [](const Problem& p) {
    Shape s = shape_of(p);
    return 4e-6 + 2.4e-7 * double(s.pos + s.T);
  };
  d.flops = [](const Problem& p) { return 3.0 * double(fusion::numel(p.dims)); };
  d.bytes = [](const Problem& p) { return 8.0 * double(fusion::numel(p.dims)); };
  d.memory_bound = true;
  for (int mode : {0, 1}) {
    d.test_problems.push_back(prob(7, 3, 64, mode));
    d.test_problems.push_back(prob(5, 2, 6, mode, 100));
    d.test_problems.push_back(prob(1, 1, 2, mode, 0, 500000));
    d.test_problems.push_back(prob(33, 4, 128, mode, 7));
    d.test_problems.push_back(prob(9, 5, 80, mode, 3));  // interleaved lines with a half-used trig row
    d.test_problems.push_back(prob(3, 2, 96, mode, 4000));
    d.test_problems.push_back(prob(4, 3, 34, mode, 5));  // neox off whole lines: 17 pairs (a 15-pair overlap)
    d.test_problems.push_back(prob(6, 2, 48, mode, 9));
    d.bench_problems.push_back(prob(2048, 32, 128, mode));
  }
  register_op(std::move(d));
}

}  // namespace kgen::ops
