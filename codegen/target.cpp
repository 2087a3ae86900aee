#include "codegen/target.h"

#include <sys/syscall.h>
#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kgen::codegen {

namespace {

// The largest cache level sysfs lists for cpu0 ("32768K"), else sysconf's L3.
uint64_t host_llc_bytes() {
  uint64_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_f(dir + "level"), size_f(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_f >> level) || !(size_f >> size) || size.empty()) continue;
    uint64_t bytes = std::strtoull(size.c_str(), nullptr, 10);
    const char unit = size.back();
    if (unit == 'K') bytes <<= 10;
    else if (unit == 'M') bytes <<= 20;
    if (level > best_level || (level == best_level && bytes > best)) best_level = level, best = bytes;
  }
  if (best_level >= 2) return best;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? uint64_t(l3) : 0;
}

// AMX-BF16 in the CPU and its tile state granted by Linux (arch_prctl
// ARCH_REQ_XCOMP_PERM for XTILEDATA, once per process; without it the first
// tile instruction faults). KGEN_NO_AMX=1 leaves it off.
bool amx_usable() {
  static const bool ok = [] {
    if (const char* e = std::getenv("KGEN_NO_AMX"); e && *e && *e != '0') return false;
#if defined(__x86_64__) && defined(__linux__)
    if (!__builtin_cpu_supports("amx-bf16") || !__builtin_cpu_supports("amx-tile")) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return ok;
}

}  // namespace

TargetCaps cpu_caps() {
  TargetCaps c;
  c.name = "cpu";
  c.f16 = c.bf16 = c.f64 = c.i64 = true;
  c.subgroups = false;  // a subgroup of one would be legal but surprising; refuse clearly instead
  c.subgroup_size = 0;
  // Shared arrays and spilled per-item values live on the worker's stack.
  c.max_shared_bytes = 1u << 20;
  c.max_workgroup_threads = 4096;
  c.max_workgroup_size = {4096, 4096, 4096};
  c.atomics_f32 = true;
  c.atomics_64 = true;
  // The JIT compiles for the host CPU (jit/jit.cpp), so its vector unit sets
  // the register blocking.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) c.vector_bits = 512, c.vector_registers = 32;
  else if (__builtin_cpu_supports("avx2")) c.vector_bits = 256, c.vector_registers = 16;
  else c.vector_bits = 128, c.vector_registers = 16;
  c.llc_bytes = host_llc_bytes();
  c.cpu = cpu_traits_for(detect_cpu_family(c.vector_bits), c.vector_bits);
  const bool zen45 = c.cpu.family == CpuFamily::zen4 || c.cpu.family == CpuFamily::zen5;
  c.byte_dot = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
  c.byte_permute = true;
  c.byte_lookup = __builtin_cpu_supports("avx512vbmi");
  // Zen 4/5 run vdpbf16ps at the f32 FMA rate, so a pair does two fmas'
  // work; Intel's AVX-512 cores issue it on one port, where widening to f32 wins.
  c.bf16_dot = __builtin_cpu_supports("avx512bf16") && zen45;
  c.matrix_tiles = amx_usable();
  return c;
}

namespace {

std::string where(const ir::Instr& in) {
  std::string s = "'" + std::string(ir::op_name(in.op)) + "'";
  if (in.loc.known()) s += " at " + in.loc.str();
  return s;
}

bool uses_kind(ir::Type t, ir::ScalarKind k) { return t.kind == k; }

}  // namespace

void check_capabilities(const ir::Kernel& k, const TargetCaps& caps) {
  const std::string kn = "kernel '" + k.name + "'";
  const std::string tn = "target '" + caps.name + "'";
  auto fail = [&](const ir::Instr* in, const std::string& what, const std::string& lacks) {
    ir::SourceLoc loc = in ? in->loc : ir::SourceLoc{};
    throw ir::Error(loc, kn + " uses " + what + (in ? " (" + where(*in) + ")" : std::string()) + " but " + tn + " " + lacks);
  };
  auto check_type = [&](ir::Type t, const ir::Instr* in) {
    if (uses_kind(t, ir::ScalarKind::F16) && !caps.f16) fail(in, "f16", "has no f16 support");
    if (uses_kind(t, ir::ScalarKind::BF16) && !caps.bf16) fail(in, "bf16", "has no bf16 support");
    if (uses_kind(t, ir::ScalarKind::F64) && !caps.f64) fail(in, "f64", "has no f64 support");
    if ((uses_kind(t, ir::ScalarKind::I64) || uses_kind(t, ir::ScalarKind::U64)) && !caps.i64)
      fail(in, "64-bit integers", "has no 64-bit integer support");
    if (t.lanes > caps.max_vector_lanes)
      fail(in, "vector lines of " + std::to_string(t.lanes) + " lanes", "allows at most " + std::to_string(caps.max_vector_lanes));
  };
  for (const auto& b : k.buffers) check_type(b.elem, nullptr);
  for (const auto& s : k.scalars) check_type(s.type, nullptr);

  if (k.fixed_workgroup()) {
    for (int a = 0; a < 3; ++a)
      if (caps.max_workgroup_size[a] && k.workgroup_size[a] > caps.max_workgroup_size[a])
        fail(nullptr, "workgroup size " + std::to_string(k.workgroup_size[a]) + " on axis " + std::to_string(a),
             "allows at most " + std::to_string(caps.max_workgroup_size[a]));
    if (caps.max_workgroup_threads && k.workgroup_threads() > caps.max_workgroup_threads)
      fail(nullptr, std::to_string(k.workgroup_threads()) + " work-items per group",
           "allows at most " + std::to_string(caps.max_workgroup_threads));
  }

  uint64_t shared = 0;
  ir::walk(k.body, [&](const ir::Instr& in) {
    check_type(in.type, &in);
    ir::OpClass c = ir::op_class(in.op);
    if (c == ir::OpClass::Subgroup || c == ir::OpClass::SubgroupReduce || in.op == ir::Op::SubgroupSize ||
        in.op == ir::Op::SubgroupLane) {
      if (!caps.subgroups) fail(&in, "subgroup operations", "has no subgroups");
    }
    if (c == ir::OpClass::Permute && !caps.byte_permute) fail(&in, "byte permutes", "has no byte permutes");
    if (c == ir::OpClass::Tile && !caps.matrix_tiles) fail(&in, "matrix tiles", "has no matrix tiles (AMX-BF16)");
    if (c == ir::OpClass::Atomic) {
      ir::Type e = in.type;
      if (e.is_float() && !caps.atomics_f32) fail(&in, "float atomics", "has no float atomics");
      if (e.bits() == 64 && !caps.atomics_64) fail(&in, "64-bit atomics", "has no 64-bit atomics");
    }
    if (in.op == ir::Op::SharedAlloc) shared += uint64_t(in.type.bytes()) * uint64_t(in.attr);
  });
  if (caps.max_shared_bytes && shared > caps.max_shared_bytes)
    fail(nullptr, std::to_string(shared) + " bytes of shared memory",
         "allows at most " + std::to_string(caps.max_shared_bytes));
}

}  // namespace kgen::codegen
