// ---- end of prelude ----

// kernel 'reduce_sum', workgroup 64x1x1
extern "C" __global__ void __launch_bounds__(64) kgen_reduce_sum(const f32* b0, f32* b1, const u32 p0) {
  __shared__ f32 v0[64];
  bool v4 = (blockIdx.x * 64u + threadIdx.x) < p0;
  f32 v6 = 0.0f;
  if (v4) {
    f32 v8 = b0[blockIdx.x * 64u + threadIdx.x];
    v6 = v8;
  }
  f32 v9 = v6;
  v0[threadIdx.x] = v9;
  __syncthreads();
  for (u32 v13 = 0u; v13 < 6u; v13 += 1u) {
    u32 v15 = 32u >> (v13 & 31);
    bool v16 = threadIdx.x < v15;
    if (v16) {
      f32 v17 = v0[threadIdx.x];
      u32 v18 = kg_add(threadIdx.x, v15);
      f32 v19 = v0[v18];
      f32 v20 = v17 + v19;
      v0[threadIdx.x] = v20;
    }
    __syncthreads();
  }
  bool v22 = threadIdx.x == 0u;
  if (v22) {
    f32 v24 = v0[0u];
    b1[blockIdx.x] = v24;
  }
}
