#version 450
// kernel 'saxpy'
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer B0 { float d[]; } b0;  // x (read)
layout(std430, set = 0, binding = 1) buffer B1 { float d[]; } b1;  // y (read_write)
layout(push_constant) uniform KgPush { uvec2 s[2]; } kg_push;  // 8-byte slots, value in the low bytes

void main() {
  const float p0 = uintBitsToFloat(kg_push.s[0].x);  // a
  const uint p1 = kg_push.s[1].x;  // n
  bool v2 = gl_GlobalInvocationID.x < p1;
  if (v2) {
    precise float v4 = b0.d[gl_GlobalInvocationID.x];
    precise float v6 = b1.d[gl_GlobalInvocationID.x];
    precise float v8 = p0 * v4;
    precise float v9 = v8 + v6;
    b1.d[gl_GlobalInvocationID.x] = v9;
  }
}
