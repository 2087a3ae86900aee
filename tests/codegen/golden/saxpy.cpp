// ---- end of prelude ----

// kernel 'saxpy', workgroup size chosen at launch
extern "C" void kgen_saxpy(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end) {
  const f32* b0 = (const f32*)a->buffers[0];  // x (read)
  f32* b1 = (f32*)a->buffers[1];  // y (read_write)
  const f32 p0 = kg_slot<f32>(a->scalars, 0);  // a
  const u32 p1 = kg_slot<u32>(a->scalars, 1);  // n
  const u32 ngx = a->grid[0], ngy = a->grid[1], ngz = a->grid[2];
  const u32 wgx = a->wg[0], wgy = a->wg[1], wgz = a->wg[2];
  for (u64 g = group_begin; g < group_end;) {
    const u32 gx = (u32)(g % ngx);
    const u64 kg_run = ngx - gx < group_end - g ? ngx - gx : group_end - g;  // groups left in this row
    for (u32 kg_rep = 0; kg_rep < wgy * wgz; ++kg_rep) {
      const u32 kg_x0_0 = gx * wgx;
      u32 kg_xe_0 = (gx + (u32)kg_run) * wgx;
      if (kg_xe_0 > p1) kg_xe_0 = p1;
      for (u32 kg_ix = kg_x0_0; kg_ix < kg_xe_0; ++kg_ix) {
        f32 v4 = b0[kg_ix];
        f32 v6 = b1[kg_ix];
        f32 v8 = p0 * v4;
        f32 v9 = v8 + v6;
        b1[kg_ix] = v9;
      }
    }
    g += kg_run;
  }
}
