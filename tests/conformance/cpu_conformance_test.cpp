// The conformance suite (tests/conformance/device_suite.h) on the CPU device,
// with 1 and 2 worker threads: every registered kernel (samples and the op
// library's row kernels) and every elementwise (op, dtype) case against the
// reference interpreter. The CPU expresses everything, so nothing is skipped.
#include <doctest/doctest.h>

#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tests/conformance/device_suite.h"

using namespace kgen;

namespace {

std::unique_ptr<rt::Device> cpu(unsigned threads) {
  rt::DeviceOptions opt;
  opt.threads = threads;
  return rt::create_device("cpu", opt);
}

// The host assembly of `k` as the CPU device compiles it (1 thread).
std::string host_asm(const ir::Kernel& k) {
  rt::CompileOptions o;
  o.keep_ir = true;
  return cpu(1)->compile(k, o)->debug_asm();
}

conformance::DeviceSuite cpu_suite() {
  conformance::DeviceSuite s;
  s.name = "cpu";
  return s;
}

}  // namespace

TEST_CASE("every registered kernel matches the interpreter on the CPU (1 thread)") {
  samples::register_all();
  ops::register_all();
  conformance::check_registered_kernels(*cpu(1), cpu_suite());
}

TEST_CASE("every registered kernel matches the interpreter on the CPU (2 threads)") {
  samples::register_all();
  ops::register_all();
  conformance::check_registered_kernels(*cpu(2), cpu_suite());
}

TEST_CASE("every elementwise op x dtype matches the interpreter on the CPU") {
  auto dev = cpu(0);
  conformance::check_elementwise_cases(*dev, cpu_suite());
}

TEST_CASE("dot4 lines use the host's byte dot product instructions") {
  // Correctness is the registered dot4_l* kernels above; this checks the
  // lowering: vpdpbusd with AVX512-VNNI (unsigned x signed only), else
  // vpmaddwd on the even/odd bytes; never four 32-bit multiplies per lane.
  const std::string s = host_asm(samples::dot4_packed(16));
  REQUIRE(!s.empty());
  const bool vnni = __builtin_cpu_supports("avx512vnni");
  const bool avx2 = __builtin_cpu_supports("avx2");
  MESSAGE("avx512vnni " << vnni << ", avx2 " << avx2);
  if (vnni) CHECK(s.find("vpdpbusd") != std::string::npos);
  if (avx2) {
    CHECK(s.find("vpmaddwd") != std::string::npos);
    CHECK(s.find("vpmulld") == std::string::npos);
  }
}

TEST_CASE("dot2_i16 lines use vpdpwssd on AVX512-VNNI hosts, vpmaddwd elsewhere") {
  // Correctness is the registered dot2_i16_l* kernels (exact against the
  // interpreter); this checks the lowering.
  auto dev = cpu(1);
  rt::CompileOptions o;
  o.keep_ir = true;
  const std::string s = dev->compile(samples::dot2_i16_packed(16), o)->debug_asm();
  REQUIRE(!s.empty());
  const bool vnni = __builtin_cpu_supports("avx512vnni");
  MESSAGE("avx512vnni " << vnni);
  CHECK((s.find("vpdpwssd") != std::string::npos) == vnni);
  if (!vnni && __builtin_cpu_supports("avx2")) CHECK(s.find("vpmaddwd") != std::string::npos);
}

TEST_CASE("dot2_bf16 lines use vdpbf16ps on AVX512-BF16 hosts") {
  // Correctness is the registered dot2_bf16_l* kernels (bit-exact against the
  // interpreter, whose addition order is the instruction's); this checks the
  // lowering.
  const std::string s = host_asm(samples::dot2_bf16_packed(16));
  REQUIRE(!s.empty());
  const bool bf16 = __builtin_cpu_supports("avx512bf16");
  MESSAGE("avx512bf16 " << bf16);
  CHECK((s.find("vdpbf16ps") != std::string::npos) == bf16);
}

TEST_CASE("dot4 of unsigned bytes below 128, or of signed bytes one side clamped, uses the saturating pair multiply on AVX2") {
  // codegen proves the masked operand's bytes small, or the clamped one's
  // never -128 (ir/byte_bound.h), so vpmaddubsw cannot saturate (after
  // vpsignb/vpabsb for signed pairs); correctness is the dot4_small_l* kernels.
  const std::string s = host_asm(samples::dot4_small_packed(8));
  REQUIRE(!s.empty());
  if (__builtin_cpu_supports("avx512vnni")) CHECK(s.find("vpdpbusd") != std::string::npos);
  else if (__builtin_cpu_supports("avx2")) CHECK(s.find("vpmaddubsw") != std::string::npos);
  if (__builtin_cpu_supports("avx2")) {
    CHECK(s.find("vpsignb") != std::string::npos);
    CHECK(s.find("vpabsb") != std::string::npos);
  }
}

TEST_CASE("two chained dot4 of unsigned bytes below 64 share one widening multiply on AVX2 without VNNI") {
  // dot4(a, b, dot4(a2, b2, c)) adds the two vpmaddubsw results in 16 bits
  // (Dialect::dot4_pair), the chain of bytes up to 127 does not (it would
  // saturate); correctness is the dot4_pair_l* kernels.
  const std::string s = host_asm(samples::dot4_pair_packed(8));
  REQUIRE(!s.empty());
  auto count = [&](const std::string& w) {
    size_t n = 0;
    for (size_t at = s.find(w); at != std::string::npos; at = s.find(w, at + 1)) ++n;
    return n;
  };
  MESSAGE("vpmaddubsw " << count("vpmaddubsw") << ", vpmaddwd " << count("vpmaddwd"));
  if (__builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512vnni")) {
    CHECK(count("vpmaddubsw") > 0);
    CHECK(count("vpmaddwd") < count("vpmaddubsw"));
  }
}

TEST_CASE("long loops run to the end on the CPU") { conformance::check_long_loops(*cpu(1)); }
