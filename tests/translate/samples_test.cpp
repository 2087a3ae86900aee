// The plain C++ samples (samples/cpp) against their DSL twins: the same IR
// after the passes where the forms agree, and the same results on random
// inputs through the interpreter.
#include <doctest/doctest.h>

#include <chrono>
#include <map>

#include "ir/half.h"
#include "ir/hash.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "samples/kernels/kernels.h"
#include "translate_test_util.h"

using namespace kgen;
using namespace kgen::translate::testing;

namespace {
ir::Kernel optimized(ir::Kernel k) {
  ir::default_pipeline().run(k);
  return k;
}

// The kernel's signature and how often each op occurs, after the passes. C++
// leaves the order of operand evaluation open (the DSL, recorded by the host
// compiler's calls, loads `a + b`'s operands in that compiler's order), so the
// instruction order of two faithful forms may differ; their op census may not.
std::string census(const ir::Kernel& k) {
  ir::Kernel o = optimized(k);
  std::map<std::string, int> count;
  ir::walk(o.body, [&](const ir::Instr& in) { ++count[std::string(ir::op_name(in.op)) + ":" + in.type.str()]; });
  std::string s;
  for (const auto& b : o.buffers) s += b.elem.str() + " " + std::string(ir::access_name(b.access)) + ", ";
  for (const auto& p : o.scalars) s += p.type.str() + ", ";
  s += "wg " + std::to_string(o.workgroup_size[0]) + "x" + std::to_string(o.workgroup_size[1]) + "\n";
  for (const auto& [op, n] : count) s += op + " x" + std::to_string(n) + "\n";
  return s;
}

// Asserts that both kernels leave the same buffers behind.
void check_same_results(const ir::Kernel& cpp, const ir::Kernel& dsl, const ir::LaunchDims& dims,
                        const std::vector<Words>& bufs, const std::vector<uint64_t>& scalars) {
  std::vector<Words> a = run(cpp, dims, bufs, scalars);
  std::vector<Words> b = run(dsl, dims, bufs, scalars);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("buffer " << i);
    CHECK(a[i] == b[i]);
  }
}
}  // namespace

TEST_CASE("saxpy.cpp is the DSL saxpy") {
  ir::Kernel cpp = translate::translate_kernel(sample_path("saxpy.cpp"), "saxpy");
  ir::Kernel dsl = samples::saxpy(ir::types::F32);
  CHECK(cpp.buffers[0].access == ir::Access::Read);
  CHECK(cpp.buffers[1].access == ir::Access::ReadWrite);
  INFO(ir::print(optimized(cpp)) << "\nDSL:\n" << ir::print(optimized(dsl)));
  CHECK(census(cpp) == census(dsl));
  for (uint32_t n : {1u, 255u, 1000u}) {
    check_same_results(cpp, dsl, grid_1d(n, 64), {random_floats(n, 1), random_floats(n, 2)},
                       {ir::scalar_slot(1.5f), ir::scalar_slot(n)});
  }
}

TEST_CASE("vec_add.cpp is the DSL vec_add; an unread buffer is an output") {
  ir::Kernel cpp = translate::translate_kernel(sample_path("vec_add.cpp"), "vec_add");
  ir::Kernel dsl = samples::vec_add(ir::types::F32);
  CHECK(cpp.buffers[2].access == ir::Access::Write);
  INFO(ir::print(optimized(cpp)) << "\nDSL:\n" << ir::print(optimized(dsl)));
  CHECK(census(cpp) == census(dsl));
  uint32_t n = 777;
  check_same_results(cpp, dsl, grid_1d(n, 128), {random_floats(n, 3), random_floats(n, 4), Words(n, 0)},
                     {ir::scalar_slot(n)});
}

TEST_CASE("saxpy_f16 and vec_add_i32 are the DSL f16 saxpy and i32 vec_add") {
  ir::Kernel saxpy = translate::translate_kernel(sample_path("saxpy.cpp"), "saxpy_f16");
  ir::Kernel saxpy_dsl = samples::saxpy(ir::types::F16);
  CHECK(saxpy.name == saxpy_dsl.name);
  CHECK(saxpy.buffers[0].elem == ir::types::F16);
  INFO(ir::print(optimized(saxpy)) << "\nDSL:\n" << ir::print(optimized(saxpy_dsl)));
  CHECK(census(saxpy) == census(saxpy_dsl));
  const uint16_t a = ir::f32_to_f16(1.5f);
  for (uint32_t n : {1u, 255u, 1001u}) {
    // Halves two per word; an odd n leaves the last half untouched.
    auto halves = [&](uint32_t seed) {
      Words f = random_floats(n + 1, seed, -4.0f, 4.0f), w((n + 1) / 2, 0);
      for (uint32_t i = 0; i < n; ++i) w[i / 2] |= uint32_t(ir::f32_to_f16(as_float(f[i]))) << (16 * (i % 2));
      return w;
    };
    Words x = halves(50 + n), y = halves(60 + n);
    check_same_results(saxpy, saxpy_dsl, grid_1d(n, 64), {x, y}, {ir::scalar_slot(a), ir::scalar_slot(n)});
    // Every product and sum rounds to f16: element 0 is round(round(a·x) + y).
    std::vector<Words> out = run(saxpy, grid_1d(n, 64), {x, y}, {ir::scalar_slot(a), ir::scalar_slot(n)});
    float x0 = ir::f16_to_f32(uint16_t(x[0])), y0 = ir::f16_to_f32(uint16_t(y[0]));
    CHECK(uint16_t(out[1][0]) == ir::f32_to_f16(ir::round_f16(1.5f * x0) + y0));
  }

  ir::Kernel add = translate::translate_kernel(sample_path("vec_add.cpp"), "vec_add_i32");
  ir::Kernel add_dsl = samples::vec_add(ir::types::I32);
  CHECK(add.name == add_dsl.name);
  CHECK(add.buffers[2].access == ir::Access::Write);
  CHECK(census(add) == census(add_dsl));
  uint32_t n = 777;
  // Words near 2^31 wrap the sum.
  Words x = random_words(n, 70, 0x7ffffff0u, 0xffffffffu), y = random_words(n, 71, 0, 0x7fffffffu);
  Words poison(n, 0xdeadbeefu);
  check_same_results(add, add_dsl, grid_1d(n, 128), {x, y, poison}, {ir::scalar_slot(n)});
  std::vector<Words> out = run(add, grid_1d(n, 128), {x, y, poison}, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) CHECK(out[2][i] == x[i] + y[i]);
}

TEST_CASE("activations.cpp: silu and the two GELUs are the DSL activations") {
  std::vector<ir::Kernel> ks = translate::translate_file(sample_path("activations.cpp"));
  REQUIRE(ks.size() == 3);
  const samples::Activation acts[] = {samples::Activation::Silu, samples::Activation::GeluTanh,
                                      samples::Activation::GeluErf};
  for (size_t a = 0; a < 3; ++a) {
    ir::Kernel dsl = samples::activation(acts[a], ir::types::F32);
    CHECK(ks[a].name == dsl.name);
    INFO(ir::print(optimized(ks[a])) << "\nDSL:\n" << ir::print(optimized(dsl)));
    CHECK(census(ks[a]) == census(dsl));
    uint32_t n = 500;
    check_same_results(ks[a], dsl, grid_1d(n, 64), {random_floats(n, 20 + uint32_t(a), -4.0f, 4.0f), Words(n, 0)},
                       {ir::scalar_slot(n)});
  }
}

TEST_CASE("histogram.cpp: global and shared-memory atomics match the DSL histograms") {
  std::vector<ir::Kernel> ks = translate::translate_file(sample_path("histogram.cpp"));
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].name == "histogram256");
  CHECK(ks[1].name == "histogram256_shared");
  CHECK(ks[1].workgroup_size == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(census(ks[0]) == census(samples::histogram(256, false)));
  CHECK(census(ks[1]) == census(samples::histogram(256, true)));
  for (uint32_t n : {1u, 1000u, 4099u}) {
    // Values past the last bin land in it (clamped).
    Words x = random_words(n, 5 + n, 0, 300);
    check_same_results(ks[0], samples::histogram(256, false), grid_1d(n, 256), {x, Words(256, 0)},
                       {ir::scalar_slot(n)});
    check_same_results(ks[1], samples::histogram(256, true), grid_1d(n, 256), {x, Words(256, 0)},
                       {ir::scalar_slot(n)});
    std::vector<Words> out = run(ks[1], grid_1d(n, 256), {x, Words(256, 0)}, {ir::scalar_slot(n)});
    Words expect(256, 0);
    for (uint32_t v : x) ++expect[v < 255 ? v : 255];
    CHECK(out[1] == expect);
  }
}

TEST_CASE("matmul_tiled.cpp: shared tiles and barriers match the DSL matmul") {
  for (int tile : {8, 16}) {
    translate::Options opt;
    opt.defines = {"TILE=" + std::to_string(tile)};
    ir::Kernel cpp = translate::translate_kernel(sample_path("matmul_tiled.cpp"), "matmul_tiled", opt);
    CHECK(cpp.workgroup_size == std::array<uint32_t, 3>{uint32_t(tile), uint32_t(tile), 1});
    for (uint32_t n : {7u, 33u}) {
      uint32_t g = (n + tile - 1) / tile;
      ir::LaunchDims dims;
      dims.grid = {g, g, 1};
      dims.workgroup = {uint32_t(tile), uint32_t(tile), 1};
      uint64_t s = ir::scalar_slot(n);
      check_same_results(cpp, samples::matmul_tiled(tile), dims,
                         {random_floats(n * n, 6), random_floats(n * n, 7), Words(n * n, 0)}, {s, s, s});
    }
  }
}

TEST_CASE("reduce_sum.cpp: a shared-memory tree matches the DSL reduction") {
  ir::Kernel cpp = translate::translate_kernel(sample_path("reduce_sum.cpp"), "reduce_sum");
  for (uint32_t n : {1u, 1000u, 3000u}) {
    uint32_t groups = (n + 1023) / 1024;
    ir::LaunchDims dims;
    dims.grid = {groups, 1, 1};
    dims.workgroup = {256, 1, 1};
    // Small integers: every summation order gives the same float.
    Words x = random_words(n, 8, 0, 8);
    for (uint32_t& w : x) {
      float f = float(w);
      std::memcpy(&w, &f, 4);
    }
    check_same_results(cpp, samples::reduce_sum(4), dims, {x, Words(groups, 0)}, {ir::scalar_slot(n)});
  }
}

TEST_CASE("translation time of a sample") {
  auto start = std::chrono::steady_clock::now();
  translate::translate_file(sample_path("matmul_tiled.cpp"));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("matmul_tiled.cpp: clang parse + lowering took " << ms << " ms");
  CHECK(ms < 5000);  // generous: a loaded 2-core machine; the goal is <= 50 ms
}

TEST_CASE("softmax.cpp: row offsets, helpers with barriers and tree reductions match the DSL softmax") {
  ir::Kernel cpp = translate::translate_kernel(sample_path("softmax.cpp"), "softmax_rows");
  for (uint32_t cols : {1u, 7u, 257u, 1000u}) {
    const uint32_t rows = 3;
    ir::LaunchDims dims;
    dims.grid = {rows, 1, 1};
    dims.workgroup = {256, 1, 1};
    check_same_results(cpp, samples::softmax_rows(), dims,
                       {random_floats(rows * cols, 14, -8.0f, 8.0f), Words(rows * cols, 0)}, {ir::scalar_slot(cols)});
  }
}

TEST_CASE("lines.cpp: f32x16 saxpy and the f32x8 dot are the DSL line kernels") {
  ir::Kernel saxpy = translate::translate_kernel(sample_path("lines.cpp"), "saxpy_l16");
  ir::Kernel dot = translate::translate_kernel(sample_path("lines.cpp"), "dot_l8");
  ir::Kernel saxpy_dsl = samples::saxpy_lines(16), dot_dsl = samples::dot_lines(8);
  CHECK(saxpy.buffers[0].elem == ir::types::F32.with_lanes(16));
  CHECK(census(saxpy) == census(saxpy_dsl));
  CHECK(census(dot) == census(dot_dsl));
  for (uint32_t lines : {1u, 7u, 100u}) {
    check_same_results(saxpy, saxpy_dsl, grid_1d(lines, 64), {random_floats(16 * lines, 30), random_floats(16 * lines, 31)},
                       {ir::scalar_slot(1.5f), ir::scalar_slot(lines)});
    check_same_results(dot, dot_dsl, grid_1d(lines, 64), {random_floats(8 * lines, 32), random_floats(8 * lines, 33), Words(lines, 0)},
                       {ir::scalar_slot(lines)});
  }
}

namespace {
// Words that reach the packed ops' edges: bytes -128, 127 and 255, halves
// -2^15 (whose pair sum wraps) and 2^15 - 1, zero; then random words.
Words edge_then_random_words(size_t n, uint32_t seed) {
  const uint32_t edges[] = {0x80808080u, 0x7f7f7f7fu, 0xffffffffu, 0u, 0x80008000u, 0x7fff8000u, 0x807f01ffu};
  Words w = random_words(n, seed, 0, 0xffffffffu);
  for (size_t i = 0; i < n && i < std::size(edges); ++i) w[i] = edges[(i + seed) % std::size(edges)];
  return w;
}

// The C++ twin of `dsl` in `file` (the same kernel name) against it: the op
// census and the results for a few sizes. `words[b]` is buffer b's words per
// element; floats fills them with floats in [-1, 1], else edge and random words.
void check_packed_twin(const std::string& file, const ir::Kernel& dsl, const std::vector<size_t>& words, bool floats) {
  ir::Kernel cpp = translate::translate_kernel(sample_path(file), dsl.name);
  INFO(dsl.name << "\n" << ir::print(optimized(cpp)) << "\nDSL:\n" << ir::print(optimized(dsl)));
  CHECK(census(cpp) == census(dsl));
  for (uint32_t n : {1u, 7u, 100u}) {
    std::vector<Words> bufs;
    for (size_t b = 0; b < words.size(); ++b) {
      uint32_t seed = 40 + uint32_t(b) + n;
      bufs.push_back(floats ? random_floats(words[b] * n, seed) : edge_then_random_words(words[b] * n, seed));
    }
    check_same_results(cpp, dsl, grid_1d(n, 64), bufs, {ir::scalar_slot(n)});
  }
}
}  // namespace

TEST_CASE("dot4.cpp: the 4 signedness pairs, the chained and the edge dot4 kernels are their DSL twins") {
  for (size_t lanes : {1, 4, 8, 16}) {
    int l = int(lanes);
    check_packed_twin("dot4.cpp", samples::dot4_packed(l), {lanes, lanes, lanes, 4 * lanes}, false);
    check_packed_twin("dot4.cpp", samples::dot4_pair_packed(l), {lanes, lanes, lanes, 2 * lanes}, false);
    check_packed_twin("dot4.cpp", samples::dot4_small_packed(l), {lanes, lanes, lanes, 6 * lanes}, false);
  }
}

TEST_CASE("dot2_i16.cpp and dot2_bf16.cpp are the DSL pair dot products") {
  for (size_t lanes : {1, 4, 8, 16}) {
    check_packed_twin("dot2_i16.cpp", samples::dot2_i16_packed(int(lanes)), {lanes, lanes, lanes, 2 * lanes}, false);
    check_packed_twin("dot2_bf16.cpp", samples::dot2_bf16_packed(int(lanes)), {2 * lanes, 2 * lanes, lanes, 2 * lanes},
                      true);
  }
}

TEST_CASE("permute.cpp: run-time and constant byte permutes are the DSL permute_bytes kernels") {
  for (size_t tb : {4, 16, 32, 64})
    check_packed_twin("permute.cpp", samples::permute_bytes_kernel(int(tb)), {tb / 4, tb / 4, 16, 32, 4}, false);
}
