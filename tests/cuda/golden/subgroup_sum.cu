// ---- end of prelude ----

// kernel 'subgroup_sum', workgroup size chosen at launch
extern "C" __global__ void kgen_subgroup_sum(f32* b0) {
  f32 v2 = b0[blockIdx.x * blockDim.x + threadIdx.x];
  f32 v3 = kg_sg_fold(v2, kg_fadd());
  b0[blockIdx.x * blockDim.x + threadIdx.x] = v3;
}
