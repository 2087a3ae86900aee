// Helpers for DSL tests: catching the ir::Error a DSL snippet throws, and
// listing the ops a kernel recorded.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dsl/dsl.h"

namespace kgen::dsl::test {

inline ir::Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ir::Error& e) {
    return e;
  }
  FAIL("expected an ir::Error");
  return ir::Error({}, "");
}

inline bool loc_is_here(const ir::SourceLoc& loc, const char* file, int line) {
  return loc.known() && std::string(loc.file) == file && int(loc.line) == line;
}

// The ops of the kernel body in program order (nested blocks flattened).
inline std::vector<ir::Op> ops_of(const ir::Block& b) {
  std::vector<ir::Op> ops;
  ir::walk(b, [&](const ir::Instr& in) { ops.push_back(in.op); });
  return ops;
}

}  // namespace kgen::dsl::test

namespace kgen::dsl::test {
// Runs `f` (which builds a kernel and sets `line` to __LINE__ on the offending
// statement) and checks it throws an ir::Error containing `text` located at
// `line` of the calling file. Not a macro: locations recorded inside macro
// arguments collapse to the macro's line.
inline void expect_dsl_error(const std::string& text, const int& line, const std::function<void()>& f,
                             std::source_location here = std::source_location::current()) {
  ir::Error e = error_of(f);
  INFO("called from line ", here.line(), "; got: ", std::string(e.what()), "; expected line ", line);
  CHECK(loc_is_here(e.loc, here.file_name(), line));
  CHECK(e.message.find(text) != std::string::npos);
}
}  // namespace kgen::dsl::test
