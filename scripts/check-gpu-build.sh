#!/usr/bin/env bash
# Checks that the GPU machines' build (no LLVM, no vendor BLAS) still builds.
# It is the configuration scripts/device-check.sh runs with. CI has no GPU, so
# this only checks that it builds the CLI and the CUDA tests, links no LLVM,
# and says why there is no cpu device: it stays buildable without a GPU at hand.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKGEN_WITH_CPU_JIT=OFF -DKGEN_WITH_BENCH=OFF \
  -DKGEN_WITH_SHADERC=OFF > /dev/null
cmake --build "$B" --target kgen test_cuda_conformance ops_op_conformance_test
if ldd "$B/tools/kgen" | grep -Eq 'libLLVM|libclang-cpp'; then
  echo "check-gpu-build: $B/tools/kgen links LLVM" >&2
  exit 1
fi
if "$B/tools/kgen" op matmul --shape 8x8x8 --device cpu 2> "$B/cpu-error.txt"; then
  echo "check-gpu-build: a build without the C++ JIT ran on the cpu device" >&2
  exit 1
fi
grep -q "kgen was built without the C++ JIT" "$B/cpu-error.txt"
"$B/tests/cuda/test_cuda_conformance" > /dev/null  # without a GPU: "no CUDA device", checks nothing
echo "check-gpu-build: $B builds without LLVM (kgen, CUDA conformance, op conformance)"
