#!/usr/bin/env bash
# Main job: install, build, run the sample kernels and a few ops on the CPU, each checked.
# The samples are checked against the reference interpreter, the ops against
# their C++ references; both print timings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target run_samples kgen
./build/samples/run_samples
# A few ops of the op library through the CLI: checked against their C++
# reference, timed, with the variant dispatch chose.
for op in "matmul --shape 512x512x512" "attention --shape 1x8x512x64 --attrs causal=1" \
          "conv2d --shape 1x64x56x56x64x3x3 --attrs pad_h=1,pad_w=1" "softmax --shape 1024x4096"; do
  echo
  # shellcheck disable=SC2086
  ./build/tools/kgen op $op
done
