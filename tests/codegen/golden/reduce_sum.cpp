// ---- end of prelude ----

// kernel 'reduce_sum', workgroup 64x1x1
extern "C" void kgen_reduce_sum(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end) {
  const f32* b0 = (const f32*)a->buffers[0];  // x (read)
  f32* b1 = (f32*)a->buffers[1];  // out (write)
  const u32 p0 = kg_slot<u32>(a->scalars, 0);  // n
  const u32 ngx = a->grid[0], ngy = a->grid[1], ngz = a->grid[2];
  alignas(64) f32 v0[64];  // shared
  u32 gx = (u32)(group_begin % ngx), gy = (u32)(group_begin / ngx % ngy), gz = (u32)(group_begin / ((u64)ngx * ngy));
  for (u64 g = group_begin; g < group_end; ++g) {
    const u32 kg_x0_0 = gx * 64u;
    u32 kg_xe_0 = kg_x0_0 + 64u;
    for (u32 kg_ix = kg_x0_0; kg_ix < kg_xe_0; ++kg_ix) {
      const u32 lx = kg_ix - kg_x0_0;
      f32 v6 = 0.0f;
      if ((kg_ix < p0)) {
        f32 v8 = b0[kg_ix];
        v6 = v8;
      }
      f32 v9 = v6;
      v0[lx] = v9;
    }
    // barrier: the item loops before and after run in sequence
    for (u32 v13 = 0u; v13 < 6u; v13 += 1u) {
      u32 v15 = 32u >> (v13 & 31);
      const u32 kg_x0_1 = gx * 64u;
      u32 kg_xe_1 = kg_x0_1 + 64u;
      if (v15 < 64u) kg_xe_1 = kg_x0_1 + v15;
      for (u32 kg_ix = kg_x0_1; kg_ix < kg_xe_1; ++kg_ix) {
        const u32 lx = kg_ix - kg_x0_1;
        bool v16 = lx < v15;
        f32 v17 = v0[lx];
        u32 v18 = lx + v15;
        f32 v19 = v0[v18];
        f32 v20 = v17 + v19;
        v0[lx] = v20;
      }
      // barrier: the item loops before and after run in sequence
    }
    const u32 kg_x0_2 = gx * 64u;
    u32 kg_xe_2 = kg_x0_2 + 64u;
    for (u32 kg_ix = kg_x0_2; kg_ix < kg_xe_2; ++kg_ix) {
      const u32 lx = kg_ix - kg_x0_2;
      if ((lx == 0u)) {
        f32 v24 = v0[0u];
        b1[gx] = v24;
      }
    }
    if (++gx == ngx) { gx = 0; if (++gy == ngy) { gy = 0; ++gz; } }
  }
}
