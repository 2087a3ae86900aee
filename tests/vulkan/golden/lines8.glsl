#version 450
// kernel 'lines8'
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer B0 { float[8] d[]; } b0;  // x (read)
layout(std430, set = 0, binding = 1) writeonly buffer B1 { float[8] d[]; } b1;  // y (write)
layout(std430, set = 0, binding = 2) writeonly buffer B2 { float d[]; } b2;  // sum (write)
layout(push_constant) uniform KgPush { uvec2 s[2]; } kg_push;  // 8-byte slots, value in the low bytes

void main() {
  const float p0 = uintBitsToFloat(kg_push.s[0].x);  // a
  const uint p1 = kg_push.s[1].x;  // n
  bool v2 = gl_GlobalInvocationID.x < p1;
  if (v2) {
    precise float[8] v4 = b0.d[gl_GlobalInvocationID.x];
    precise float[8] v6 = float[8](1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
    precise float[8] v7 = float[8](v4[0] * v4[0], v4[1] * v4[1], v4[2] * v4[2], v4[3] * v4[3], v4[4] * v4[4], v4[5] * v4[5], v4[6] * v4[6], v4[7] * v4[7]);
    precise float[8] v8 = float[8](v7[0] + v6[0], v7[1] + v6[1], v7[2] + v6[2], v7[3] + v6[3], v7[4] + v6[4], v7[5] + v6[5], v7[6] + v6[6], v7[7] + v6[7]);
    precise float[8] v9 = float[8](sqrt(v8[0]), sqrt(v8[1]), sqrt(v8[2]), sqrt(v8[3]), sqrt(v8[4]), sqrt(v8[5]), sqrt(v8[6]), sqrt(v8[7]));
    precise float[8] v11 = float[8](p0, p0, p0, p0, p0, p0, p0, p0);
    precise float[8] v12 = float[8](v9[0] * v11[0], v9[1] * v11[1], v9[2] * v11[2], v9[3] * v11[3], v9[4] * v11[4], v9[5] * v11[5], v9[6] * v11[6], v9[7] * v11[7]);
    precise float[8] v13 = float[8](kg_tanh(v4[0]), kg_tanh(v4[1]), kg_tanh(v4[2]), kg_tanh(v4[3]), kg_tanh(v4[4]), kg_tanh(v4[5]), kg_tanh(v4[6]), kg_tanh(v4[7]));
    precise float[8] v14 = float[8](v12[0] + v13[0], v12[1] + v13[1], v12[2] + v13[2], v12[3] + v13[3], v12[4] + v13[4], v12[5] + v13[5], v12[6] + v13[6], v12[7] + v13[7]);
    b1.d[gl_GlobalInvocationID.x] = v14;
    precise float v16 = (((((((v14[0] + v14[1]) + v14[2]) + v14[3]) + v14[4]) + v14[5]) + v14[6]) + v14[7]);
    b2.d[gl_GlobalInvocationID.x] = v16;
  }
}
