// Helpers the node handlers share: numpy broadcasting, axis normalisation,
// attribute-or-input reads that changed form across opsets.
#pragma once
#include <optional>
#include <vector>

#include "graph/handler.h"

namespace kgen::graph {

// numpy's broadcast of shapes (right-aligned, size-1 axes repeat); throws
// naming the node when they do not broadcast.
Shape broadcast_shapes(const InferCtx& c, const std::vector<Shape>& shapes);
// axis in [-rank, rank) -> [0, rank); throws naming the node otherwise.
int64_t normalize_axis(const InferCtx& c, int64_t axis, int64_t rank);
// Axes given as an attribute (older opsets) or as constant input `input` (newer).
std::optional<std::vector<int64_t>> axes_attr_or_input(const InferCtx& c, const char* attr, int input);
// Row-major strides of a shape, in elements.
std::vector<int64_t> strides_of(const Shape& s);

}  // namespace kgen::graph
