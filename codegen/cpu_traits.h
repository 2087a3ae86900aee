// The CPU's identity, decoded once (cpu_traits.cpp) into named traits that the
// op families' strategy files read (ops/<family>/strategy.cpp). Traits are
// performance facts: they choose among correct variants and never enter a
// kernel's cache key. What a kernel may use (AVX-512, VNNI, AMX, VBMI) stays a
// TargetCaps capability.
#pragma once
#include <cstdint>
#include <string_view>

namespace kgen::codegen {

// The CPU families kgen has rules for; every other CPU is `generic`.
enum class CpuFamily : uint8_t {
  generic,       // unknown vendor or model: only width-based rules apply
  zen_avx2,      // AMD Zen 1-3 (families 0x17 and 0x19 without AVX-512)
  zen4,          // AMD Zen 4 (family 0x19 with AVX-512): zmm ops as two 256-bit halves
  zen5,          // AMD Zen 5 and later (family 0x1A+): full-width zmm
  intel_avx2,    // Intel cores without AVX-512
  intel_avx512,  // Intel AVX-512 cores (Skylake-X to Granite Rapids, AMX or not)
};
std::string_view cpu_family_name(CpuFamily f);
// Inverse of cpu_family_name; throws std::invalid_argument listing the names.
CpuFamily parse_cpu_family(std::string_view name);

struct CpuTraits {
  CpuFamily family = CpuFamily::generic;
  // AVX-512 ops issue as two 256-bit halves, so zmm arithmetic runs at half
  // the rate and exp-heavy row ops turn compute-bound on one core.
  bool split_zmm = false;
  // The hardware prefetchers follow a column walk (a line per row of a
  // row-major matrix whose rows are KiB apart) at DRAM speed.
  bool strided_prefetch = false;
  // Software prefetches of streamed rows pay into L1 (prefetcht0) rather
  // than L2 only (prefetcht1).
  bool prefetch_l1_streams = false;
  // Dividing a whole f32x16 line is cheaper than Newton steps on the FMA pipes.
  bool fast_line_division = false;
  // Kernels that only stream (codegen::auto_vector_bits: cheap scalar items
  // loading and storing at their own x id) auto-vectorise this wide; 0: the
  // widest.
  uint32_t streaming_vector_bits = 0;
};

// The one table of CPU-family facts: the traits of `family` at the host's
// vector width (bits per native vector register: 128, 256 or 512).
CpuTraits cpu_traits_for(CpuFamily family, uint32_t vector_bits);
// The host's family from cpuid (vendor, family, AVX-512): one decode per call.
CpuFamily detect_cpu_family(uint32_t vector_bits);

}  // namespace kgen::codegen
