// kernel 'transcendental'
@group(0) @binding(0) var<storage, read> b0: array<f32>;  // x (read, f32)
@group(0) @binding(1) var<storage, read_write> b1: array<f32>;  // y (write, f32)
struct KgParams { s: array<vec4<u32>, 1>, }  // 8-byte slots, two per element, value in the low word
@group(0) @binding(2) var<uniform> kg_params: KgParams;
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
// erf: the CPU prelude's fit (x + x*P(x^2) below 1, 1 - exp(-x^2) Q(x) above).
fn kg_erf(x: f32) -> f32 {
  let ax = abs(x);
  let z = x * x;
  var p = 7.875875063e-5f;
  p = fma(p, z, -8.016864287e-4f); p = fma(p, z, 5.189087423e-3f);
  p = fma(p, z, -2.685421201e-2f); p = fma(p, z, 1.128359472e-1f);
  p = fma(p, z, -3.761262667e-1f); p = fma(p, z, 1.283791658e-1f);
  let small = fma(x, p, x);
  let a = select(ax, 4.0f, ax > 4.0f);
  let hi = a >= 2.0f;
  let u = a - select(1.5f, 3.0f, hi);
  var q = select(-6.994892742e-4f, -2.365032323e-5f, hi);
  q = fma(q, u, select(2.001826988e-3f, 9.469385801e-5f, hi));
  q = fma(q, u, select(-5.140028842e-3f, -3.2242398e-4f, hi));
  q = fma(q, u, select(1.335906669e-2f, 1.215908479e-3f, hi));
  q = fma(q, u, select(-3.293120293e-2f, -4.479774428e-3f, hi));
  q = fma(q, u, select(7.615195751e-2f, 1.58858108e-2f, hi));
  q = fma(q, u, select(-1.636229154e-1f, -5.437224926e-2f, hi));
  q = fma(q, u, select(3.215854093e-1f, 1.790011061e-1f, hi));
  // a^2 = s + sl (Dekker split), so exp(-a^2) does not lose the low part.
  let s = a * a;
  let ah = a * 4097.0f - (a * 4097.0f - a);
  let al = a - ah;
  let sl = ((ah * ah - s) + 2.0f * ah * al) + al * al;
  let ec = kg_exp(-s) * q;
  let big = 1.0f - (ec - sl * ec);
  return select(select(select(big, -big, x < 0.0f), small, ax < 1.0f), x, x != x);
}
@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)
fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,
        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>) {
  let p0: u32 = kg_params.s[0].x;  // n
  let v2: bool = kg_gid.x < p0;
  if (v2) {
    let v4: f32 = b0[kg_gid.x];
    let v5: f32 = kg_exp(v4);
    let v6: f32 = kg_tanh(v4);
    let v7: f32 = v5 + v6;
    let v8: f32 = kg_erf(v4);
    let v9: f32 = v7 + v8;
    b1[kg_gid.x] = v9;
  }
}
