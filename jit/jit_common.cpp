// The parts of the C++ JIT's interface that need no LLVM: shared by the real
// JIT (jit.cpp) and the build without it (jit_unavailable.cpp).
#include <cstdio>

#include "jit/jit.h"

namespace kgen::jit {

std::string number_lines(std::string_view src) {
  std::string out;
  int n = 1;
  size_t pos = 0;
  while (pos < src.size()) {
    size_t e = src.find('\n', pos);
    if (e == std::string_view::npos) e = src.size();
    char num[16];
    std::snprintf(num, sizeof num, "%4d| ", n++);
    out += num;
    out.append(src.substr(pos, e - pos));
    out += '\n';
    pos = e + 1;
  }
  return out;
}

CompileError::CompileError(std::string diag, std::string src)
    : std::runtime_error("kgen jit: C++ compile failed:\n" + diag + "--- generated source ---\n" + number_lines(src)),
      diagnostics(std::move(diag)),
      source(std::move(src)) {}

}  // namespace kgen::jit
