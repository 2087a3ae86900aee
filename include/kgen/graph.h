// Models: graph::load_onnx reads an ONNX file into a graph::Graph; a
// graph::PreparedModel prepares it once on a device (shapes specialised, kernels
// compiled through the kernel cache, memory planned) and each run() replays
// it on new inputs (graph::Tensor).
#pragma once
#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/prepared_model.h"
