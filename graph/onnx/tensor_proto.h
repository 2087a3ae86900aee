// TensorProto <-> graph::Tensor: every storage form (raw_data, the typed
// repeated fields, external data), each checked against the declared shape.
#pragma once
#include <string>

#include "graph/tensor.h"

namespace onnx {
class TensorProto;
}

namespace kgen::graph {

// ONNX TensorProto.DataType -> element kind; throws ModelError naming `where`
// for types kgen does not run (string, complex, float8, int4).
ScalarKind onnx_dtype(int elem_type, const std::string& where);
int onnx_elem_type(ScalarKind k);
Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& dir, const std::string& where);
void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto& out);

}  // namespace kgen::graph
