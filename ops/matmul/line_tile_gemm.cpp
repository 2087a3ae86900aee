// The f32x4-line GPU GEMM tile loop (ops/matmul/line_tile_gemm.h). 256 work-items,
// a 128 × BN tile of C (BN = 16·tn), A staged as lines of 4 rows at one k and
// B as lines of 4 columns at one k, so the inner loop reads its operands 16
// bytes at a time: per k, 2 lines of A and tn/4 of B for 8·tn FMAs, where the
// scalar tiles read 8 + tn single words. Work-item (tx, ty) owns rows {4·ty,
// 64 + 4·ty} + 0..3 and columns {4·tx, 64 + 4·tx} + 0..3 (tn 8) or 4·tx +
// 0..3 (tn 4): a quarter-warp's 16-byte reads are 128 contiguous bytes (no
// bank conflicts; the A reads of a warp are two broadcasts).
#include "ops/matmul/line_tile_gemm.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace kgen::ops {

using namespace kgen::dsl;

void line_tile_gemm(const LineTileOperands& io, const Value& M, const Value& N, const Value& K, uint32_t TK, uint32_t TN,
                    bool prefetch, bool double_buffer) {
  if (double_buffer && !prefetch) throw std::invalid_argument("line_tile_gemm: double buffering needs the prefetch");
  if (!(TN == 8 && (TK == 8 || TK == 16)) && !(TN == 4 && TK == 16))
    throw std::invalid_argument("line_tile_gemm: tn 8 with tk 8 or 16, or tn 4 with tk 16");
  constexpr uint32_t NT = 256, BM = 128, LA = 32;  // LA: lines per k row of the A tile
  const uint32_t BN = 16 * TN, LB = BN / 4;        // LB: lines per k row of the B tile
  const uint32_t EA = TK * LA / NT, EB = TK * LB / NT;  // staged lines per work-item
  const uint32_t NB = TN / 4;                           // B lines per work-item and k
  const uint32_t NBUF = double_buffer ? 2 : 1;
  auto As = shared_array(line(f32, 4), int64_t(NBUF * TK * LA));  // [buffer][k][4-row line]
  auto Bs = shared_array(line(f32, 4), int64_t(NBUF * TK * LB));  // [buffer][k][4-column line]
  Value tx = local_id(0), ty = local_id(1), tid = ty * 16u + tx;
  Value row0 = group_id(1) * BM, col0 = group_id(0) * BN;
  std::vector<Var> acc;
  for (uint32_t i = 0; i < 8 * TN; ++i) acc.push_back(var(f32, 0.0f));
  // Staged line e of a work-item, as (k in the tile, line): A's k runs
  // fastest across work-items (each row's run of k is one 32-byte sector),
  // B's too when its neighbours in memory differ in k, else its columns.
  auto a_pos = [&](uint32_t e) {
    Value idx = tid + e * NT;
    return std::pair{idx % TK, idx / TK};
  };
  auto b_pos = [&](uint32_t e) {
    Value idx = tid + e * NT;
    return io.b_k_fastest ? std::pair{idx % TK, idx / TK} : std::pair{idx / LB, idx % LB};
  };
  std::vector<Var> ra, rb;
  for (uint32_t e = 0; e < EA; ++e) ra.push_back(var(line(f32, 4), splat(0.0f, 4)));
  for (uint32_t e = 0; e < EB; ++e) rb.push_back(var(line(f32, 4), splat(0.0f, 4)));
  // The tile at k0 into registers.
  auto load = [&](const Value& k0, bool guarded) {
    for (uint32_t e = 0; e < EA; ++e) {
      auto [kk, li] = a_pos(e);
      std::vector<Value> v;
      for (uint32_t q = 0; q < 4; ++q) v.push_back(io.a(row0 + li * 4u + q, k0 + kk, guarded));
      ra[e] = make_line(v);
    }
    for (uint32_t e = 0; e < EB; ++e) {
      auto [kk, li] = b_pos(e);
      std::vector<Value> v;
      for (uint32_t q = 0; q < 4; ++q) v.push_back(io.b(col0 + li * 4u + q, k0 + kk, guarded));
      rb[e] = make_line(v);
    }
  };
  auto load_tile = [&](const Value& k0) {
    if (io.always_guarded) return load(k0, true);
    if_(row0 + BM <= M && col0 + BN <= N && k0 + TK <= K, [&] { load(k0, false); }).else_([&] { load(k0, true); });
  };
  // buf: the shared buffer (0 or 1) as a u32 value, double buffering only.
  auto store_tile = [&](const Value& buf) {
    Value ab = buf * (TK * LA), bb = buf * (TK * LB);
    for (uint32_t e = 0; e < EA; ++e) {
      auto [kk, li] = a_pos(e);
      As[ab + kk * LA + li] = ra[e].get();
    }
    for (uint32_t e = 0; e < EB; ++e) {
      auto [kk, li] = b_pos(e);
      Bs[bb + kk * LB + li] = rb[e].get();
    }
  };
  auto compute = [&](const Value& buf) {
    Value ab = buf * (TK * LA), bb = buf * (TK * LB);
    for (uint32_t kk = 0; kk < TK; ++kk) {
      Value a[2] = {As[ab + kk * LA + ty], As[ab + kk * LA + 16u + ty]};
      std::vector<Value> b;
      for (uint32_t j = 0; j < NB; ++j) b.push_back(Bs[bb + kk * LB + 16u * j + tx]);
      for (uint32_t i = 0; i < 8; ++i)
        for (uint32_t j = 0; j < TN; ++j)
          acc[i * TN + j] = fma(a[i / 4].lane(int(i % 4)), b[j / 4].lane(int(j % 4)), acc[i * TN + j].get());
    }
  };
  const Value zero = constant(u32, 0);
  if (double_buffer) {
    // Two shared buffers: the next tile goes to the other one right after
    // this tile's FMAs, so one barrier per K step suffices (every work-item
    // finished reading that buffer before the previous step's barrier).
    load_tile(zero);
    store_tile(zero);
    barrier();
    for_range(0u, K, [&](Value k0) {
      Value cur = k0 / TK % 2u;
      Value more = k0 + TK < K;
      if_(more, [&] { load_tile(k0 + TK); });
      compute(cur);
      if_(more, [&] { store_tile(1u - cur); });
      barrier();
    }, TK);
  } else if (prefetch) {
    // The next tile's global loads are issued before this tile's FMAs and
    // land in registers, so their latency hides behind the arithmetic; they
    // go to shared memory after the closing barrier.
    load_tile(zero);
    for_range(0u, K, [&](Value k0) {
      store_tile(zero);
      barrier();
      if_(k0 + TK < K, [&] { load_tile(k0 + TK); });
      compute(zero);
      barrier();
    }, TK);
  } else {
    for_range(0u, K, [&](Value k0) {
      load_tile(k0);
      store_tile(zero);
      barrier();
      compute(zero);
      barrier();
    }, TK);
  }
  for (uint32_t i = 0; i < 8; ++i) {
    Value row = row0 + (i / 4) * 64u + ty * 4u + (i % 4);
    for (uint32_t j = 0; j < TN; ++j) {
      Value col = col0 + (j / 4) * 64u + tx * 4u + (j % 4);
      if_(row < M && col < N, [&] { io.store(row, col, acc[i * TN + j].get()); });
    }
  }
}

}  // namespace kgen::ops
