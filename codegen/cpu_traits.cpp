#include "codegen/cpu_traits.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <stdexcept>
#include <string>

namespace kgen::codegen {

namespace {

constexpr std::pair<CpuFamily, std::string_view> kNames[] = {
    {CpuFamily::generic, "generic"}, {CpuFamily::zen_avx2, "zen_avx2"},         {CpuFamily::zen4, "zen4"},
    {CpuFamily::zen5, "zen5"},       {CpuFamily::intel_avx2, "intel_avx2"}, {CpuFamily::intel_avx512, "intel_avx512"},
};

}  // namespace

std::string_view cpu_family_name(CpuFamily f) {
  for (auto [family, name] : kNames)
    if (family == f) return name;
  return "generic";
}

CpuFamily parse_cpu_family(std::string_view name) {
  std::string known;
  for (auto [family, n] : kNames) {
    if (n == name) return family;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw std::invalid_argument("unknown CPU family '" + std::string(name) + "' (known: " + known + ")");
}

CpuTraits cpu_traits_for(CpuFamily family, uint32_t vector_bits) {
  using F = CpuFamily;
  CpuTraits t;
  t.family = family;
  const bool zen45 = family == F::zen4 || family == F::zen5;
  // Zen 4 runs zmm as two halves; Zen 5 and Intel have full-width units.
  t.split_zmm = family == F::zen4;
  // Zen 4/5 prefetchers follow column walks (16x11008x4096 K×N, 1 thread: the
  // column-walk GEMM 10.8 ms on Zen 5, 14.4 against 18.6 row-wise on Zen 4);
  // Intel's read them at 2-4 GB/s whatever software prefetch is added.
  t.strided_prefetch = zen45;
  // Zen 5: L1 prefetches lift the int8 GEMVs from ~0.75 to ~0.95 of the triad.
  t.prefetch_l1_streams = family == F::zen5;
  // Two vdivps ymm issue beside the FMA pipes on AVX2 hosts, and Zen 4/5 divide
  // a zmm line fast (gelu 8192x4096: 6.2 against 9.6 ms on Zen 5); Intel's
  // AVX-512 cores issue vdivps zmm once per ~10 cycles, where Newton wins.
  t.fast_line_division = vector_bits == 256 || (vector_bits == 512 && zen45);
  // Zen 4 streams ymm stores from DRAM faster than zmm ones (one-work-item
  // vec_add: 0.8 of the triad on zmm, 1.0 on ymm); long exp chains still
  // want zmm's work in flight (silu 0.9 against 0.5 on ymm).
  t.streaming_vector_bits = family == F::zen4 ? 256 : 0;
  return t;
}

CpuFamily detect_cpu_family(uint32_t vector_bits) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return CpuFamily::generic;
  const bool amd = b == 0x68747541u, intel = b == 0x756e6547u;  // "Auth"enticAMD, "Genu"ineIntel
  if (intel) return vector_bits >= 512 ? CpuFamily::intel_avx512 : CpuFamily::intel_avx2;
  if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return CpuFamily::generic;
  int family = int((a >> 8) & 0xf);
  if (family == 0xf) family += int((a >> 20) & 0xff);
  if (family >= 0x1A) return CpuFamily::zen5;
  if (family == 0x19 && vector_bits >= 512) return CpuFamily::zen4;
  if (family == 0x17 || family == 0x19) return CpuFamily::zen_avx2;
#endif
  return CpuFamily::generic;
}

}  // namespace kgen::codegen
