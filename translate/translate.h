// The plain C++ front end: reads a C++ file with clang (in process), finds
// the functions marked KGEN_KERNEL (translate/kgen_kernel.h) and lowers each
// to an ir::Kernel, so every pass, target and check applies unchanged.
//
//   translate::Options opt;
//   opt.defines = {"TILE=16"};
//   ir::Kernel k = translate::translate_kernel("samples/cpp/saxpy.cpp", "saxpy", opt);
//
// Anything outside the supported subset (recursion, virtual calls,
// exceptions, heap allocation, pointers stored in memory, unsupported types)
// is an ir::Error at the construct's file:line:col saying what and why.
#pragma once
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kgen::translate {

// How clang reads the file.
struct Options {
  std::vector<std::string> include_dirs;  // -I
  std::vector<std::string> defines;       // -D: "NAME" or "NAME=VALUE"
  std::string std = "c++20";              // -std=
};

// Every kernel of the file, in source order. Throws ir::Error on a parse
// error or a construct outside the subset; std::runtime_error when the file
// cannot be read.
std::vector<ir::Kernel> translate_file(const std::string& path, const Options& opt = {});

// The same for source text; `filename` names it in locations.
std::vector<ir::Kernel> translate_source(const std::string& code, const std::string& filename,
                                         const Options& opt = {});

// The kernel called `name` in the file; throws listing the kernels found
// when there is none of that name. An empty name accepts a file with
// exactly one kernel.
ir::Kernel translate_kernel(const std::string& path, const std::string& name, const Options& opt = {});

// The builtins header's text, as the translator sees it (for tools that
// write it next to a file compiled on the host).
const char* builtins_header();

}  // namespace kgen::translate
