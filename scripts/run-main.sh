#!/usr/bin/env bash
# Main job: install dependencies, build, JIT-run the sample kernels on the CPU
# and check them against the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target run_samples kgen
./build/samples/run_samples
