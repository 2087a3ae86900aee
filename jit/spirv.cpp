#include "jit/spirv.h"

#include <cstdio>
#include <cstring>
#include <memory>

#ifdef KGEN_HAVE_SHADERC
#include <shaderc/shaderc.h>
#include <spirv-tools/libspirv.h>
#endif

namespace kgen::jit {

namespace {

std::string numbered(std::string_view src) {
  std::string out;
  int n = 1;
  size_t pos = 0;
  while (pos <= src.size()) {
    size_t nl = src.find('\n', pos);
    if (nl == std::string_view::npos) nl = src.size();
    char buf[16];
    std::snprintf(buf, sizeof buf, "%4d| ", n++);
    out += buf;
    out += src.substr(pos, nl - pos);
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

}  // namespace

SpirvCompileError::SpirvCompileError(std::string l, std::string src)
    : std::runtime_error("kgen: GLSL -> SPIR-V compile failed:\n" + l + "--- generated GLSL ---\n" + numbered(src)),
      log(std::move(l)),
      source(std::move(src)) {}

#ifdef KGEN_HAVE_SHADERC

bool spirv_available() { return true; }

std::vector<uint32_t> compile_glsl(std::string_view glsl, const std::string& name) {
  // One process-wide compiler: shaderc documents concurrent compiles on one
  // compiler object as safe, and initialising glslang per call costs time.
  static shaderc_compiler_t cc = shaderc_compiler_initialize();
  std::unique_ptr<shaderc_compile_options, void (*)(shaderc_compile_options_t)> opt(shaderc_compile_options_initialize(),
                                                                                    shaderc_compile_options_release);
  shaderc_compile_options_set_target_env(opt.get(), shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_target_spirv(opt.get(), shaderc_spirv_version_1_5);
  // The driver optimises; spirv-opt would only add latency here.
  shaderc_compile_options_set_optimization_level(opt.get(), shaderc_optimization_level_zero);
  std::unique_ptr<shaderc_compilation_result, void (*)(shaderc_compilation_result_t)> res(
      shaderc_compile_into_spv(cc, glsl.data(), glsl.size(), shaderc_compute_shader, name.c_str(), "main", opt.get()),
      shaderc_result_release);
  if (!res || shaderc_result_get_compilation_status(res.get()) != shaderc_compilation_status_success)
    throw SpirvCompileError(res ? shaderc_result_get_error_message(res.get()) : "shaderc returned no result\n", std::string(glsl));
  const char* bytes = shaderc_result_get_bytes(res.get());
  size_t n = shaderc_result_get_length(res.get());
  std::vector<uint32_t> words(n / 4);
  std::memcpy(words.data(), bytes, n);
  return words;
}

std::string validate_spirv(const std::vector<uint32_t>& words) {
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
  spv_const_binary_t bin{words.data(), words.size()};
  spv_diagnostic diag = nullptr;
  spv_result_t r = spvValidate(ctx, &bin, &diag);
  std::string msg;
  if (r != SPV_SUCCESS) msg = diag && diag->error ? diag->error : "spirv-val failed (code " + std::to_string(int(r)) + ")";
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  return msg;
}

std::string disassemble_spirv(const std::vector<uint32_t>& words) {
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
  spv_text text = nullptr;
  spv_diagnostic diag = nullptr;
  spv_result_t r = spvBinaryToText(ctx, words.data(), words.size(),
                                   SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT, &text, &diag);
  std::string out;
  if (r == SPV_SUCCESS && text) out.assign(text->str, text->length);
  else out = std::string("; disassembly failed: ") + (diag && diag->error ? diag->error : "?") + "\n";
  spvTextDestroy(text);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  return out;
}

#else

bool spirv_available() { return false; }
static const char* kNoShaderc = "kgen was built without shaderc (install libshaderc-dev glslang-dev spirv-tools)";
std::vector<uint32_t> compile_glsl(std::string_view, const std::string&) { throw std::runtime_error(kNoShaderc); }
std::string validate_spirv(const std::vector<uint32_t>&) { throw std::runtime_error(kNoShaderc); }
std::string disassemble_spirv(const std::vector<uint32_t>&) { throw std::runtime_error(kNoShaderc); }

#endif

}  // namespace kgen::jit
