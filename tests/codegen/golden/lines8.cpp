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
  for (u64 g = group_begin; g < group_end;) {
    const u32 gx = (u32)(g % ngx);
    const u64 kg_run = ngx - gx < group_end - g ? ngx - gx : group_end - g;  // groups left in this row
    for (u32 kg_rep = 0; kg_rep < wgy * wgz; ++kg_rep) {
      const u32 kg_x0_0 = gx * wgx;
      u32 kg_xe_0 = (gx + (u32)kg_run) * wgx;
      if (kg_xe_0 > p1) kg_xe_0 = p1;
      for (u32 kg_ix = kg_x0_0; kg_ix < kg_xe_0; ++kg_ix) {
        f32x8 v4 = b0[kg_ix];
        f32x8 v6 = (f32x8)(1.0f);
        f32x8 v7 = v4 * v4;
        f32x8 v8 = v7 + v6;
        f32x8 v9 = __builtin_elementwise_sqrt(v8);
        f32x8 v11 = (f32x8)(p0);
        f32x8 v12 = v9 * v11;
        f32x8 v13 = kg_map1(v4, [](auto v) { return kg_tanhf(v); });
        f32x8 v14 = v12 + v13;
        b1[kg_ix] = v14;
        f32 v16 = (((((((v14[0] + v14[1]) + v14[2]) + v14[3]) + v14[4]) + v14[5]) + v14[6]) + v14[7]);
        b2[kg_ix] = v16;
      }
    }
    g += kg_run;
  }
}
