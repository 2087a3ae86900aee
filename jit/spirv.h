// GLSL -> SPIR-V in process (shaderc, linked statically with glslang and
// SPIRV-Tools: Debian's shared libshaderc crashes), plus SPIRV-Tools'
// validator and disassembler. Built when KGEN_WITH_SHADERC is on; otherwise
// spirv_available() is false and the functions throw.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::jit {

bool spirv_available();

// what(): shaderc's log followed by the numbered source.
class SpirvCompileError : public std::runtime_error {
 public:
  SpirvCompileError(std::string log, std::string source);
  std::string log, source;
};

// Compiles a GLSL compute shader for Vulkan 1.2 (SPIR-V 1.5); throws SpirvCompileError.
std::vector<uint32_t> compile_glsl(std::string_view glsl, const std::string& name = "kernel");

// spirv-val for the Vulkan 1.2 environment: "" when valid, else the message.
std::string validate_spirv(const std::vector<uint32_t>& words);

// spirv-dis text.
std::string disassemble_spirv(const std::vector<uint32_t>& words);

}  // namespace kgen::jit
