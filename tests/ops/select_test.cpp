// The select family (ops/select/): topk's every problem and variant against
// the C++ reference (CPU at 1 and 2 threads, interpreter, GPUs present), and
// hand-worked rows checked bit for bit on the CPU: ONNX's TopK example, ties
// in index order, uint64 values past 2^63, and the problems it refuses.
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/select/topk.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

KGEN_OP_FAMILY_TESTS("select", "topk")

namespace {

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Runs topk on x (outer × n × inner) on a 2-thread CPU with each variant;
// every run's outputs must equal want_values / want_indices exactly.
template <class T>
void check_rows(ir::ScalarKind dt, std::vector<int64_t> dims, int64_t k, bool largest, const std::vector<T>& x,
                const std::vector<T>& want_values, const std::vector<int64_t>& want_indices) {
  ops::register_all_ops();
  auto p = problem("topk", dims, {{"k", k}, {"largest", largest}}, dt);
  CAPTURE(p.str());
  auto dev = cpu(2);
  for (const auto& v : ops::find_op("topk")->candidates(p, dev->caps())) {
    CAPTURE(v.str());
    ops::HostTensors t = ops::make_host_tensors(p, 1);
    t.in[0] = bytes_of(x);
    auto pp = ops::prepare(*dev, p, v);
    auto d = ops::upload(*dev, t);
    ops::execute(*dev, pp, d.io());
    dev->synchronize();
    ops::download(d, t, 1);
    CHECK(values_of<T>(t.out[0]) == want_values);
    CHECK(values_of<int64_t>(t.out[1]) == want_indices);
  }
  // The reference agrees with the hand-worked answer too.
  ops::HostTensors r = ops::make_host_tensors(p, 1);
  r.in[0] = bytes_of(x);
  ops::run_reference(p, r);
  CHECK(values_of<T>(r.out[0]) == want_values);
  CHECK(values_of<int64_t>(r.out[1]) == want_indices);
}

}  // namespace

TEST_CASE("topk: the ONNX specification's example, largest and smallest") {
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  check_rows<float>(ir::ScalarKind::F32, {3, 4, 1}, 3, true, x, {3, 2, 1, 7, 6, 5, 11, 10, 9}, {3, 2, 1, 3, 2, 1, 3, 2, 1});
  check_rows<float>(ir::ScalarKind::F32, {3, 4, 1}, 3, false, x, {0, 1, 2, 4, 5, 6, 8, 9, 10}, {0, 1, 2, 0, 1, 2, 0, 1, 2});
  // Along the first axis of 4 × 3 (inner 3).
  check_rows<float>(ir::ScalarKind::F32, {1, 4, 3}, 2, true, x, {9, 10, 11, 6, 7, 8}, {3, 3, 3, 2, 2, 2});
}

TEST_CASE("topk: equal values come out in index order") {
  check_rows<int64_t>(ir::ScalarKind::I64, {1, 6, 1}, 4, true, {2, 5, 2, 5, 7, 2}, {7, 5, 5, 2}, {4, 1, 3, 0});
  check_rows<int64_t>(ir::ScalarKind::I64, {1, 6, 1}, 4, false, {2, 5, 2, 5, 7, 2}, {2, 2, 2, 5}, {0, 2, 5, 1});
  check_rows<float>(ir::ScalarKind::F32, {1, 5, 1}, 5, true, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {0, 1, 2, 3, 4});
}

TEST_CASE("topk: uint64 values past 2^63 rank above small ones, exactly") {
  const uint64_t big = (uint64_t(1) << 63) + 1, bigger = ~uint64_t(0);
  check_rows<uint64_t>(ir::ScalarKind::U64, {1, 5, 1}, 3, true, {7, big, 3, bigger, big - 1}, {bigger, big, big - 1},
                       {3, 1, 4});
  check_rows<int64_t>(ir::ScalarKind::I64, {1, 4, 1}, 2, false, {INT64_MAX, -1, INT64_MIN, INT64_MIN + 1},
                      {INT64_MIN, INT64_MIN + 1}, {2, 3});
}

TEST_CASE("topk: problems it refuses name what is wrong") {
  ops::register_all_ops();
  auto refuse = [](ops::Problem p, const char* says) {
    CAPTURE(p.str());
    try {
      ops::op_for(p);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  refuse(problem("topk", {2, 5, 1}, {{"k", 6}}), "k=6 outside 1..n=5");
  refuse(problem("topk", {2, 5, 1}, {{"k", 0}}), "k=0");
  refuse(problem("topk", {2, 5}, {{"k", 1}}), "dims outer n inner");
  refuse(problem("topk", {2, 5, 1}, {{"k", 1}}, ir::ScalarKind::Bool), "bool");
}
