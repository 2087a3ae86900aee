// The kgen kernel DSL: C++ values and lambdas that record kgen IR.
//
//   #include "dsl/dsl.h"
//   using namespace kgen::dsl;
//
// kernel.h   kernel(), KernelBuilder: parameters, workgroup size
// value.h    Value handles, Operand (values, vars, elements, literals + call site)
// literal.h  the literal typing rule
// operators.h, math.h, line.h   arithmetic, math builtins, vector lines
// memory.h   buffers/shared arrays (Array, ElemRef), var()
// control.h  for_range, if_/else_if_/else_, while_, loop_, break_, continue_, return_
// simt.h     ids, barrier, atomics, subgroup operations
#pragma once
#include "dsl/control.h"
#include "dsl/kernel.h"
#include "dsl/line.h"
#include "dsl/literal.h"
#include "dsl/math.h"
#include "dsl/memory.h"
#include "dsl/operators.h"
#include "dsl/simt.h"
#include "dsl/types.h"
#include "dsl/value.h"
