#!/usr/bin/env bash
# Idempotent install of every build/test dependency of kgen on Debian 12.
# A quick no-op when everything is present (dpkg query only, no network).
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19
  doctest-dev libbenchmark-dev libcli11-dev zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  # Vulkan target: loader + headers, lavapipe (CI's Vulkan device), shaderc/glslang/SPIRV-Tools static libs
  libvulkan-dev mesa-vulkan-drivers libshaderc-dev glslang-dev spirv-tools
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
