// kernel 'lines8'
@group(0) @binding(0) var<storage, read> b0: array<array<f32, 8>>;  // x (read, f32x8)
@group(0) @binding(1) var<storage, read_write> b1: array<array<f32, 8>>;  // y (write, f32x8)
@group(0) @binding(2) var<storage, read_write> b2: array<f32>;  // sum (write, f32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(3) var<uniform> kg_params: KgParams;
override kg_wg_x: u32 = 1u;
override kg_wg_y: u32 = 1u;
override kg_wg_z: u32 = 1u;
// p * 2^n in two steps, so 2^n itself need not be representable.
fn kg_scale(p: f32, n: i32) -> f32 {
  let a = n >> 1u;
  let b = n - a;
  return p * bitcast<f32>(u32(a + 127) << 23u) * bitcast<f32>(u32(b + 127) << 23u);
}
// exp to ~1 ulp (WebGPU allows the builtin 3 + 2|x| ulp): Cody-Waite
// reduction whose first product is exact, then a degree-6 polynomial.
fn kg_exp(x0: f32) -> f32 {
  var x = select(x0, 88.8f, x0 > 88.8f);
  x = select(x, -104.0f, x < -104.0f);  // NaN passes through
  let kk = round(x * 1.44269504f);
  let n = i32(clamp(kk, -200.0f, 200.0f));
  var r = fma(kk, -0.693359375f, x);
  r = fma(kk, 2.12194440e-4f, r);
  var p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f); p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f); p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  p = fma(p, r * r, r) + 1.0f;
  return kg_scale(p, n);
}
// tanh without the cancellation of (e^2x - 1) / (e^2x + 1) near 0.
fn kg_tanh(x: f32) -> f32 {
  let ax = abs(x);
  let z = x * x;
  var p = -5.70498872745e-3f;
  p = fma(p, z, 2.06390887954e-2f); p = fma(p, z, -5.37397155531e-2f);
  p = fma(p, z, 1.33314422036e-1f); p = fma(p, z, -3.33332819422e-1f);
  let small = fma(x * z, p, x);
  let big = 1.0f - 2.0f / (kg_exp(ax + ax) + 1.0f);
  return select(select(select(big, -big, x < 0.0f), x, x != x), small, ax < 0.625f);
}
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: f32 = bitcast<f32>(kg_params.s[0].x);  // a
  let p1: u32 = kg_params.s[0].z;  // n
  let v2: bool = kg_gid.x < p1;
  if (v2) {
    let v4: array<f32, 8> = b0[kg_gid.x];
    let v6: array<f32, 8> = array<f32, 8>(1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f);
    let v7: array<f32, 8> = array<f32, 8>(v4[0] * v4[0], v4[1] * v4[1], v4[2] * v4[2], v4[3] * v4[3], v4[4] * v4[4], v4[5] * v4[5], v4[6] * v4[6], v4[7] * v4[7]);
    let v8: array<f32, 8> = array<f32, 8>((bitcast<f32>(bitcast<u32>(v7[0]) ^ (kg_nwg.x >> 31u))) + v6[0], (bitcast<f32>(bitcast<u32>(v7[1]) ^ (kg_nwg.x >> 31u))) + v6[1], (bitcast<f32>(bitcast<u32>(v7[2]) ^ (kg_nwg.x >> 31u))) + v6[2], (bitcast<f32>(bitcast<u32>(v7[3]) ^ (kg_nwg.x >> 31u))) + v6[3], (bitcast<f32>(bitcast<u32>(v7[4]) ^ (kg_nwg.x >> 31u))) + v6[4], (bitcast<f32>(bitcast<u32>(v7[5]) ^ (kg_nwg.x >> 31u))) + v6[5], (bitcast<f32>(bitcast<u32>(v7[6]) ^ (kg_nwg.x >> 31u))) + v6[6], (bitcast<f32>(bitcast<u32>(v7[7]) ^ (kg_nwg.x >> 31u))) + v6[7]);
    let v9: array<f32, 8> = array<f32, 8>(sqrt(v8[0]), sqrt(v8[1]), sqrt(v8[2]), sqrt(v8[3]), sqrt(v8[4]), sqrt(v8[5]), sqrt(v8[6]), sqrt(v8[7]));
    let v11: array<f32, 8> = array<f32, 8>(p0, p0, p0, p0, p0, p0, p0, p0);
    let v12: array<f32, 8> = array<f32, 8>(v9[0] * v11[0], v9[1] * v11[1], v9[2] * v11[2], v9[3] * v11[3], v9[4] * v11[4], v9[5] * v11[5], v9[6] * v11[6], v9[7] * v11[7]);
    let v13: array<f32, 8> = array<f32, 8>(kg_tanh(v4[0]), kg_tanh(v4[1]), kg_tanh(v4[2]), kg_tanh(v4[3]), kg_tanh(v4[4]), kg_tanh(v4[5]), kg_tanh(v4[6]), kg_tanh(v4[7]));
    let v14: array<f32, 8> = array<f32, 8>((bitcast<f32>(bitcast<u32>(v12[0]) ^ (kg_nwg.x >> 31u))) + v13[0], (bitcast<f32>(bitcast<u32>(v12[1]) ^ (kg_nwg.x >> 31u))) + v13[1], (bitcast<f32>(bitcast<u32>(v12[2]) ^ (kg_nwg.x >> 31u))) + v13[2], (bitcast<f32>(bitcast<u32>(v12[3]) ^ (kg_nwg.x >> 31u))) + v13[3], (bitcast<f32>(bitcast<u32>(v12[4]) ^ (kg_nwg.x >> 31u))) + v13[4], (bitcast<f32>(bitcast<u32>(v12[5]) ^ (kg_nwg.x >> 31u))) + v13[5], (bitcast<f32>(bitcast<u32>(v12[6]) ^ (kg_nwg.x >> 31u))) + v13[6], (bitcast<f32>(bitcast<u32>(v12[7]) ^ (kg_nwg.x >> 31u))) + v13[7]);
    b1[kg_gid.x] = v14;
    let v16: f32 = (((((((((((((v14[0] + v14[1])) + v14[2])) + v14[3])) + v14[4])) + v14[5])) + v14[6])) + v14[7]);
    b2[kg_gid.x] = v16;
  }
}
