// Tiled matrix multiply C[M,N] = A[M,K] * B[K,N] (row-major f32). Each
// tile x tile workgroup computes one tile of C; A and B tiles are staged in
// shared memory. Loads outside the matrices store 0 into the tile, so any
// M, N, K work; the final store is guarded.
#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

ir::Kernel matmul_tiled(int tile) {
  const uint32_t T = uint32_t(tile);
  return kernel("matmul_tiled_t" + std::to_string(tile), [&](KernelBuilder& kb) {
    auto A = kb.input("a", f32);
    auto B = kb.input("b", f32);
    auto C = kb.output("c", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(T, T);
    auto As = shared_array(f32, T * T);
    auto Bs = shared_array(f32, T * T);

    auto tx = local_id(0), ty = local_id(1);
    auto row = group_id(1) * T + ty;
    auto col = group_id(0) * T + tx;
    auto slot = ty * T + tx;  // this work-item's element of each tile
    Var acc = var(f32, 0);

    for_range(0, (K + (T - 1)) / T, [&](Value t) {
      auto ka = t * T + tx;  // A column loaded by this work-item
      auto kb_row = t * T + ty;  // B row loaded by this work-item
      if_(row < M && ka < K, [&] { As[slot] = A[row * K + ka]; }).else_([&] { As[slot] = 0; });
      if_(kb_row < K && col < N, [&] { Bs[slot] = B[kb_row * N + col]; }).else_([&] { Bs[slot] = 0; });
      barrier();
      for_range(0u, T, [&](Value k) { acc += As[ty * T + k] * Bs[k * T + tx]; }, 1, /*unroll=*/tile);
      barrier();
    });

    if_(row < M && col < N, [&] { C[row * N + col] = acc; });
  });
}

void register_matmul() {
  for (int tile : {8, 16}) {
    register_kernel({matmul_tiled(tile).name,
                     "C = A*B, f32, M=N=K=n, " + std::to_string(tile) + "x" + std::to_string(tile) +
                         " shared-memory tiles",
                     [tile] { return matmul_tiled(tile); },
                     [tile](int64_t n) {
                       ir::Workload w;
                       uint32_t g = ceil_div(n, tile);
                       w.dims.grid = {g, g, 1};
                       w.dims.workgroup = {uint32_t(tile), uint32_t(tile), 1};
                       size_t nn = size_t(n) * size_t(n);
                       w.buffers = {input_spec(nn), input_spec(nn), output_spec(nn)};
                       uint64_t s = ir::scalar_slot(uint32_t(n));
                       w.scalars = {s, s, s};
                       w.bytes = 3.0 * 4.0 * double(nn);
                       w.flops = 2.0 * double(n) * double(n) * double(n);
                       w.tolerance = 1e-4;  // K-long dot products; targets may contract to fma
                       return w;
                     },
                     512, {1, 7, 16, 33, 100}});
  }
}

}  // namespace kgen::samples
