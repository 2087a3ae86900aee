// The op types the graph runs, by group: each graph/nodes/<group>.cpp defines
// register_<group>_nodes() with one OpHandler per op type (graph/handler.h).
#pragma once

#define KGEN_NODE_GROUPS(X) \
  X(elementwise)            \
  X(logic)                  \
  X(activations)            \
  X(shape)                  \
  X(conv)                   \
  X(matmul)                 \
  X(layout)                 \
  X(gather_concat)          \
  X(rowwise)                \
  X(reduce_more)            \
  X(losses)                 \
  X(quant)                  \
  X(pad_resize)             \
  X(index_moves)            \
  X(construct)              \
  X(attention)              \
  X(conv_more)              \
  X(kv_cache)               \
  X(ggml)                   \
  X(topk)                   \
  X(recurrent)

namespace kgen::graph {
#define KGEN_X(group) void register_##group##_nodes();
KGEN_NODE_GROUPS(KGEN_X)
#undef KGEN_X
}  // namespace kgen::graph
