// WGSL validation through wgpu-native (the C library in the PyPI `wgpu` wheel),
// loaded with dlopen so every binary starts without it. Validation = creating
// the shader module (naga parse + validate) and a compute pipeline for entry
// point `main` (override and backend checks) on the first adapter wgpu finds
// (lavapipe in CI), inside a validation error scope.
#pragma once
#include <string>

namespace kgen::rt {

// True when the library loaded and a device was created; else `why` says
// what is missing (library path, adapter, device).
bool wgpu_available(std::string* why = nullptr);

// Where the library is looked for: $KGEN_WGPU_LIB, else the wheel path found
// at configure time.
std::string wgpu_library_path();

// "" when `wgsl` is accepted, else wgpu's error message. Throws
// std::runtime_error when wgpu is unavailable.
std::string validate_wgsl(const std::string& wgsl);

// Adapter description ("llvmpipe (LLVM ...) / Vulkan"), "" when unavailable.
std::string wgpu_adapter_name();

// True when the shared device was created with shader-f16 (`enable f16` in WGSL).
bool wgpu_has_shader_f16();

}  // namespace kgen::rt
