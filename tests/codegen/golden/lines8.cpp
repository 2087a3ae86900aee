// ---- end of prelude ----

// kernel 'lines8', workgroup size chosen at launch
extern "C" void kgen_lines8(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end) {
  const f32x8* b0 = (const f32x8*)a->buffers[0];  // x (read)
  f32x8* b1 = (f32x8*)a->buffers[1];  // y (write)
  f32* b2 = (f32*)a->buffers[2];  // sum (write)
  const f32 p0 = kg_slot<f32>(a->scalars, 0);  // a
  const u32 p1 = kg_slot<u32>(a->scalars, 1);  // n
  const u32 ngx = a->grid[0], ngy = a->grid[1], ngz = a->grid[2];
  const u32 wgx = a->wg[0], wgy = a->wg[1], wgz = a->wg[2];
  u32 gx = (u32)(group_begin % ngx), gy = (u32)(group_begin / ngx % ngy), gz = (u32)(group_begin / ((u64)ngx * ngy));
  for (u64 g = group_begin; g < group_end; ++g) {
    for (u32 lz = 0; lz < wgz; ++lz) {
      for (u32 ly = 0; ly < wgy; ++ly) {
        for (u32 lx = 0; lx < wgx; ++lx) {
          bool v2 = (gx * wgx + lx) < p1;
          if (v2) {
            f32x8 v4 = b0[gx * wgx + lx];
            f32x8 v6 = (f32x8)(1.0f);
            f32x8 v7 = v4 * v4;
            f32x8 v8 = v7 + v6;
            f32x8 v9 = __builtin_elementwise_sqrt(v8);
            f32x8 v11 = (f32x8)(p0);
            f32x8 v12 = v9 * v11;
            f32x8 v13 = kg_map1(v4, [](auto v) { return kg_tanhf(v); });
            f32x8 v14 = v12 + v13;
            b1[gx * wgx + lx] = v14;
            f32 v16 = (((((((v14[0] + v14[1]) + v14[2]) + v14[3]) + v14[4]) + v14[5]) + v14[6]) + v14[7]);
            b2[gx * wgx + lx] = v16;
          }
        }
      }
    }
    if (++gx == ngx) { gx = 0; if (++gy == ngy) { gy = 0; ++gz; } }
  }
}
