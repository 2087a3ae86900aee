// kgen's public API: write a kernel in C++ with the DSL, compile it for a
// device through the kernel cache, run it on device buffers, check it against
// the reference interpreter, run the op library's ops by name and run ONNX
// models.
//
//   find_package(kgen REQUIRED)                       # CMakeLists.txt
//   target_link_libraries(app PRIVATE kgen::kgen)
//
//   #include <kgen/kgen.h>                            # C++
//
// Namespaces: kgen::dsl (the DSL), kgen::ir (kernels, launches, the
// interpreter), kgen::rt (devices and buffers), kgen::ops (the op library),
// kgen::graph (models), kgen::translate (plain C++ kernels), and kgen itself
// for the helpers of these headers.
#pragma once
#include "kgen/device.h"  // devices, buffers, compile and launch
#include "kgen/graph.h"   // ONNX models prepared once on a device, then replayed
#include "kgen/kernel.h"  // the DSL and the reference interpreter
#include "kgen/ops.h"     // the op library (softmax, matmul, ...) by name
#include "kgen/translate.h"  // plain C++ kernels (KGEN_KERNEL) translated at run time
