// Every op family of the library, one line each: register_all_ops() calls
// them in this order. A family's register function adds its OpDefs.
#pragma once

#define KGEN_OP_FAMILIES(X) \
  X(register_rowwise_ops)
