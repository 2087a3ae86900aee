// Diagnostics switch shared by every kgen component. KGEN_DEBUG selects how
// much is reported on stderr:
//   0 (default) nothing, 1 compile times and cache hits, 2 + generated source,
//   3 + the IR after every pass.
#pragma once
#include <string>
#include <string_view>

namespace kgen::ir {

// The level from the environment variable KGEN_DEBUG, read once per process
// (an unparsable value counts as 1, so "KGEN_DEBUG=yes" still reports).
int debug_level();

// Writes "[kgen:<tag>] <msg>" to stderr when debug_level() >= level. Lines are
// written whole under a lock so that reports from several threads don't mix.
void debug_log(int level, std::string_view tag, const std::string& msg);

}  // namespace kgen::ir
