// Reads the textual IR written by printer.h back into kernels. Every
// instruction goes through ir::Builder, so parsed IR is checked by exactly the
// type rules that built it. Values in the text may be any numbers or names
// (%7, %gid; each defined once); the parser renumbers them densely in
// definition order.
// Comments run from "//" to the end of the line. Errors are ir::Error with a
// SourceLoc naming `filename` and the line and column of the offending token.
#pragma once
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace kgen::ir {

// Exactly one kernel.
Kernel parse_kernel(std::string_view text, std::string_view filename = "<ir>");
// Zero or more kernels, one after the other.
std::vector<Kernel> parse_module(std::string_view text, std::string_view filename = "<ir>");

}  // namespace kgen::ir
