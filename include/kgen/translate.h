// Plain C++ kernels loaded at run time: a file of functions marked
// KGEN_KERNEL (written against kgen_kernel.h, installed beside this header)
// translated by clang in process to kernels that compile and run like DSL
// ones.
//
//   ir::Kernel k = kgen::translate::translate_kernel("saxpy.cpp", "saxpy");
//   auto ck = device->compile(k);
#pragma once
#include "translate/translate.h"
