#!/usr/bin/env bash
# Idempotent install of every build/test dependency of kgen on Debian 12.
# A quick no-op when everything is present (dpkg query only, no network).
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19
  doctest-dev libbenchmark-dev libopenblas-dev libdnnl-dev libcli11-dev zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  # Vulkan target: loader + headers, lavapipe (CI's Vulkan device), shaderc/glslang/SPIRV-Tools static libs
  libvulkan-dev mesa-vulkan-drivers libshaderc-dev glslang-dev spirv-tools
  # ONNX models: protobuf + the onnx.proto classes, image decoding (stb), Graphviz for `kgen graph --svg`
  libprotobuf-dev protobuf-compiler libonnx-dev libstb-dev graphviz
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "[install-deps] installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[install-deps] all packages present"
fi

# WGSL target: the PyPI `wgpu` wheel ships wgpu-native (libwgpu_native*.so +
# webgpu.h/wgpu.h under wgpu/resources/), which kgen dlopens to validate WGSL.
# Skipped when already importable (no network). Debian's system python is
# externally managed, hence --break-system-packages where pip supports it.
if python3 -c "import wgpu" 2>/dev/null; then
  echo "[install-deps] python wgpu present"
else
  echo "[install-deps] pip installing wgpu"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends python3-pip
  fi
  PIP_FLAGS=(--quiet)
  if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then PIP_FLAGS+=(--break-system-packages); fi
  # A failed install leaves WGSL validation disabled (reported at configure time), not the build broken.
  python3 -m pip install "${PIP_FLAGS[@]}" wgpu || echo "[install-deps] WARNING: pip install wgpu failed; WGSL validation disabled"
fi
