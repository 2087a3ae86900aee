// ---- end of prelude ----

// kernel 'matmul_tiled', workgroup 8x8x1
extern "C" void kgen_matmul_tiled(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end) {
  const f32* b0 = (const f32*)a->buffers[0];  // A (read)
  const f32* b1 = (const f32*)a->buffers[1];  // B (read)
  f32* b2 = (f32*)a->buffers[2];  // C (write)
  const u32 p0 = kg_slot<u32>(a->scalars, 0);  // n
  const u32 ngx = a->grid[0], ngy = a->grid[1], ngz = a->grid[2];
  alignas(64) f32 v0[64];  // shared
  alignas(64) f32 v1[64];  // shared
  u32 gx = (u32)(group_begin % ngx), gy = (u32)(group_begin / ngx % ngy), gz = (u32)(group_begin / ((u64)ngx * ngy));
  for (u64 g = group_begin; g < group_end; ++g) {
    alignas(64) f32 v8[64];
    const u32 kg_x0_0 = gx * 8u;
    u32 kg_xe_0 = kg_x0_0 + 8u;
    for (u32 ly = 0; ly < 8u; ++ly) {
      for (u32 kg_ix = kg_x0_0; kg_ix < kg_xe_0; ++kg_ix) {
        const u32 lx = kg_ix - kg_x0_0;
        const u32 lid = (0u * 8u + ly) * 8u + lx;
        v8[lid] = 0.0f;
      }
    }
    for (u32 v11 = 0u; v11 < p0; v11 += 8u) {
      const u32 kg_x0_1 = gx * 8u;
      u32 kg_xe_1 = kg_x0_1 + 8u;
      for (u32 ly = 0; ly < 8u; ++ly) {
        for (u32 kg_ix = kg_x0_1; kg_ix < kg_xe_1; ++kg_ix) {
          const u32 lx = kg_ix - kg_x0_1;
          u32 v13 = ly * 8u;
          u32 v14 = v13 + lx;
          u32 v15 = (gy * 8u + ly) * p0;
          u32 v16 = v11 + lx;
          u32 v17 = v15 + v16;
          f32 v19 = b0[v17];
          v0[v14] = v19;
          u32 v20 = v11 + ly;
          u32 v21 = v20 * p0;
          u32 v22 = v21 + kg_ix;
          f32 v24 = b1[v22];
          v1[v14] = v24;
        }
      }
      // barrier: the item loops before and after run in sequence
      const u32 kg_x0_2 = gx * 8u;
      u32 kg_xe_2 = kg_x0_2 + 8u;
      for (u32 ly = 0; ly < 8u; ++ly) {
        for (u32 kg_ix = kg_x0_2; kg_ix < kg_xe_2; ++kg_ix) {
          const u32 lx = kg_ix - kg_x0_2;
          const u32 lid = (0u * 8u + ly) * 8u + lx;
          #pragma clang loop unroll_count(8)
          for (u32 v28 = 0u; v28 < 8u; v28 += 1u) {
            u32 v30 = ly * 8u;
            u32 v31 = v30 + v28;
            f32 v32 = v0[v31];
            u32 v34 = v28 * 8u;
            u32 v35 = v34 + lx;
            f32 v36 = v1[v35];
            f32 v37 = v8[lid];
            f32 v38 = v32 * v36;
            f32 v39 = v37 + v38;
            v8[lid] = v39;
          }
        }
      }
      // barrier: the item loops before and after run in sequence
    }
    const u32 kg_x0_3 = gx * 8u;
    u32 kg_xe_3 = kg_x0_3 + 8u;
    for (u32 ly = 0; ly < 8u; ++ly) {
      for (u32 kg_ix = kg_x0_3; kg_ix < kg_xe_3; ++kg_ix) {
        const u32 lx = kg_ix - kg_x0_3;
        const u32 lid = (0u * 8u + ly) * 8u + lx;
        f32 v40 = v8[lid];
        u32 v41 = (gy * 8u + ly) * p0;
        u32 v42 = v41 + kg_ix;
        b2[v42] = v40;
      }
    }
    if (++gx == ngx) { gx = 0; if (++gy == ngy) { gy = 0; ++gz; } }
  }
}
