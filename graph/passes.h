// Graph rewrites, in the order prepare() runs them (graph/prepared_model.cpp):
//  specialise  symbolic input dimensions -> the sizes given (default 1)
//  infer       dtypes and static shapes of every value; nodes whose inputs
//              are all constant are evaluated on the host (constant folding,
//              shape subgraphs included) and become dead
//  fold_batchnorm   Conv -> BatchNormalization: the scale and shift folded
//              into the Conv's weights and bias
//  upcast_f16  f16 activations computed in f32 (casts at the graph's edges)
//  remove_dead  nodes no graph output depends on
#pragma once
#include <map>
#include <string>

#include "graph/graph.h"

namespace kgen::graph {

// Symbols not in `sizes` become 1. Throws when a given size contradicts a
// fixed dimension.
void specialise(Graph& g, const std::map<std::string, Shape>& input_shapes);
// Largest output (elements) folded on the host unless the handler folds always.
inline constexpr int64_t kFoldLimit = int64_t(1) << 24;
void infer(Graph& g);
int fold_batchnorm(Graph& g);
int upcast_f16(Graph& g);
int remove_dead(Graph& g);

}  // namespace kgen::graph
