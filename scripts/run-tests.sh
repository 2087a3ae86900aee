#!/usr/bin/env bash
# Whole test suite: install dependencies, build everything, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j2 -LE long
