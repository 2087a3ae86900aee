// ---- end of prelude ----

// kernel 'saxpy', workgroup size chosen at launch
extern "C" __global__ void kgen_saxpy(const f32* b0, f32* b1, const f32 p0, const u32 p1) {
  bool v2 = (blockIdx.x * blockDim.x + threadIdx.x) < p1;
  if (v2) {
    f32 v4 = b0[blockIdx.x * blockDim.x + threadIdx.x];
    f32 v6 = b1[blockIdx.x * blockDim.x + threadIdx.x];
    f32 v8 = p0 * v4;
    f32 v9 = v8 + v6;
    b1[blockIdx.x * blockDim.x + threadIdx.x] = v9;
  }
}
