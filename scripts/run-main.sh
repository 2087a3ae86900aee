#!/usr/bin/env bash
# Main job: install, build, run real models end to end on the CPU: MNIST (ONNX)
# against its reference outputs and on digit images, a llama (stories260K,
# GGUF) generating text, then the sample kernels and a few ops, each checked. The model is checked against its test data,
# the samples against the reference interpreter, the ops against their C++
# references; all print timings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target run_samples kgen
MNIST=samples/models/mnist-8
for set in 0 1 2; do
  ./build/tools/kgen run $MNIST/model.onnx --test-data $MNIST/test_data_set_$set
done
for digit in 0 3 5 7; do
  ./build/tools/kgen run $MNIST/model.onnx --image $MNIST/images/$digit.jpg --iters 0 | grep -E '^#1|top'
done
# Greedy text from BOS (its first sentence is the model's published output),
# then a sampled continuation of a prompt.
STORIES=samples/models/stories260K/stories260K.gguf
./build/tools/kgen run $STORIES -n 48 --temp 0
./build/tools/kgen run $STORIES --prompt "Once upon a time, a little dog" -n 64 --seed 1
./build/samples/run_samples
# A few ops of the op library through the CLI: checked against their C++
# reference, timed, with the variant dispatch chose.
for op in "matmul --shape 512x512x512" "attention --shape 1x8x512x64 --attrs causal=1" \
          "conv2d --shape 1x64x56x56x64x3x3 --attrs pad_h=1,pad_w=1" "softmax --shape 1024x4096"; do
  echo
  # shellcheck disable=SC2086
  ./build/tools/kgen op $op
done
