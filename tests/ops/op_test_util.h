// Shared helpers of the op tests: fresh seeds (printed on failure), CPU
// devices by thread count, which devices this machine has, and one checked
// run of (problem, variant) on a device against the op's C++ reference.
#pragma once
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <random>
#include <string>

#include "ops/executor.h"
#include "ops/op.h"

namespace kgen::test {

inline uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

inline std::unique_ptr<rt::Device> cpu(unsigned threads) {
  rt::DeviceOptions o;
  o.threads = threads;
  return rt::create_device("cpu", o);
}

// The CPU target's capabilities with another register file, for checking
// heuristics for AVX-512 (512 bits x 32) and AVX2 (256 x 16) on any host. The
// last-level cache is pinned too (32 MiB, a Zen 5 CCD's), since the blocking
// follows it and hosts report anything from 16 MiB to a whole socket's 480;
// and without matrix tiles (AMX), which take the bf16 products where present.
inline codegen::TargetCaps cpu_caps_with(uint32_t vector_bits, uint32_t vector_registers) {
  codegen::TargetCaps c = codegen::cpu_caps();
  c.vector_bits = vector_bits;
  c.vector_registers = vector_registers;
  c.llc_bytes = uint64_t(32) << 20;
  c.matrix_tiles = false;
  c.strided_prefetch = true;  // the Zen 5 the matmul heuristics were first measured on
  c.prefetch_l1_streams = true;
  c.split_zmm = false;  // Zen 5's full-width zmm (Zen 4's rules are checked where they apply)
  return c;
}

// The GPU devices every op family is checked on where present (CI has vulkan
// and webgpu on lavapipe; cuda only on a machine with an NVIDIA GPU).
inline const std::vector<std::string>& gpu_device_names() {
  static const std::vector<std::string> names = {"vulkan", "webgpu", "cuda"};
  return names;
}

inline bool have_device(const std::string& name) {
  for (const auto& d : rt::available_devices())
    if (d == name) return true;
  return false;
}

inline ops::Problem problem(std::string op, std::vector<int64_t> dims, std::map<std::string, int64_t> attrs = {},
                            ir::ScalarKind dt = ir::ScalarKind::F32) {
  ops::Problem p;
  p.op = std::move(op);
  p.dims = std::move(dims);
  p.attrs = std::move(attrs);
  p.dtype = dt;
  return p;
}

inline void check(rt::Device& dev, const ops::Problem& p, const ops::Variant& v) {
  uint64_t seed = fresh_seed();
  CAPTURE(p.str());
  CAPTURE(v.str());
  CAPTURE(seed);
  ops::OpCheck c = ops::check_op(dev, p, v, seed);
  INFO(c.message);
  CHECK(c.ok);
}

}  // namespace kgen::test
