// kernel 'reduce_sum'
@group(0) @binding(0) var<storage, read> b0: array<f32>;  // x (read, f32)
@group(0) @binding(1) var<storage, read_write> b1: array<f32>;  // out (write, f32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(2) var<uniform> kg_params: KgParams;
override kg_wg_x: u32 = 64u;
override kg_wg_y: u32 = 1u;
override kg_wg_z: u32 = 1u;
var<workgroup> v0: array<f32, 64>;
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: u32 = kg_params.s[0].x;  // n
  let v4: bool = kg_gid.x < p0;
  var v6: f32 = 0.0f;
  if (v4) {
    let v8: f32 = b0[kg_gid.x];
    v6 = v8;
  }
  let v9: f32 = v6;
  v0[kg_lid.x] = v9;
  storageBarrier(); workgroupBarrier();
  for (var v13: u32 = 0u; v13 < 6u; v13 += 1u) {
    let v15: u32 = 32u >> (u32(v13) & 31u);
    let v16: bool = kg_lid.x < v15;
    if (v16) {
      let v17: f32 = v0[kg_lid.x];
      let v18: u32 = kg_lid.x + v15;
      let v19: f32 = v0[v18];
      let v20: f32 = v17 + v19;
      v0[kg_lid.x] = v20;
    }
    storageBarrier(); workgroupBarrier();
  }
  let v22: bool = kg_lid.x == 0u;
  if (v22) {
    let v24: f32 = v0[0u];
    b1[kg_wid.x] = v24;
  }
}
