#!/usr/bin/env bash
# End to end through the kgen binary, in a fresh cache directory and tuning
# database: (1) a second process running the same op compiles nothing (every
# kernel of its plan is a disk-cache hit); (2) `kgen tune` stores a winner
# and the next `kgen op` dispatches to it ("variant_source": "tuned").
# Usage: op_cache_and_tune.sh KGEN OP SHAPE [ATTRS]
set -euo pipefail
kgen=$1 op=$2 shape=$3 attrs=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export KGEN_CACHE=1 KGEN_CACHE_DIR="$dir/cache" KGEN_TUNE_DB="$dir/tune.jsonl"
args=(op "$op" --shape "$shape" --threads 1 --json)
[ -n "$attrs" ] && args+=(--attrs "$attrs")
field() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p" <<<"$2"; }

first=$("$kgen" "${args[@]}")
second=$("$kgen" "${args[@]}")
echo "first:  $first"
echo "second: $second"
[ "$(field ok "$first")" = true ] && [ "$(field ok "$second")" = true ] || { echo "FAIL: op not ok"; exit 1; }
kernels=$(field kernels "$second")
[ "$(field cache_hits "$first")" = 0 ] || { echo "FAIL: the first process found cache entries"; exit 1; }
[ "$(field cache_hits "$second")" = "$kernels" ] || { echo "FAIL: the second process compiled something"; exit 1; }
[ "$(field variant_source "$first")" = '"heuristic"' ] || { echo "FAIL: expected the heuristic before tuning"; exit 1; }

tune_args=(tune "$op" --shape "$shape" --threads 1 --min-time 0.02)
[ -n "$attrs" ] && tune_args+=(--attrs "$attrs")
"$kgen" "${tune_args[@]}"
grep -q "\"variant\":" "$KGEN_TUNE_DB" || { echo "FAIL: nothing stored in $KGEN_TUNE_DB"; exit 1; }
tuned=$("$kgen" "${args[@]}")
echo "tuned:  $tuned"
[ "$(field variant_source "$tuned")" = '"tuned"' ] || { echo "FAIL: dispatch ignored the tuned choice"; exit 1; }
echo "PASS: second process compiled nothing ($kernels kernels from the disk cache); tuned choice dispatched"
