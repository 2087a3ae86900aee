#!/usr/bin/env python3
"""Exact reference outputs of an ONNX model with the `onnx` package's reference
evaluator (PyPI onnx), for models whose onnxruntime outputs are not exact:
onnxruntime's u8·s8 kernels on AVX2 saturate 16-bit pair sums, so its
QLinearConv results differ from the operator's definition by up to tens of
quantization steps. Adds numpy definitions of onnxruntime's com.microsoft
QLinearAdd and QLinearGlobalAveragePool (as onnxruntime defines them).

    python3 scripts/onnx-reference.py MODEL.onnx IN_DIR OUT_DIR
reads IN_DIR/input_N.pb and writes OUT_DIR/output_N.pb."""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun


def requantize(v, scale, zp):
    info = np.iinfo(zp.dtype)
    return np.clip(np.rint(v / scale) + zp.astype(np.float32), info.min, info.max).astype(zp.dtype)


class QLinearAdd(OpRun):
    op_domain = "com.microsoft"

    def _run(self, a, a_s, a_zp, b, b_s, b_zp, c_s, c_zp=None):
        c_zp = np.uint8(0) if c_zp is None else c_zp
        real = (a.astype(np.float32) - a_zp.astype(np.float32)) * a_s + (b.astype(np.float32) - b_zp.astype(np.float32)) * b_s
        return (requantize(real.astype(np.float32), np.float32(c_s), c_zp),)


class QLinearGlobalAveragePool(OpRun):
    op_domain = "com.microsoft"

    def _run(self, x, x_s, x_zp, y_s, y_zp, channels_last=0):
        real = (x.astype(np.float32) - x_zp.astype(np.float32)) * x_s
        mean = real.mean(axis=(2, 3), keepdims=True) if not channels_last else real.mean(axis=(1, 2), keepdims=True)
        return (requantize(mean.astype(np.float32), np.float32(y_s), y_zp),)


def main():
    model, in_dir, out_dir = sys.argv[1:4]
    m = onnx.load(model)
    # The evaluator implements recent versions only; the quantized ops used by
    # these models mean the same at opset 21.
    for op in m.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 21:
            op.version = 21
    # Squeeze/Unsqueeze take their axes as an input since opset 13.
    for n in m.graph.node:
        axes = [a for a in n.attribute if a.name == "axes"]
        if n.op_type in ("Squeeze", "Unsqueeze") and axes:
            name = n.name + "_axes"
            m.graph.initializer.append(numpy_helper.from_array(np.array(axes[0].ints, np.int64), name))
            n.input.append(name)
            n.attribute.remove(axes[0])
    sess = ReferenceEvaluator(m, new_ops=[QLinearAdd, QLinearGlobalAveragePool])
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    feeds = {}
    for k, name in enumerate(names):
        t = onnx.TensorProto()
        with open(os.path.join(in_dir, f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)
    outs = sess.run(None, feeds)
    os.makedirs(out_dir, exist_ok=True)
    for k, (o, vi) in enumerate(zip(outs, m.graph.output)):
        with open(os.path.join(out_dir, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(o), vi.name).SerializeToString())


if __name__ == "__main__":
    main()
