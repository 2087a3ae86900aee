#!/bin/bash
# Runs the CUDA checks and GPU timings in one call on a machine with an NVIDIA GPU.
# Such a machine need not have LLVM 19, so the binaries come from a build
# without the C++ JIT, made beforehand and copied there:
#
#   cmake -S . -B build-gpu -G Ninja -DKGEN_WITH_CPU_JIT=OFF -DKGEN_WITH_BENCH=OFF -DKGEN_WITH_SHADERC=OFF
#   ninja -C build-gpu kgen test_cuda_conformance ops_op_conformance_test \
#         ops_matmul_test ops_quant_test ops_conv_test ops_attention_test ops_elementwise_test \
#         ops_rowwise_test ops_reduce_test ops_scan_test ops_layout_test
#   bash scripts/device-check.sh [build-gpu]        # on the GPU machine
#
# Runs, in this order: every registered kernel and elementwise (op, dtype) on
# CUDA against the interpreter; every op family's GPU test cases (in parallel:
# NVRTC compiles are CPU-bound); then `bench/compare_frameworks.py --device cuda`
# (kgen against PyTorch on the same GPU), the quantized GEMVs' bandwidth against
# a device-to-device copy, and `kgen tune` of a few shapes on CUDA.
# Logs go to $OUT (or /tmp/kgen-device); the summary is printed last.
# DEVICE_TUNE=0 leaves out the tuning runs (a few minutes).
set -u
B=${1:-build-gpu}
O=${OUT:-/tmp/kgen-device}
L=/tmp/kgen-device-logs  # per-test logs, joined into $O/tests.log (one file to collect)
mkdir -p "$O" "$L"
export KGEN_CACHE_DIR=/tmp/kgen-device-cache
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ldd "$B/tools/kgen" | grep -q 'nvrtc.*not found'; then
  nv=$(find / -xdev -name 'libnvrtc.so.13' 2>/dev/null | head -1)
  [ -n "$nv" ] && export LD_LIBRARY_PATH=$(dirname "$nv"):$LD_LIBRARY_PATH
fi
summary=$O/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  ldd "$B/tools/kgen" | grep -E 'nvrtc|not found'
  ls /usr/local/cuda/include/cuda_fp16.h
  "$B/tools/kgen" devices
} 2>&1 | tee "$O/env.txt"

# 1. Conformance: kernels and ops against the interpreter / C++ references.
t0=$(date +%s)
run_test() {  # name binary [doctest filter]
  local name=$1 bin=$2 filt=${3:-}
  local args=(--duration=true)
  [ -n "$filt" ] && args+=(-tc="$filt")
  timeout "${TEST_TIMEOUT:-200}" "$B/tests/$bin" "${args[@]}" >"$L/test_$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^\[doctest\] (test cases|assertions)' "$L/test_$name.log" | tr '\n' ' ')"
}
run_test cuda_conformance cuda/test_cuda_conformance &
run_test op_conformance ops/ops_op_conformance_test '*GPU targets*' &
run_test matmul ops/ops_matmul_test '*GPU devices*' &
run_test attention ops/ops_attention_test '*GPU targets*,*GPU devices*' &
run_test conv ops/ops_conv_test '*GPU devices*' &
run_test scan ops/ops_scan_test '*GPU targets*' &
run_test elementwise ops/ops_elementwise_test '*GPU devices*' &
run_test rowwise ops/ops_rowwise_test '*GPU devices*' &
run_test reduce ops/ops_reduce_test '*GPU devices*' &
run_test layout ops/ops_layout_test '*GPU devices*' &
run_test quant ops/ops_quant_test '*GPU devices*' &
wait
say "tests took $(($(date +%s) - t0)) s"
for f in "$L"/test_*.log; do
  n=$(basename "$f" .log)
  say "$n: $(grep -E '^\[doctest\] (test cases|assertions)' "$f" | tr -s ' ' | tr '\n' ' ')"
  grep -m 8 -E 'ERROR|FATAL|CHECK\(|skipped' "$f" | cut -c1-300 | sed 's/^/    /' | tee -a "$summary"
done
cat "$L"/test_*.log >"$O/tests.log"

# 2. Timings: kgen against PyTorch on the same GPU (same method on both sides).
python3 bench/compare_frameworks.py --kgen "$B/tools/kgen" --device cuda 2>&1 | tee "$O/perf.txt"
{
  echo "--- quantized GEMV 1x4096x4096 on CUDA (weights' bytes / time) and a device copy"
  python3 - <<'EOF'
import torch, time
x = torch.empty(1 << 28, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize(); ts = []
for _ in range(20):
    t = time.perf_counter(); y.copy_(x); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
ts.sort(); print(f"device copy 256 MiB: {2 * x.numel() / ts[10] / 1e9:.0f} GB/s (read + write)")
EOF
  for f in 2 8 12 14; do  # Q4_0 Q8_0 Q4_K Q6_K
    "$B/tools/kgen" op qmatmul --shape 1x4096x4096 --attrs format=$f --device cuda --json 2>&1 | tail -1
  done
  for s in 1x4096x4096 64x4096x4096; do
    "$B/tools/kgen" op qmatmul --shape $s --attrs format=2 --device cuda --json --no-check 2>&1 | tail -1
  done
  # The gated MLP as matmul dispatches its products (the heuristic) and on one tile for all three.
  for g in 2048x1024x11008 64x1024x11008 1x1024x11008; do
    "$B/tools/kgen" op gated_mlp --shape $g --device cuda --json --no-check 2>&1 | tail -1
    "$B/tools/kgen" op gated_mlp --shape $g --device cuda --json --no-check --variant "impl=2 wg=16 tm=8 tn=8 tk=16 vec=2" 2>&1 | tail -1
  done
  # The 128x128 line tiles on odd sizes (interior and edge tiles), checked.
  for v in "vec=1 tk=16" "vec=2 tk=8"; do
    for tb in 0 1; do
      "$B/tools/kgen" op matmul --shape 1000x1030x1100 --attrs trans_b=$tb --device cuda --json \
        --variant "impl=2 wg=16 tm=8 tn=8 $v" 2>&1 | tail -1
    done
  done
} 2>&1 | tee -a "$O/perf.txt"
# Every candidate of a few shapes (progress lines to tune.txt; the winners here);
# DEVICE_TUNE=0 skips this part when time is short.
[ "${DEVICE_TUNE:-1}" = 0 ] || for t in "conv2d 1x64x56x56x64x3x3 pad_h=1,pad_w=1" "conv2d 8x64x56x56x64x3x3 pad_h=1,pad_w=1" \
         "attention 1x8x1024x64 causal=0" "attention 1x8x1024x64 causal=1" "matmul 2048x2048x2048" \
         "matmul 1024x1024x1024" "matmul 8x11008x4096 trans_b=1" "matmul 16x11008x4096 trans_b=1" "matmul 64x11008x4096 trans_b=1" \
         "matmul 128x11008x4096 trans_b=1" "qmatmul 64x4096x4096 format=2"; do
  set -- $t
  timeout "${TUNE_TIMEOUT:-60}" "$B/tools/kgen" tune "$1" --shape "$2" ${3:+--attrs "$3"} --device cuda --no-store --no-check \
    --min-time 0.03 >>"$O/tune.txt" 2>&1
done
grep -E '^\[kgen\] tuning|^best|^heuristic' "$O/tune.txt"
echo "=== summary"
cat "$summary"
