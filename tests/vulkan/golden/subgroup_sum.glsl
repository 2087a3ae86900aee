#version 450
// kernel 'subgroup_sum'
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) buffer B0 { float d[]; } b0;  // x (read_write)

void main() {
  precise float v2 = b0.d[gl_GlobalInvocationID.x];
  precise float v3 = subgroupAdd(v2);
  b0.d[gl_GlobalInvocationID.x] = v3;
}
