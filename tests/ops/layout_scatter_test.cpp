// The layout family's index moves (ops/layout/index_moves.h):
// gather_elements, gather_nd, scatter_elements and scatter_nd at their test
// problems on the CPU, the interpreter and the GPU devices present; ONNX's
// own examples against the references; and the builders' errors.
#include <doctest/doctest.h>

#include <cstring>

#include "ops/core/op.h"
#include "ops/layout/index_moves.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using K = ir::ScalarKind;

namespace {
// The family registers these ops (register_layout_ops); registering again is a no-op.
[[maybe_unused]] const bool registered = (ops::register_all_ops(), true);
}  // namespace

KGEN_OP_FAMILY_TESTS("index moves", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd")

TEST_CASE("index moves: ONNX's examples through the references") {
  SUBCASE("GatherElements, axis 1, a negative index") {
    ops::GatherElements g;
    g.data_shape = {2, 2};
    g.index_shape = {2, 2};
    g.axis = 1;
    const float data[] = {1, 2, 3, 4};
    const int64_t idx[] = {0, 0, -1, 0};
    float out[4];
    ops::reference_gather_elements(g, data, idx, out);
    CHECK(std::vector<float>(out, out + 4) == std::vector<float>{1, 1, 4, 3});
  }
  SUBCASE("GatherND with a batch axis") {
    ops::GatherND g;
    g.data_shape = {2, 2, 2};
    g.index_shape = {2, 1};
    g.batch_dims = 1;
    g.index_kind = K::I32;
    const float data[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int32_t idx[] = {1, 0};
    float out[4];
    CHECK(ops::gather_nd_out_shape(g) == std::vector<int64_t>{2, 2});
    ops::reference_gather_nd(g, data, idx, out);
    CHECK(std::vector<float>(out, out + 4) == std::vector<float>{2, 3, 4, 5});
  }
  SUBCASE("ScatterElements with repeated indices and add") {
    ops::ScatterElements s;
    s.data_shape = {1, 5};
    s.index_shape = {1, 2};
    s.axis = 1;
    s.reduce = ops::ScatterReduce::Add;
    const float data[] = {1, 2, 3, 4, 5}, upd[] = {1.1f, 2.1f};
    const int64_t idx[] = {1, 1};
    float out[5];
    ops::reference_scatter_elements(s, data, idx, upd, out);
    CHECK(out[1] == doctest::Approx(5.2));
    CHECK(out[0] == 1);
  }
  SUBCASE("ScatterND with mul") {
    ops::ScatterND s;
    s.data_shape = {4};
    s.index_shape = {2, 1};
    s.reduce = ops::ScatterReduce::Mul;
    const float data[] = {1, 2, 3, 4}, upd[] = {5, 6};
    const int64_t idx[] = {2, 2};
    float out[4];
    ops::reference_scatter_nd(s, data, idx, upd, out);
    CHECK(std::vector<float>(out, out + 4) == std::vector<float>{1, 2, 90, 4});
  }
}

TEST_CASE("index moves: malformed descriptions are refused") {
  ops::Plan pl;
  ops::GatherElements g;
  g.data_shape = {2, 3};
  g.index_shape = {2, 4};  // larger than the data off the axis
  g.axis = 0;
  CHECK_THROWS_AS(ops::plan_gather_elements(pl, g, 0, 1, 2, {}), std::invalid_argument);
  ops::GatherND n;
  n.data_shape = {2, 3};
  n.index_shape = {4, 3};  // tuples longer than the rank
  CHECK_THROWS_AS(ops::gather_nd_out_shape(n), std::invalid_argument);
  ops::ScatterElements s;
  s.dtype = K::Bool;
  s.data_shape = s.index_shape = {3};
  s.reduce = ops::ScatterReduce::Add;
  CHECK_THROWS_AS(ops::check_scatter_elements(s), std::invalid_argument);
  ops::ScatterND d;
  d.data_shape = {3};
  d.index_shape = {2, 1};
  d.index_kind = K::I16;
  CHECK_THROWS_AS(ops::scatter_nd_updates_shape(d), std::invalid_argument);
}
