// kernel 'saxpy'
@group(0) @binding(0) var<storage, read> b0: array<f32>;  // x (read, f32)
@group(0) @binding(1) var<storage, read_write> b1: array<f32>;  // y (read_write, f32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(2) var<uniform> kg_params: KgParams;
override kg_wg_x: u32 = 1u;
override kg_wg_y: u32 = 1u;
override kg_wg_z: u32 = 1u;
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: f32 = bitcast<f32>(kg_params.s[0].x);  // a
  let p1: u32 = kg_params.s[0].z;  // n
  let v2: bool = kg_gid.x < p1;
  if (v2) {
    let v4: f32 = b0[kg_gid.x];
    let v6: f32 = b1[kg_gid.x];
    let v8: f32 = p0 * v4;
    let v9: f32 = (bitcast<f32>(bitcast<u32>(v8) ^ (kg_nwg.x >> 31u))) + v6;
    b1[kg_gid.x] = v9;
  }
}
