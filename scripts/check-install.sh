#!/usr/bin/env bash
# Checks that kgen works as an installed CMake package: installs a built tree
# (default: build) into a temporary prefix, then configures, builds and runs
# examples/saxpy-consumer against it with find_package(kgen). The tree must
# be built already (scripts/run-tests.sh builds it); this builds only the example.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kgen-check-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cmake --install "$B" --prefix "$TMP/prefix" > "$TMP/install.log" || { cat "$TMP/install.log" >&2; exit 1; }
echo "check-install: installed $B into $TMP/prefix ($(grep -c 'Installing:' "$TMP/install.log") files)"
cmake -S examples/saxpy-consumer -B "$TMP/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TMP/prefix" > "$TMP/configure.log" || { cat "$TMP/configure.log" >&2; exit 1; }
cmake --build "$TMP/consumer"
"$TMP/consumer/saxpy_consumer"
echo "check-install: examples/saxpy-consumer builds and runs against the installed kgen"
