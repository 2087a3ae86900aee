// Every op family of the library, one line each: register_all_ops() calls
// them in this order. A family's register function adds its OpDefs.
// To add a family: insert a line `  X(register_<family>_ops) \` right above
// the end-of-list comment.
#pragma once

#define KGEN_OP_FAMILIES(X) \
  X(register_attention_ops) \
  X(register_scan_ops) \
  X(register_matmul_ops) \
  X(register_rowwise_ops) \
  X(register_tensor_ops) \
  X(register_conv_ops) \
  X(register_quant_ops) \
  /* end of list */
