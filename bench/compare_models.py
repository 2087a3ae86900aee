#!/usr/bin/env python3
"""Benchmarks whole ONNX models: kgen (`kgen run --json`) against onnxruntime on the CPU.

    python3 bench/compare_models.py [--models mnist-8,mnist-12] [--threads 1,2] [--iters 20]
                                    [--rounds 3] [--kgen build/tools/kgen] [--markdown]

For each model and thread count N:
  * cold start: a fresh `kgen run` process with an empty kernel cache (KGEN_CACHE_DIR = new temp
    dir): prepare_ms + first_run_ms, and the kernels it compiled;
  * warm start: fresh processes on that same cache (the median of three): prepare_ms +
    first_run_ms, cache hits, kernels compiled (should be 0), and warm start minus the steady-state
    run time;
  * steady state, alternating kgen and onnxruntime for --rounds rounds (kgen, ort, kgen, ort, ...):
    kgen's `run_ms` (median of --iters runs in a fresh process on the warm cache) and onnxruntime's
    median of --iters runs (intra_op_num_threads=N, inter_op 1, sequential, ORT_ENABLE_ALL); the
    table shows the median over rounds and ort/kgen (> 1: kgen faster).
Batch 1 runs on the model's reference inputs (test_data_set_0 or ort_reference_data_set_0), which
kgen also checks its outputs against (`ok`). Models with a symbolic batch dimension get an extra
row at a larger batch (BIG_BATCH) on random inputs (.npy, `--input NAME=FILE`), where kgen's
outputs (`--out`) are compared with onnxruntime's instead (mnist-12 has no data of its own and uses
mnist-8's: same weights). Table columns: cold/warm ms = prepare_ms + first_run_ms; compiled = kernels
compiled cold; hits / warm comp = the warm start's cache hits and compiles; warm-run ms = warm start
minus kgen's steady-state run; max abs err = kgen against the reference data (or onnxruntime). Failures print a FAIL line (with kgen's
stderr) and the other models go on. onnxruntime and onnx are pip-installed when missing.
"""
import argparse
import importlib
import json
import os
import platform
import shlex
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.environ.get("KGEN_MODELS_DIR", os.path.join(os.path.dirname(REPO), "shared", "models", "onnx"))
MODELS = ["mnist-8", "mnist-12", "mnist-8-int8-dynamic", "mobilenetv2-12-int8",
          "squeezenet1.0-fp16", "super-resolution-10"]
DATA_FALLBACK = {"mnist-12": "mnist-8"}  # same weights; SOURCES.md: it passes mnist-8's test sets
BIG_BATCH = {"mobilenetv2-12-int8": 8, "super-resolution-10": 4}
WARM_STARTS = 3  # warm start: the median of this many fresh processes
RTOL, ATOL = 1e-3, 1e-4  # kgen run's defaults, also used for the batch cross-check
# Models whose onnxruntime outputs are not exact on AVX2 (its u8·s8 kernels saturate 16-bit pair
# sums): batch 1 is checked against the ONNX reference evaluator's outputs in tests/graph/data
# (README there: kgen's f32 requantization rounding leaves up to ~1.8 on the logits), and the big
# batch is not cross-checked against onnxruntime.
EXACT_REFERENCE = {"mobilenetv2-12-int8": ("tests/graph/data/mobilenetv2-12-int8", 2.0)}


def ensure_packages():
    """Imports onnxruntime and onnx, pip-installing them first when missing (as install-deps.sh does wgpu)."""
    try:
        return importlib.import_module("onnxruntime"), importlib.import_module("onnx")
    except ImportError:
        pass
    flags = ["--quiet"]
    help_text = subprocess.run([sys.executable, "-m", "pip", "install", "--help"],
                               capture_output=True, text=True).stdout
    if "--break-system-packages" in help_text:
        flags.append("--break-system-packages")
    if os.geteuid() != 0:
        flags.append("--user")
    print("[compare_models] pip installing onnxruntime onnx", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", *flags, "onnxruntime", "onnx"], check=True)
    site.addsitedir(site.getusersitepackages())
    importlib.invalidate_caches()
    return importlib.import_module("onnxruntime"), importlib.import_module("onnx")


ort, onnx = ensure_packages()
ort.set_default_logger_severity(3)  # errors only: no warnings about initializers listed as inputs
from onnx import helper, numpy_helper  # noqa: E402


def find_model(name):
    """(model path, reference data dir or None) of a model folder under MODELS_DIR."""
    d = os.path.join(MODELS_DIR, name)
    files = sorted(f for f in os.listdir(d) if f.endswith(".onnx"))
    if len(files) != 1:
        raise RuntimeError(f"{d}: expected one .onnx file, found {files}")
    for folder in (d, os.path.join(MODELS_DIR, DATA_FALLBACK.get(name, name))):
        for sub in ("test_data_set_0", "ort_reference_data_set_0"):
            if os.path.isdir(os.path.join(folder, sub)):
                return os.path.join(d, files[0]), os.path.join(folder, sub)
    return os.path.join(d, files[0]), None


def graph_inputs(model_path):
    """[(name, numpy dtype, dims with None for symbolic)] of the model's real (non-initializer) inputs."""
    g = onnx.load(model_path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    out = []
    for i in g.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        out.append((i.name, helper.tensor_dtype_to_np_dtype(t.elem_type), dims))
    return out


def reference_inputs(model_path, data_dir):
    """{name: array} from data_dir/input_N.pb, reshaped to the model's input shapes (symbolic dim -> -1)."""
    feeds = {}
    for n, (name, dtype, dims) in enumerate(graph_inputs(model_path)):
        t = onnx.TensorProto()
        with open(os.path.join(data_dir, f"input_{n}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t).astype(dtype).reshape([d or -1 for d in dims])
    return feeds


def random_inputs(model_path, batch, tmp):
    """{name: array} of random inputs at this batch (symbolic dims), each also saved as tmp/NAME.npy."""
    rng = np.random.default_rng(0)
    feeds = {}
    for name, dtype, dims in graph_inputs(model_path):
        shape = [d or batch for d in dims]
        x = rng.random(shape, dtype=np.float32) if np.issubdtype(dtype, np.floating) else rng.integers(0, 8, shape)
        feeds[name] = x.astype(dtype)
        np.save(os.path.join(tmp, f"{name}.npy"), feeds[name])
    return feeds


def ort_session(model_path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])


def ort_median_ms(sess, feeds, iters):
    sess.run(None, feeds)  # warm-up, as kgen's first run is not in its run_ms
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def kgen_run(args, model_path, threads, iters, cache_dir, data_args):
    """One `kgen run --json` process: (report dict, or None when it printed none; error text, or "")."""
    cmd = [args.kgen, "run", model_path, "--json", "--threads", str(threads), "--iters", str(iters), *data_args]
    env = dict(os.environ, KGEN_CACHE_DIR=cache_dir)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {args.timeout} s: {shlex.join(cmd)}"
    except OSError as e:
        return None, f"cannot start {args.kgen}: {e}"
    try:
        rep = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return None, f"exit {p.returncode}: {shlex.join(cmd)}\n{p.stderr.strip()}"
    if p.returncode != 0 or not rep.get("ok", False):
        return rep, (f"wrong output (exit {p.returncode}): max_abs_err={rep.get('max_abs_err')} "
                     f"max_rel_err={rep.get('max_rel_err')}\n{p.stderr.strip()}").strip()
    return rep, ""


def cross_check(out_dir, ort_outputs):
    """Max abs error of kgen's output_N.pb against onnxruntime's outputs, and whether all are within tolerance."""
    worst, ok = 0.0, True
    for n, want in enumerate(ort_outputs):
        t = onnx.TensorProto()
        with open(os.path.join(out_dir, f"output_{n}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        got = numpy_helper.to_array(t).astype(np.float64)
        want = want.astype(np.float64)
        if got.shape != want.shape:
            return float("inf"), False
        err = np.abs(got - want)
        worst = max(worst, float(err.max(initial=0.0)))
        ok = ok and bool(np.all(err <= ATOL + RTOL * np.abs(want)))
    return worst, ok


def bench_case(args, label, model_path, threads, feeds, data_args, tmp, out_dir=None):
    """Cold, warm and alternating steady-state runs of one model at one thread count: a row, or None
    when kgen or onnxruntime could not run it. Wrong outputs give a FAIL line and a row with ok=False."""
    def fail(what):
        args.failures += 1
        print(f"FAIL {label} threads={threads}: {what}", flush=True)

    cache = tempfile.mkdtemp(prefix="kgen-cache-", dir=tmp)
    cold, err = kgen_run(args, model_path, threads, 1, cache, data_args + (["--out", out_dir] if out_dir else []))
    if err:
        fail(f"kgen (cold start) {err}")
    if cold is None:
        return None
    row = {"model": label, "threads": threads, "launches": cold["launches"], "ok": not err,
           "cold_ms": cold["prepare_ms"] + cold["first_run_ms"], "cold_compiled": cold["kernels_compiled"],
           "err": cold["max_abs_err"]}
    # Warm start: the median of WARM_STARTS fresh processes (one is at the mercy of a page-cache
    # miss or a descheduled thread on a shared VM).
    warm_ms = []
    for _ in range(WARM_STARTS):
        warm, err = kgen_run(args, model_path, threads, 1, cache, data_args)
        if warm is None:
            return fail(f"kgen (warm start) {err}")
        warm_ms.append(warm["prepare_ms"] + warm["first_run_ms"])
    row.update(warm_ms=statistics.median(warm_ms), warm_hits=warm["cache_hits"],
               warm_compiled=warm["kernels_compiled"])
    if warm["kernels_compiled"]:
        print(f"WARN {label} threads={threads}: warm start compiled {warm['kernels_compiled']} kernels", flush=True)
    try:
        sess = ort_session(model_path, threads)
        if out_dir and row["ok"]:
            row["err"], row["ok"] = cross_check(out_dir, sess.run(None, feeds))
            if not row["ok"]:
                fail(f"kgen's output differs from onnxruntime's: max_abs_err={row['err']:.3g}")
    except Exception as e:  # noqa: BLE001 - onnxruntime errors come in many types
        return fail(f"onnxruntime: {e}")
    kgen_ms, ort_ms = [], []
    for _ in range(args.rounds):
        rep, err = kgen_run(args, model_path, threads, args.iters, cache, data_args)
        if rep is None:
            return fail(f"kgen {err}")
        kgen_ms.append(rep["run_ms"])
        ort_ms.append(ort_median_ms(sess, feeds, args.iters))
    row.update(kgen_ms=statistics.median(kgen_ms), ort_ms=statistics.median(ort_ms))
    row["ratio"] = row["ort_ms"] / row["kgen_ms"] if row["kgen_ms"] > 0 else float("inf")
    row["warm_over_run"] = row["warm_ms"] - row["kgen_ms"]
    return row


def exact_reference_args(name, data_dir, tmp):
    """--test-data over the reference inputs and the exact output (single-output models), with that
    model's tolerance."""
    exact_dir, atol = EXACT_REFERENCE[name]
    d = tempfile.mkdtemp(prefix="exact-", dir=tmp)
    for f in os.listdir(data_dir):
        if f.startswith("input_"):
            shutil.copy(os.path.join(data_dir, f), d)
    data_set = data_dir.rstrip("/").rsplit("_", 1)[-1]  # exact_output_N.pb: the output of data set N
    shutil.copy(os.path.join(REPO, exact_dir, f"exact_output_{data_set}.pb"), os.path.join(d, "output_0.pb"))
    return ["--test-data", d, "--atol", str(atol)]


def bench_model(args, name, tmp):
    """All rows of one model: batch 1 on its reference data, and BIG_BATCH on random inputs."""
    try:
        model_path, data_dir = find_model(name)
        has_batch = any(d is None for _, _, dims in graph_inputs(model_path) for d in dims)
    except Exception as e:  # noqa: BLE001
        args.failures += 1
        print(f"FAIL {name}: {e}", flush=True)
        return []
    cases = []
    if data_dir and name in EXACT_REFERENCE:
        cases.append((name, reference_inputs(model_path, data_dir), exact_reference_args(name, data_dir, tmp), None))
    elif data_dir:
        cases.append((name, reference_inputs(model_path, data_dir), ["--test-data", data_dir], None))
    else:
        print(f"NOTE {name}: no reference data; batch 1 on random inputs, checked against onnxruntime")
    batches = ([] if data_dir else [1]) + ([BIG_BATCH.get(name, 4)] if has_batch else [])
    for b in batches:
        d = tempfile.mkdtemp(prefix=f"b{b}-", dir=tmp)
        feeds = random_inputs(model_path, b, d)
        os.makedirs(os.path.join(d, "out"))
        inputs = [x for k in feeds for x in ("--input", f"{k}={os.path.join(d, k + '.npy')}")]
        out = None if name in EXACT_REFERENCE else os.path.join(d, "out")
        cases.append((f"{name} (batch {b})", feeds, inputs, out))
    rows = []
    for label, feeds, data_args, out_dir in cases:
        for t in args.threads:
            row = bench_case(args, label, model_path, t, feeds, data_args, tmp, out_dir)
            if row:
                rows.append(row)
                print(f"  {label} threads={t}: kgen {row['kgen_ms']:.3f} ms, ort {row['ort_ms']:.3f} ms",
                      file=sys.stderr, flush=True)
    return rows


def host_info():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor() or "unknown")
    commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return (f"CPU: {cpu} ({os.cpu_count()} logical cores); onnxruntime {ort.__version__}; kgen {commit}",
            "python3 " + shlex.join(sys.argv))


COLS = [("model", "model", "{}"), ("thr", "threads", "{}"), ("kgen ms", "kgen_ms", "{:.3f}"),
        ("ort ms", "ort_ms", "{:.3f}"), ("ort/kgen", "ratio", "{:.2f}"), ("cold ms", "cold_ms", "{:.1f}"),
        ("compiled", "cold_compiled", "{}"), ("warm ms", "warm_ms", "{:.1f}"), ("hits", "warm_hits", "{}"),
        ("warm comp", "warm_compiled", "{}"), ("warm-run ms", "warm_over_run", "{:.1f}"),
        ("launches", "launches", "{}"), ("max abs err", "err", "{:.2g}"), ("ok", "ok", "{}")]
MD_COLS = [("model", "model", "{}"), ("threads", "threads", "{}"), ("kgen ms", "kgen_ms", "{:.3f}"),
           ("ort ms", "ort_ms", "{:.3f}"), ("ort/kgen", "ratio", "{:.2f}"), ("cold ms", "cold_ms", "{:.1f}"),
           ("warm ms", "warm_ms", "{:.1f}"), ("warm - run ms", "warm_over_run", "{:.1f}"), ("launches", "launches", "{}"),
           ("kernels", "cold_compiled", "{}")]


def print_table(rows, cols):
    fmt = lambda v, f: ("ok" if v else "FAIL") if isinstance(v, bool) else f.format(v)  # noqa: E731
    cells = [[h for h, _, _ in cols]] + [[fmt(r[k], f) for _, k, f in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    for c in cells:
        print("  ".join(s.ljust(w) if i == 0 else s.rjust(w) for i, (s, w) in enumerate(zip(c, widths))))


def print_markdown(rows, header, command):
    print(f"\n{header}\n\nCommand: `{command}`\n")
    print("| " + " | ".join(h for h, _, _ in MD_COLS) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(MD_COLS))) + "|")
    for r in rows:
        cells = [f.format(r[k]) for _, k, f in MD_COLS]
        cells[0] += "" if r["ok"] else " (FAIL: wrong output)"
        print("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated folder names under " + MODELS_DIR)
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--iters", type=int, default=20, help="timed runs per round (median)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating kgen/onnxruntime rounds (median)")
    ap.add_argument("--kgen", default=os.path.join(REPO, "build", "tools", "kgen"))
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per kgen process")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.failures = 0
    header, command = host_info()
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="kgen-compare-models-") as tmp:
        rows = [r for m in args.models.split(",") if m for r in bench_model(args, m.strip(), tmp)]
    print()
    print_table(rows, COLS)
    if args.markdown:
        print_markdown(rows, header, command)
    return 1 if args.failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
