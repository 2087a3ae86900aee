// kernel 'casts'
@group(0) @binding(0) var<storage, read> b0: array<f32>;  // x (read, f32)
@group(0) @binding(1) var<storage, read_write> b1: array<i32>;  // i32 (write, i32)
@group(0) @binding(2) var<storage, read_write> b2: array<atomic<u32>>;  // u8 (write, u8)
@group(0) @binding(3) var<storage, read_write> b3: array<atomic<u32>>;  // i8 (write, i8)
@group(0) @binding(4) var<storage, read_write> b4: array<u32>;  // u32 (write, u32)
@group(0) @binding(5) var<storage, read_write> b5: array<u32>;  // nz (write, u32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(6) var<uniform> kg_params: KgParams;
override kg_wg_x: u32 = 1u;
override kg_wg_y: u32 = 1u;
override kg_wg_z: u32 = 1u;
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: u32 = kg_params.s[0].x;  // n
  let v2: bool = kg_gid.x < p0;
  if (v2) {
    let v4: f32 = b0[kg_gid.x];
    let v5: i32 = select(select(select(i32(v4), 2147483647i, v4 >= 2147483648.0f), i32(-2147483648), v4 <= -2147483648.0f), i32(0), v4 != v4);
    b1[kg_gid.x] = v5;
    let v7: u32 = select(select(select(u32(v4), 255u, v4 >= 256.0f), 0u, v4 <= 0.0f), u32(0), v4 != v4);
    { let kg_j = u32(kg_gid.x); let kg_s = (kg_j & 3u) * 8u; atomicAnd(&b2[kg_j >> 2u], ~(0xffu << kg_s)); atomicOr(&b2[kg_j >> 2u], (v7 & 0xffu) << kg_s); };
    let v9: i32 = select(select(select(i32(v4), 127i, v4 >= 128.0f), -128i, v4 <= -128.0f), i32(0), v4 != v4);
    { let kg_j = u32(kg_gid.x); let kg_s = (kg_j & 3u) * 8u; atomicAnd(&b3[kg_j >> 2u], ~(0xffu << kg_s)); atomicOr(&b3[kg_j >> 2u], (bitcast<u32>(v9) & 0xffu) << kg_s); };
    let v11: u32 = select(select(select(u32(v4), 4294967295u, v4 >= 4294967296.0f), 0u, v4 <= 0.0f), u32(0), v4 != v4);
    b4[kg_gid.x] = v11;
    let v13: i32 = select(select(select(i32(v4), 2147483647i, v4 >= 2147483648.0f), i32(-2147483648), v4 <= -2147483648.0f), i32(0), v4 != v4);
    let v14: bool = bool(v13);
    let v15: u32 = u32(v14);
    b5[kg_gid.x] = v15;
  }
}
