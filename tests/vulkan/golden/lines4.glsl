#version 450
// kernel 'lines4'
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer B0 { vec4 d[]; } b0;  // x (read)
layout(std430, set = 0, binding = 1) writeonly buffer B1 { vec4 d[]; } b1;  // y (write)
layout(std430, set = 0, binding = 2) writeonly buffer B2 { float d[]; } b2;  // sum (write)
layout(push_constant) uniform KgPush { uvec2 s[2]; } kg_push;  // 8-byte slots, value in the low bytes

void main() {
  const float p0 = uintBitsToFloat(kg_push.s[0].x);  // a
  const uint p1 = kg_push.s[1].x;  // n
  bool v2 = gl_GlobalInvocationID.x < p1;
  if (v2) {
    precise vec4 v4 = b0.d[gl_GlobalInvocationID.x];
    precise vec4 v6 = vec4(1.0);
    precise vec4 v7 = v4 * v4;
    precise vec4 v8 = v7 + v6;
    precise vec4 v9 = sqrt(v8);
    precise vec4 v11 = vec4(p0);
    precise vec4 v12 = v9 * v11;
    precise vec4 v13 = vec4(kg_tanh(v4.x), kg_tanh(v4.y), kg_tanh(v4.z), kg_tanh(v4.w));
    precise vec4 v14 = v12 + v13;
    b1.d[gl_GlobalInvocationID.x] = v14;
    precise float v16 = (((v14.x + v14.y) + v14.z) + v14.w);
    b2.d[gl_GlobalInvocationID.x] = v16;
  }
}
