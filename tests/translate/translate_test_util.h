// Running translated kernels through the interpreter in tests.
#pragma once
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"
#include "translate/translate.h"

namespace kgen::translate::testing {

// Host memory of one buffer argument, as raw 32-bit words.
using Words = std::vector<uint32_t>;

// Runs `k` on copies of `bufs` (one per buffer parameter) and returns them.
inline std::vector<Words> run(const ir::Kernel& k, const ir::LaunchDims& dims, std::vector<Words> bufs,
                              const std::vector<uint64_t>& scalars) {
  std::vector<ir::InterpBuffer> ib;
  for (Words& w : bufs) ib.push_back({w.data(), w.size() * 4});
  ir::interpret(k, dims, ib, scalars);
  return bufs;
}

inline ir::LaunchDims grid_1d(uint32_t n, uint32_t group) {
  ir::LaunchDims d;
  d.grid = {(n + group - 1) / group, 1, 1};
  d.workgroup = {group, 1, 1};
  return d;
}

inline Words random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Words w(n);
  for (uint32_t& x : w) {
    float f = dist(rng);
    std::memcpy(&x, &f, 4);
  }
  return w;
}

inline Words random_words(size_t n, uint32_t seed, uint32_t lo, uint32_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> dist(lo, hi);
  Words w(n);
  for (uint32_t& x : w) x = dist(rng);
  return w;
}

inline float as_float(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

inline std::string sample_path(const std::string& file) { return std::string(KGEN_SAMPLES_CPP_DIR) + "/" + file; }

// Translates source text holding exactly one kernel.
inline ir::Kernel translate_one(const std::string& code, const Options& opt = {}) {
  std::vector<ir::Kernel> ks = translate_source("#include \"kgen_kernel.h\"\nusing namespace kgen;\n" + code,
                                                "test.cpp", opt);
  if (ks.size() != 1) throw std::runtime_error("expected one kernel, got " + std::to_string(ks.size()));
  return std::move(ks[0]);
}

}  // namespace kgen::translate::testing
