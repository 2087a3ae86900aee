// ---- end of prelude ----

// kernel 'saxpy', workgroup size chosen at launch
extern "C" void kgen_saxpy(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end) {
  const f32* b0 = (const f32*)a->buffers[0];  // x (read)
  f32* b1 = (f32*)a->buffers[1];  // y (read_write)
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
            f32 v4 = b0[gx * wgx + lx];
            f32 v6 = b1[gx * wgx + lx];
            f32 v8 = p0 * v4;
            f32 v9 = v8 + v6;
            b1[gx * wgx + lx] = v9;
          }
        }
      }
    }
    if (++gx == ngx) { gx = 0; if (++gy == ngy) { gy = 0; ++gz; } }
  }
}
