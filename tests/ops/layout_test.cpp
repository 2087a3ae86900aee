// The layout family (ops/layout/): transpose, every problem and candidate
// against the C++ reference on the CPU, the interpreter and the GPU devices
// present.
#include <doctest/doctest.h>

#include "ops/core/op.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

KGEN_OP_FAMILY_TESTS("transpose", "transpose")
