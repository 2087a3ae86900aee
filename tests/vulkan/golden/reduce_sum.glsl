#version 450
// kernel 'reduce_sum'
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer B0 { float d[]; } b0;  // x (read)
layout(std430, set = 0, binding = 1) writeonly buffer B1 { float d[]; } b1;  // out (write)
layout(push_constant) uniform KgPush { uvec2 s[1]; } kg_push;  // 8-byte slots, value in the low bytes
shared float v0[64];

void main() {
  const uint p0 = kg_push.s[0].x;  // n
  bool v4 = gl_GlobalInvocationID.x < p0;
  precise float v6 = 0.0;
  if (v4) {
    precise float v8 = b0.d[gl_GlobalInvocationID.x];
    v6 = v8;
  }
  precise float v9 = v6;
  v0[gl_LocalInvocationID.x] = v9;
  memoryBarrierShared(); memoryBarrierBuffer(); barrier();
  for (uint v13 = 0u; v13 < 6u; v13 += 1u) {
    uint v15 = 32u >> (v13 & 31);
    bool v16 = gl_LocalInvocationID.x < v15;
    if (v16) {
      precise float v17 = v0[gl_LocalInvocationID.x];
      uint v18 = gl_LocalInvocationID.x + v15;
      precise float v19 = v0[v18];
      precise float v20 = v17 + v19;
      v0[gl_LocalInvocationID.x] = v20;
    }
    memoryBarrierShared(); memoryBarrierBuffer(); barrier();
  }
  bool v22 = gl_LocalInvocationID.x == 0u;
  if (v22) {
    precise float v24 = v0[0u];
    b1.d[gl_WorkGroupID.x] = v24;
  }
}
