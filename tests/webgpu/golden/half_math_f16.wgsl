enable f16;
// kernel 'half_math'
@group(0) @binding(0) var<storage, read> b0: array<f16>;  // x (read, f16)
@group(0) @binding(1) var<storage, read_write> b1: array<f16>;  // h (write, f16)
@group(0) @binding(2) var<storage, read_write> b2: array<f32>;  // f (write, f32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(3) var<uniform> kg_params: KgParams;
override kg_wg_x: u32 = 1u;
override kg_wg_y: u32 = 1u;
override kg_wg_z: u32 = 1u;
// f16 bits -> f32 (exact).
fn kg_h2f(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { let v = f32(m) * 5.9604644775390625e-8f; return select(v, -v, s != 0u); }
  if (e == 31u) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}
// f32 -> f16 bits, round to nearest even (WGSL's own conversion may round
// either way and leaves overflow indeterminate).
fn kg_f2h(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  let s = (u >> 16u) & 0x8000u;
  let a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) { return s | ((a + 0xc8000fffu + ((a >> 13u) & 1u)) >> 13u); }
  return s | u32(round(bitcast<f32>(a) * 16777216.0f));
}
fn kg_rf16(x: f32) -> f32 { return kg_h2f(kg_f2h(x)); }  // x rounded to f16
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: u32 = kg_params.s[0].x;  // n
  let v2: bool = kg_gid.x < p0;
  if (v2) {
    let v4: f32 = f32(b0[u32(kg_gid.x)]);
    let v5: f32 = kg_rf16(v4 * v4);
    let v7: f32 = kg_rf16((bitcast<f32>(bitcast<u32>(v5) ^ (kg_nwg.x >> 31u))) + 0.1f);
    b1[u32(kg_gid.x)] = f16(v7);
    let v9: f32 = kg_rf16(sqrt(v7));
    let v10: f32 = v9;
    b2[kg_gid.x] = v10;
  }
}
