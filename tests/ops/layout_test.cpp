// The layout family (ops/layout/): transpose, every problem and candidate
// against the C++ reference on the CPU, the interpreter and the GPU devices
// present.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ops/core/op.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

namespace {

const std::vector<std::string> kOps = {"transpose"};

}  // namespace

TEST_CASE("transpose: every problem and variant on the CPU, 1 and 2 threads") { check_ops_on_cpu(kOps); }

TEST_CASE("transpose: the smallest problems of each op through the interpreter, every variant") { check_ops_interpreted(kOps); }

TEST_CASE("transpose on the GPU devices where present") { check_ops_on_gpus(kOps); }
