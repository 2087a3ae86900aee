#!/usr/bin/env python3
"""Runs the benchmark shapes with kgen, PyTorch and onnxruntime (the
latter two from PyPI, each only when installed) on the same thread counts and
prints one comparison table (median ms per run; ratio = framework ms / kgen
ms, so > 1 means kgen is faster).

    python3 bench/compare_frameworks.py [--kgen build/tools/kgen] [--threads 1 2] [--only sgemm,softmax]
    python3 bench/compare_frameworks.py --device cuda    # kgen's CUDA device against PyTorch on the GPU

On the GPU both sides are timed the same way, host wall time of one call up to
a device synchronize (launch included), and PyTorch's fp32 products run in
true fp32 (TF32 off), as kgen's do.

kgen runs through `kgen op NAME --shape ... --json --no-check` (its dispatch:
tuned variant if `kgen tune` stored one, else the heuristic).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

try:
    import torch
except ImportError:
    torch = None
try:
    import onnxruntime as ort
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    ort = None


# name, kgen op, kgen shape, kgen attrs, builder of (inputs dict, torch fn, onnx graph builder)
def cases():
    def matmul(M, N, K, trans_b=0):
        def inputs(rng):
            a = rng.standard_normal((M, K), dtype=np.float32)
            b = rng.standard_normal((N, K) if trans_b else (K, N), dtype=np.float32)
            return [a, b]
        def tfn(a, b):
            return a @ (b.T if trans_b else b)
        def graph():
            bshape = [N, K] if trans_b else [K, N]
            nodes = []
            bname = "b"
            if trans_b:
                nodes.append(helper.make_node("Transpose", ["b"], ["bt"], perm=[1, 0]))
                bname = "bt"
            nodes.append(helper.make_node("MatMul", ["a", bname], ["y"]))
            return nodes, [("a", [M, K]), ("b", bshape)], [("y", [M, N])]
        attrs = "trans_b=1" if trans_b else ""
        return ("matmul", f"{M}x{N}x{K}", attrs, inputs, tfn, graph)

    def rowop(op, R, C):
        def inputs(rng):
            x = rng.standard_normal((R, C), dtype=np.float32)
            if op == "softmax":
                return [x]
            w = rng.standard_normal((C,), dtype=np.float32)
            if op == "rmsnorm":
                return [x, w]
            return [x, w, rng.standard_normal((C,), dtype=np.float32)]
        def tfn(*xs):
            if op == "softmax":
                return torch.softmax(xs[0], -1)
            if op == "rmsnorm":
                return torch.nn.functional.rms_norm(xs[0], (C,), xs[1], 1e-5)
            return torch.nn.functional.layer_norm(xs[0], (C,), xs[1], xs[2], 1e-5)
        def graph():
            if op == "softmax":
                return [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [R, C])], [("y", [R, C])]
            if op == "rmsnorm":
                return ([helper.make_node("RMSNormalization", ["x", "w"], ["y"], axis=-1, epsilon=1e-5)],
                        [("x", [R, C]), ("w", [C])], [("y", [R, C])])
            return ([helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"], axis=-1, epsilon=1e-5)],
                    [("x", [R, C]), ("w", [C]), ("b", [C])], [("y", [R, C])])
        return (op, f"{R}x{C}", "", inputs, tfn, graph)

    def conv(N, C, H, W, OC, k):
        def inputs(rng):
            return [rng.standard_normal((N, C, H, W), dtype=np.float32),
                    rng.standard_normal((OC, C, k, k), dtype=np.float32)]
        def tfn(x, w):
            return torch.nn.functional.conv2d(x, w, padding=k // 2)
        def graph():
            p = k // 2
            return ([helper.make_node("Conv", ["x", "w"], ["y"], pads=[p, p, p, p])],
                    [("x", [N, C, H, W]), ("w", [OC, C, k, k])], [("y", [N, OC, H, W])])
        return ("conv2d", f"{N}x{C}x{H}x{W}x{OC}x{k}x{k}", f"pad_h={k//2},pad_w={k//2}", inputs, tfn, graph)

    def attention(B, H, S, D, causal, Hkv=None, Skv=None):
        # Grouped-query attention (Hkv < H) and S != Skv (decode). kgen aligns
        # a causal mask's ends (query i sees keys <= i + Skv - S), PyTorch's
        # is_causal its starts: they agree for S == Skv, and for one query
        # row causal is no mask at all, so the peers get is_causal only there.
        Hkv, Skv = Hkv or H, Skv or S
        peer_causal = bool(causal) and S == Skv
        def inputs(rng):
            return [rng.standard_normal(shape, dtype=np.float32)
                    for shape in ((B, H, S, D), (B, Hkv, Skv, D), (B, Hkv, Skv, D))]
        def tfn(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=peer_causal, enable_gqa=Hkv != H)
        def graph():
            # ONNX's own Attention (opset 23): 4-D (B, heads, S, D) inputs, kv
            # heads dividing the query heads, scale 1/sqrt(D) by default.
            return ([helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=int(peer_causal))],
                    [("q", [B, H, S, D]), ("k", [B, Hkv, Skv, D]), ("v", [B, Hkv, Skv, D])], [("y", [B, H, S, D])])
        shape = f"{B}x{H}x{S}x{D}" + (f"x{Hkv}x{Skv}" if (Hkv, Skv) != (H, S) else "")
        return ("attention", shape, f"causal={causal}", inputs, tfn, graph)

    return [
        ("sgemm 1024^3", *matmul(1024, 1024, 1024)),
        ("sgemm 4096^3", *matmul(4096, 4096, 4096)),
        ("sgemm 2048^3", *matmul(2048, 2048, 2048)),
        ("gemv 1x4096x4096", *matmul(1, 4096, 4096, trans_b=1)),
        ("linear 64x11008x4096 (Bᵀ)", *matmul(64, 11008, 4096, trans_b=1)),
        ("softmax 4096x4096", *rowop("softmax", 4096, 4096)),
        ("rmsnorm 2048x1024", *rowop("rmsnorm", 2048, 1024)),
        ("layernorm 2048x1024", *rowop("layernorm", 2048, 1024)),
        ("conv 3x3 64->64 56x56 b1", *conv(1, 64, 56, 56, 64, 3)),
        ("conv 3x3 64->64 56x56 b8", *conv(8, 64, 56, 56, 64, 3)),
        ("attention B1H8S1024D64", *attention(1, 8, 1024, 64, 0)),
        ("attention B1H8S1024D64 causal", *attention(1, 8, 1024, 64, 1)),
        ("attention B1H32S1024D128 causal", *attention(1, 32, 1024, 128, 1)),
        ("attention B1H32/8S512D128 causal", *attention(1, 32, 512, 128, 1, 8)),
        ("attention decode H32/8 Skv2048 D128", *attention(1, 32, 1, 128, 1, 8, 2048)),
        ("attention B8H12S128D64", *attention(8, 12, 128, 64, 0)),
    ]


def median_ms(fn, min_reps=5, min_s=0.3):
    fn()
    ts = []
    t_end = time.perf_counter() + min_s
    while len(ts) < min_reps or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def run_kgen(kgen, op, shape, attrs, threads, device):
    cmd = [kgen, "op", op, "--shape", shape, "--threads", str(threads), "--json", "--no-check", "--device", device]
    if attrs:
        cmd += ["--attrs", attrs]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(r.stdout.strip().splitlines()[-1])["run_ms"], ""


def run_torch(inputs, tfn, threads, device):
    if torch is None or tfn is None:
        return None
    if device == "cuda":
        if not torch.cuda.is_available():
            return None
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ts = [torch.from_numpy(x).cuda() for x in inputs]
        def call():
            tfn(*ts)
            torch.cuda.synchronize()
        with torch.no_grad():
            return median_ms(call)
    torch.set_num_threads(threads)
    ts = [torch.from_numpy(x) for x in inputs]
    with torch.no_grad():
        return median_ms(lambda: tfn(*ts))


def run_ort(inputs, graph, threads):
    if ort is None or graph is None:
        return None
    nodes, ins, outs = graph()
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in ins],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # op or opset not supported by this onnxruntime
        print(f"  onnxruntime: {str(e).splitlines()[0][:100]}", file=sys.stderr)
        return None
    feed = {n: x for (n, _), x in zip(ins, inputs)}
    return median_ms(lambda: sess.run(None, feed))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--kgen", default=os.path.join(here, "..", "build", "tools", "kgen"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="kgen device (cuda: PyTorch on the GPU)")
    a = ap.parse_args()
    if a.device == "cuda":
        a.threads = [0]  # one GPU; the column shows 0
    print(f"torch: {torch.__version__ if torch else 'not installed'}; "
          f"onnxruntime: {ort.__version__ if ort else 'not installed'}")
    rng = np.random.default_rng(0)
    fmt = "{:<36} {:>3} {:>10} {:>10} {:>10} {:>8} {:>8}"
    print(fmt.format("case", "thr", "kgen ms", "torch ms", "ort ms", "torch/k", "ort/k"))
    for name, op, shape, attrs, inputs_fn, tfn, graph in cases():
        if a.only and not any(s in name for s in a.only.split(",")):
            continue
        if "4096^3" in name and a.device == "cpu" and not a.only:
            continue  # ~1 s per run on 2 cores: a GPU shape
        inputs = inputs_fn(rng)
        for t in a.threads:
            k, err = run_kgen(a.kgen, op, shape, attrs, t, a.device)
            tt = run_torch(inputs, tfn, t, a.device)
            oo = run_ort(inputs, graph, t) if a.device == "cpu" else None
            f = lambda v: "-" if v is None else f"{v:.3f}"
            r = lambda v: "-" if v is None or k is None else f"{v / k:.2f}"
            print(fmt.format(name, t, f(k), f(tt), f(oo), r(tt), r(oo)) + (f"  ({err[:60]})" if err else ""), flush=True)


if __name__ == "__main__":
    main()
