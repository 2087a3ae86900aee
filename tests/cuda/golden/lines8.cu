// ---- end of prelude ----

// kernel 'lines8', workgroup size chosen at launch
extern "C" __global__ void kgen_lines8(const f32x8* b0, f32x8* b1, f32* b2, const f32 p0, const u32 p1) {
  bool v2 = (blockIdx.x * blockDim.x + threadIdx.x) < p1;
  if (v2) {
    f32x8 v4 = b0[blockIdx.x * blockDim.x + threadIdx.x];
    f32x8 v6 = kg_splat<f32x8>(1.0f);
    f32x8 v7 = kg_make<f32x8>(v4[0] * v4[0], v4[1] * v4[1], v4[2] * v4[2], v4[3] * v4[3], v4[4] * v4[4], v4[5] * v4[5], v4[6] * v4[6], v4[7] * v4[7]);
    f32x8 v8 = kg_make<f32x8>(v7[0] + v6[0], v7[1] + v6[1], v7[2] + v6[2], v7[3] + v6[3], v7[4] + v6[4], v7[5] + v6[5], v7[6] + v6[6], v7[7] + v6[7]);
    f32x8 v9 = kg_make<f32x8>(sqrtf(v8[0]), sqrtf(v8[1]), sqrtf(v8[2]), sqrtf(v8[3]), sqrtf(v8[4]), sqrtf(v8[5]), sqrtf(v8[6]), sqrtf(v8[7]));
    f32x8 v11 = kg_splat<f32x8>(p0);
    f32x8 v12 = kg_make<f32x8>(v9[0] * v11[0], v9[1] * v11[1], v9[2] * v11[2], v9[3] * v11[3], v9[4] * v11[4], v9[5] * v11[5], v9[6] * v11[6], v9[7] * v11[7]);
    f32x8 v13 = kg_make<f32x8>(tanhf(v4[0]), tanhf(v4[1]), tanhf(v4[2]), tanhf(v4[3]), tanhf(v4[4]), tanhf(v4[5]), tanhf(v4[6]), tanhf(v4[7]));
    f32x8 v14 = kg_make<f32x8>(v12[0] + v13[0], v12[1] + v13[1], v12[2] + v13[2], v12[3] + v13[3], v12[4] + v13[4], v12[5] + v13[5], v12[6] + v13[6], v12[7] + v13[7]);
    b1[blockIdx.x * blockDim.x + threadIdx.x] = v14;
    f32 v16 = kg_reduce(v14, kg_fadd());
    b2[blockIdx.x * blockDim.x + threadIdx.x] = v16;
  }
}
