#!/bin/bash
# Builds and runs the test suite under AddressSanitizer and UndefinedBehaviorSanitizer.
# The host code (IR, DSL, codegen, interpreter, runtimes, ops, CLI) is instrumented;
# the JIT-compiled kernels and the system libraries (LLVM, Mesa, wgpu-native)
# are not. UB aborts the test that hits it. Not part of CI: the build alone takes
# ~45 minutes on 2 cores and the tests ~2x their usual time.
#
#   bash scripts/sanitize.sh [build-dir]          # default build-asan
#   SANITIZE_LEAKS=1 bash scripts/sanitize.sh     # LeakSanitizer too (reports
#                                                 # the drivers' own leaks as well)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build-asan}
F="-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKGEN_WITH_BENCH=OFF -DKGEN_TEST_TIMEOUT=5400 \
  -DCMAKE_CXX_FLAGS_RELEASE="$F" -DCMAKE_C_FLAGS_RELEASE="$F" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$B" -j"$(nproc)"
export ASAN_OPTIONS=detect_leaks=${SANITIZE_LEAKS:-0}
export UBSAN_OPTIONS=print_stacktrace=1
# cli_bench_list needs the benchmarks, which this build leaves out.
cd "$B" && ctest -j"$(nproc)" --output-on-failure -E '^cli_bench_list$'
