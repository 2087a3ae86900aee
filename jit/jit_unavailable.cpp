// The C++ JIT's entry points in a build without LLVM (CMake
// KGEN_WITH_CPU_JIT=OFF): each throws one clear error, so a GPU-only build
// links without libLLVM / libclang-cpp and reports why the cpu device is
// missing instead of failing to load.
#include <stdexcept>

#include "jit/jit.h"

namespace kgen::jit {

namespace {
[[noreturn]] void unavailable(const char* what) {
  throw std::runtime_error(std::string("kgen jit: ") + what +
                           ": kgen was built without the C++ JIT (CMake KGEN_WITH_CPU_JIT=OFF)");
}
}  // namespace

bool cpp_jit_available() { return false; }
ObjectCode compile_to_object(std::string_view, const JitOptions&) { unavailable("compile_to_object"); }
std::shared_ptr<Module> load_object(std::string, const CompileStats&) { unavailable("load_object"); }
std::shared_ptr<Module> compile_cpp(std::string_view, const JitOptions&) { unavailable("compile_cpp"); }
void* Module::lookup(std::string_view) const { unavailable("Module::lookup"); }
Module::~Module() = default;
std::string jit_toolchain_id() { unavailable("jit_toolchain_id"); }

}  // namespace kgen::jit
