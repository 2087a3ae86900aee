// The translator without clang (KGEN_WITH_CPU_JIT=OFF): every entry point throws.
#include <stdexcept>

#include "translate/translate.h"

namespace kgen::translate {

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("kgen translate needs clang: this build has KGEN_WITH_CPU_JIT=OFF");
}
}  // namespace

const char* builtins_header() { return ""; }
std::vector<ir::Kernel> translate_source(const std::string&, const std::string&, const Options&) { unavailable(); }
std::vector<ir::Kernel> translate_file(const std::string&, const Options&) { unavailable(); }
ir::Kernel translate_kernel(const std::string&, const std::string&, const Options&) { unavailable(); }

}  // namespace kgen::translate
