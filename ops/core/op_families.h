// Every op family of the library, one line each: its folder ops/<family>/
// defines register_<family>_ops(), which adds the family's OpDefs;
// register_all_ops() calls them in this order and stamps each OpDef with its
// family. To add a family: insert a line `  X(<family>) \` right above the
// end-of-list comment.
#pragma once

#define KGEN_OP_FAMILIES(X) \
  X(matmul)        /* ops/matmul: matmul, gated_mlp */ \
  X(quant)         /* ops/quant: dequantize, quantize, qmatmul */ \
  X(conv)          /* ops/conv: conv2d, pooling */ \
  X(attention)     /* ops/attention: attention, rope */ \
  X(elementwise)   /* ops/elementwise: ew_* with broadcasting, fused chains */ \
  X(rowwise)       /* ops/rowwise: softmax, log_softmax, rmsnorm, layernorm */ \
  X(reduce)        /* ops/reduce: reduce */ \
  X(scan)          /* ops/scan: scan, selective_scan */ \
  X(layout)        /* ops/layout: transpose */ \
  X(select)        /* ops/select: topk */ \
  /* end of list */
