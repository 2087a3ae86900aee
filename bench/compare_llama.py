#!/usr/bin/env python3
"""Benchmarks llama GGUF models: kgen (`kgen run --json`) against llama.cpp's llama-bench on the CPU.

    python3 bench/compare_llama.py [--threads 1,2] [--rows stories260K,f16,q8_0,q4_0,q4_k] [--repeats 3]
                                   [--kgen build/tools/kgen] [--cache-dir ~/.cache/kgen-bench] [--skip-build]
                                   [--markdown]

Not part of ctest: it downloads and builds llama.cpp. Everything it makes lives in
CACHE = <--cache-dir>/llama.cpp-<version>, so a second run reuses it:
  * llama.cpp: the sdist of llama-cpp-python <version> (PINNED, else PyPI's newest) from
    `pip download --no-binary :all: --no-deps`, its vendor/llama.cpp built with CMake (Release,
    GGML_NATIVE=ON, LLAMA_CURL=OFF, static) for the targets llama-bench and llama-quantize only,
    at most 2 jobs, in CACHE/build (log: CACHE/build.log). When that cannot work the script says
    why, measures kgen alone and exits 1.
  * models (CACHE/models): stories260K (F32, from the shared models folder) and a random-weight
    llama (dim 1024, 8 layers, 16 heads / 4 KV heads of 64, ffn 2816, vocab 32000: ~156 M
    parameters) written in F16 with the `gguf` package, its tokenizer copied from
    llama-2-tiny-random.gguf; Q8_0, Q4_0 and Q4_K copies by `llama-quantize --pure` (every matrix
    in the named type, so both programs run the same format). When `kgen quantize` exists, kgen
    also quantizes the F16 file and its tensors are compared with llama.cpp's (types, identical bytes).

Per row and thread count T, --repeats rounds alternate the two programs (median over rounds):
  * llama.cpp: `llama-bench -m M -t T -p P -n 64 -r 1 -o json` (P = 128; 64 for stories260K, whose
    training context is 512): prefill = pp P tok/s, decode = tg 64 tok/s;
  * kgen: `kgen run M --prompt TEXT -n 64 --temp 0 --threads T --json`, TEXT calibrated once per
    tokenizer to give exactly P prompt tokens (BOS included, as llama-bench counts it) and checked
    on every run; kgen stops early at EOS, which the note column reports. llama-bench decodes from
    an empty context, kgen after its prompt: the attention over <= 192 positions costs little.
Columns: tok/s of both, kgen/llama.cpp (> 1: kgen faster), and decode as a fraction of the memory
bandwidth: weight bytes read per token (every tensor but the embedding table, which is read one row
per token unless it doubles as the output) x decode tok/s / the STREAM triad's GB/s, measured in
this run at T threads (`kgen bench` bandwidth/saxpy's triad_GB_per_s counter). Weights that fit
in the caches (stories260K: 1 MB) can exceed 1.
"""
import argparse
import glob
import importlib
import json
import os
import platform
import re
import shlex
import shutil
import site
import statistics
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_GGUF = os.environ.get("KGEN_GGUF_DIR", os.path.join(os.path.dirname(REPO), "shared", "models", "gguf"))
PINNED = "0.3.36"
JOBS = 2  # the build shares a small machine
CMAKE_FLAGS = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF",
               "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
               "-DLLAMA_BUILD_SERVER=OFF"]
TARGETS = ["llama-bench", "llama-quantize"]
N_GEN = 64

# The random-weight llama: ~156 M parameters.
RANDOM_LLAMA = dict(dim=1024, layers=8, heads=16, kv_heads=4, head_dim=64, ffn=2816, vocab=32000, context=2048)
RANDOM_NAME = "random-156M"

# Row name -> (file stem under CACHE/models, llama-quantize type or None, prompt tokens, table label).
ROWS = {"stories260K": ("stories260K", None, 64, "stories260K F32"),
        "f16": (f"{RANDOM_NAME}-f16", None, 128, f"{RANDOM_NAME} F16"),
        "q8_0": (f"{RANDOM_NAME}-q8_0", "Q8_0", 128, f"{RANDOM_NAME} Q8_0"),
        "q4_0": (f"{RANDOM_NAME}-q4_0", "Q4_0", 128, f"{RANDOM_NAME} Q4_0"),
        "q4_k": (f"{RANDOM_NAME}-q4_k", "Q4_K_M", 128, f"{RANDOM_NAME} Q4_K")}  # --pure: every matrix Q4_K

STORY = ("Once upon a time there was a little girl named Lily who loved to play in the big green park "
         "near her house with her small brown dog and her best friend Tom every sunny day after school")


def log(msg):
    print(f"[compare_llama] {msg}", file=sys.stderr, flush=True)


class Unavailable(Exception):
    """A step that cannot work on this machine; the message says exactly why."""


def pip_flags():
    """pip install flags as compare_models.py uses them: --user unless root, past PEP 668 when needed."""
    help_text = subprocess.run([sys.executable, "-m", "pip", "install", "--help"],
                               capture_output=True, text=True).stdout
    flags = ["--quiet"] + (["--break-system-packages"] if "--break-system-packages" in help_text else [])
    return flags + (["--user"] if os.geteuid() != 0 else [])


def ensure_gguf():
    """Imports numpy and gguf, pip-installing them first when missing."""
    try:
        return importlib.import_module("numpy"), importlib.import_module("gguf")
    except ImportError:
        pass
    log("pip installing numpy gguf")
    subprocess.run([sys.executable, "-m", "pip", "install", *pip_flags(), "numpy", "gguf"], check=True)
    site.addsitedir(site.getusersitepackages())
    importlib.invalidate_caches()
    return importlib.import_module("numpy"), importlib.import_module("gguf")


# ---------------------------------------------------------------------------------------------
# llama.cpp


def run_logged(cmd, log_path, cwd=None):
    """Runs cmd, appending its output to log_path; raises Unavailable with the log's tail on failure."""
    with open(log_path, "a") as f:
        f.write(f"\n$ {shlex.join(cmd)}\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd).returncode
        except OSError as e:
            raise Unavailable(f"cannot start {cmd[0]}: {e}") from e
    if rc != 0:
        with open(log_path) as f:
            tail = "".join(f.readlines()[-25:])
        raise Unavailable(f"`{shlex.join(cmd)}` failed (exit {rc}); the end of {log_path}:\n{tail}")


def download_sdist(version, dest):
    """The llama-cpp-python sdist of `version` (None: the newest) in dest: (path, version)."""
    spec = "llama-cpp-python" + (f"=={version}" if version else "")
    cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-d", dest, spec]
    p = subprocess.run(cmd, capture_output=True, text=True)
    found = glob.glob(os.path.join(dest, "llama_cpp_python-*.tar.gz"))
    if p.returncode != 0 or not found:
        raise Unavailable(f"`{shlex.join(cmd)}` failed (exit {p.returncode}):\n{(p.stderr or p.stdout).strip()[-2000:]}")
    return found[0], os.path.basename(found[0])[len("llama_cpp_python-"):-len(".tar.gz")]


def fetch_source(args):
    """CACHE with CACHE/src/vendor/llama.cpp extracted: the pinned version, else the newest on PyPI."""
    cached = os.path.join(args.cache_dir, f"llama.cpp-{args.llama_version}")
    if os.path.isfile(os.path.join(cached, "src", "vendor", "llama.cpp", "CMakeLists.txt")):
        return cached, args.llama_version
    tmp = tempfile.mkdtemp(prefix="sdist-", dir=args.cache_dir)
    try:
        try:
            sdist, version = download_sdist(args.llama_version, tmp)
        except Unavailable as pinned_error:
            log(f"llama-cpp-python {args.llama_version} unavailable, trying the newest:\n{pinned_error}")
            sdist, version = download_sdist(None, tmp)
        cache = os.path.join(args.cache_dir, f"llama.cpp-{version}")
        os.makedirs(cache, exist_ok=True)
        if not os.path.isfile(os.path.join(cache, "src", "vendor", "llama.cpp", "CMakeLists.txt")):
            log(f"extracting {os.path.basename(sdist)}")
            with tarfile.open(sdist) as t:
                t.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(tmp)
            top = os.path.join(tmp, f"llama_cpp_python-{version}")
            if not os.path.isfile(os.path.join(top, "vendor", "llama.cpp", "CMakeLists.txt")):
                raise Unavailable(f"{os.path.basename(sdist)} has no vendor/llama.cpp/CMakeLists.txt")
            shutil.rmtree(os.path.join(cache, "src"), ignore_errors=True)
            os.rename(top, os.path.join(cache, "src"))
        return cache, version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_llama_cpp(args):
    """{'bench', 'quantize', 'version', 'cache'}: llama.cpp's tools, built into CACHE/build once."""
    if args.skip_build:
        tools = existing_llama_cpp(args)
        if not tools:
            raise Unavailable(f"--skip-build, and no finished build of {', '.join(TARGETS)} in "
                              f"{os.path.join(args.cache_dir, 'llama.cpp-*', 'build', 'bin')}")
        return tools
    os.makedirs(args.cache_dir, exist_ok=True)
    cache, version = fetch_source(args)
    build = os.path.join(cache, "build")
    tools = {"bench": os.path.join(build, "bin", "llama-bench"),
             "quantize": os.path.join(build, "bin", "llama-quantize"), "version": version, "cache": cache}
    stamp = os.path.join(build, "kgen-bench.stamp")
    wanted = json.dumps({"flags": CMAKE_FLAGS, "targets": TARGETS})
    built = all(os.access(tools[k], os.X_OK) for k in ("bench", "quantize"))
    if built and os.path.isfile(stamp) and open(stamp).read() == wanted:
        return tools
    for exe in ("cmake", "c++"):
        if not shutil.which(exe):
            raise Unavailable(f"building llama.cpp needs `{exe}` on PATH")
    log_path = os.path.join(cache, "build.log")
    log(f"building llama.cpp (llama-cpp-python {version}) with {JOBS} jobs, about 10-20 minutes; log: {log_path}")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run_logged(["cmake", "-S", os.path.join(cache, "src", "vendor", "llama.cpp"), "-B", build, *generator,
                *CMAKE_FLAGS], log_path)
    run_logged(["cmake", "--build", build, "--target", *TARGETS, "-j", str(JOBS)], log_path)
    with open(stamp, "w") as f:
        f.write(wanted)
    return tools


def existing_llama_cpp(args):
    """The tools of a finished build under --cache-dir: --llama-version's, else any other; None if none."""
    pinned = os.path.join(args.cache_dir, f"llama.cpp-{args.llama_version}")
    others = sorted(glob.glob(os.path.join(args.cache_dir, "llama.cpp-*")), reverse=True)
    for cache in [pinned] + [c for c in others if c != pinned]:
        bench, quant = (os.path.join(cache, "build", "bin", n) for n in TARGETS)
        if os.access(bench, os.X_OK) and os.access(quant, os.X_OK):
            return {"bench": bench, "quantize": quant, "cache": cache,
                    "version": os.path.basename(cache)[len("llama.cpp-"):]}
    return None


# ---------------------------------------------------------------------------------------------
# Models


def write_random_llama(path, np, gguf):
    """A random-weight llama (RANDOM_LLAMA) in F16 with llama-2-tiny-random.gguf's 32000-token vocabulary."""
    c = RANDOM_LLAMA
    src = gguf.GGUFReader(os.path.join(SHARED_GGUF, "llama-2-tiny-random.gguf"))
    field = lambda k: src.fields[k].contents()  # noqa: E731
    tokens = field("tokenizer.ggml.tokens")
    if len(tokens) != c["vocab"]:
        raise RuntimeError(f"llama-2-tiny-random.gguf: {len(tokens)} tokens, expected {c['vocab']}")
    w = gguf.GGUFWriter(path + ".part", "llama")
    w.add_name(RANDOM_NAME)
    w.add_context_length(c["context"])
    w.add_embedding_length(c["dim"])
    w.add_block_count(c["layers"])
    w.add_feed_forward_length(c["ffn"])
    w.add_rope_dimension_count(c["head_dim"])
    w.add_head_count(c["heads"])
    w.add_head_count_kv(c["kv_heads"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(field("tokenizer.ggml.scores"))
    w.add_token_types(field("tokenizer.ggml.token_type"))
    w.add_bos_token_id(field("tokenizer.ggml.bos_token_id"))
    w.add_eos_token_id(field("tokenizer.ggml.eos_token_id"))
    w.add_unk_token_id(field("tokenizer.ggml.unknown_token_id"))
    rng = np.random.default_rng(0)

    def matrix(rows, cols):  # numpy [rows, cols] = GGUF ne [cols, rows]: y = W x with x of cols
        return (rng.standard_normal((rows, cols), dtype=np.float32) * (0.5 / np.sqrt(cols))).astype(np.float16)

    d, kv = c["dim"], c["kv_heads"] * c["head_dim"]
    w.add_tensor("token_embd.weight", matrix(c["vocab"], d))
    for i in range(c["layers"]):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(d, np.float32))
        w.add_tensor(b + "attn_q.weight", matrix(c["heads"] * c["head_dim"], d))
        w.add_tensor(b + "attn_k.weight", matrix(kv, d))
        w.add_tensor(b + "attn_v.weight", matrix(kv, d))
        w.add_tensor(b + "attn_output.weight", matrix(d, c["heads"] * c["head_dim"]))
        w.add_tensor(b + "ffn_norm.weight", np.ones(d, np.float32))
        w.add_tensor(b + "ffn_gate.weight", matrix(c["ffn"], d))
        w.add_tensor(b + "ffn_up.weight", matrix(c["ffn"], d))
        w.add_tensor(b + "ffn_down.weight", matrix(d, c["ffn"]))
    w.add_tensor("output_norm.weight", np.ones(d, np.float32))
    w.add_tensor("output.weight", matrix(c["vocab"], d))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(path + ".part", path)


def models_dir(args, tools):
    path = os.path.join(tools["cache"] if tools else os.path.join(args.cache_dir, "no-llama.cpp"), "models")
    os.makedirs(path, exist_ok=True)
    return path


def prepare_models(args, tools, rows, np, gguf):
    """{row: path or an Unavailable}: each row's model, made once into CACHE/models."""
    folder = models_dir(args, tools)
    f16 = os.path.join(folder, ROWS["f16"][0] + ".gguf")
    out = {}
    for row in rows:
        stem, qtype = ROWS[row][:2]
        path = os.path.join(folder, stem + ".gguf")
        try:
            if row == "stories260K":
                path = os.path.join(SHARED_GGUF, "stories260K.gguf")
                if not os.path.isfile(path):
                    raise Unavailable(f"{path} is missing")
            elif qtype and not tools:
                raise Unavailable("no llama-quantize (llama.cpp did not build)")
            elif not os.path.isfile(f16) and not os.path.isfile(path):
                log(f"writing {f16}")
                write_random_llama(f16, np, gguf)
            if qtype and not os.path.isfile(path):
                log(f"llama-quantize --pure {os.path.basename(f16)} -> {qtype}")
                run_logged([tools["quantize"], "--pure", f16, path + ".part", qtype, str(JOBS)],
                           os.path.join(folder, "quantize.log"))
                os.replace(path + ".part", path)
            out[row] = path
        except Unavailable as e:
            out[row] = e
    return out


def weight_bytes_per_token(path, gguf):
    """Bytes of weights one decode step reads: every tensor but a separate embedding table (one row)."""
    tensors = {t.name: int(t.n_bytes) for t in gguf.GGUFReader(path).tensors}
    tied = "output.weight" not in tensors
    return sum(n for name, n in tensors.items() if tied or name != "token_embd.weight")


def compare_quantized(ours, theirs, np, gguf):
    """One line comparing two quantizations of the same model: types, identical tensors, and the
    largest difference of dequantized values (relative to the tensor's largest value) elsewhere."""
    a = {t.name: t for t in gguf.GGUFReader(ours).tensors}
    b = {t.name: t for t in gguf.GGUFReader(theirs).tensors}
    common = [n for n in b if n in a]
    same_type = [n for n in common if a[n].tensor_type == b[n].tensor_type]
    differ = [n for n in same_type if bytes(a[n].data) != bytes(b[n].data)]
    worst = 0.0
    for n in differ:
        x = gguf.quants.dequantize(a[n].data, a[n].tensor_type).astype(np.float64)
        y = gguf.quants.dequantize(b[n].data, b[n].tensor_type).astype(np.float64)
        worst = max(worst, float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)))
    return (f"{len(a)} tensors vs llama.cpp's {len(b)}, {len(same_type)} of the same type, "
            f"{len(same_type) - len(differ)} byte-identical"
            + (f", the others within {worst:.2g} of their largest value after dequantizing" if differ else ""))


def check_kgen_quantize(args, tools, models, np, gguf):
    """Lines comparing `kgen quantize` with llama-quantize on the F16 model for the quantized rows;
    [] when kgen has no quantize command."""
    listing = subprocess.run([args.kgen, "--help"], capture_output=True, text=True).stdout
    if not re.search(r"^\s+quantize\s", listing, re.M):  # `kgen quantize --help` shows the top help when absent
        return []
    f16 = os.path.join(models_dir(args, tools), ROWS["f16"][0] + ".gguf")
    lines = []
    with tempfile.TemporaryDirectory(prefix="kgen-quantize-") as tmp:
        for row in ("q8_0", "q4_0", "q4_k"):
            theirs = models.get(row)
            if not os.path.isfile(f16) or not isinstance(theirs, str):
                continue
            ours = os.path.join(tmp, f"{row}.gguf")
            cmd = [args.kgen, "quantize", f16, ours, "--type", row]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            if p.returncode != 0:
                args.failures += 1
                lines.append(f"FAIL `{shlex.join(cmd)}` exit {p.returncode}: {p.stderr.strip()[-500:]}")
                continue
            lines.append(f"kgen quantize --type {row}: {compare_quantized(ours, theirs, np, gguf)}")
            os.remove(ours)
    return lines


# ---------------------------------------------------------------------------------------------
# Measurements


def host_triad(args, threads):
    """The STREAM triad's GB/s at this thread count, from `kgen bench` (bandwidth/saxpy's counter)."""
    cmd = [args.kgen, "bench", f"^bandwidth/saxpy/{threads}/", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    try:
        return float(json.loads(p.stdout)["benchmarks"][0]["triad_GB_per_s"]), shlex.join(cmd)
    except (ValueError, KeyError, IndexError) as e:
        raise RuntimeError(f"`{shlex.join(cmd)}` gave no triad_GB_per_s (exit {p.returncode}): {e}\n"
                           f"{p.stderr.strip()[-500:]}") from e


def kgen_cmd(args, model, prompt, threads, n_gen):
    return [args.kgen, "run", model, "--prompt", prompt, "-n", str(n_gen), "--temp", "0",
            "--threads", str(threads), "--json"]


def kgen_run(args, model, prompt, threads, n_gen=N_GEN):
    """One `kgen run --json` process: its report, or raises RuntimeError with its stderr."""
    cmd = kgen_cmd(args, model, prompt, threads, n_gen)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError) as e:
        raise RuntimeError(f"exit {p.returncode}: {shlex.join(cmd)}\n{p.stderr.strip()[-1500:]}") from e


def calibrate_prompt(args, model, target):
    """A text that `kgen run model` encodes to exactly `target` tokens (BOS included): story words
    repeated (the most that stay within target), then single-token fillers for the rest."""
    words = STORY.split()
    text = lambda k: " ".join(words[i % len(words)] for i in range(k))  # noqa: E731
    count = lambda s: kgen_run(args, model, s, 1, n_gen=1)["prompt_tokens"]  # noqa: E731
    lo, hi = 1, target  # a word is at least one token, so `target` words are never too few
    while lo < hi:  # the most words within target
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if count(text(mid)) <= target else (lo, mid - 1)
    base = text(lo)
    have = count(base)
    for filler in (" a", " the", " and", "."):
        candidate = base + filler * (target - have)
        if count(candidate) == target:
            return candidate
    raise RuntimeError(f"{model}: no prompt of exactly {target} tokens ({lo} words give {have})")


def llama_bench(args, tools, model, threads, n_prompt):
    """One `llama-bench -r 1` process: (prefill tok/s, decode tok/s)."""
    cmd = [tools["bench"], "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(N_GEN), "-r", "1",
           "-o", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    try:
        recs = json.loads(p.stdout)
        pp = next(r for r in recs if r["n_prompt"] == n_prompt and r["n_gen"] == 0)
        tg = next(r for r in recs if r["n_prompt"] == 0 and r["n_gen"] == N_GEN)
    except (ValueError, StopIteration, KeyError, TypeError) as e:
        raise RuntimeError(f"exit {p.returncode}: {shlex.join(cmd)}\n{p.stderr.strip()[-1500:]}") from e
    return pp["avg_ts"], tg["avg_ts"]


def bench_row(args, tools, row, model, prompt, threads, triad, wbytes):
    """Alternating kgen / llama-bench rounds of one model at one thread count: a table row."""
    n_prompt = ROWS[row][2]
    r = {"row": ROWS[row][3], "threads": threads, "note": ""}
    kp, kd, lp, ld, gen = [], [], [], [], []
    for _ in range(args.repeats):
        rep = kgen_run(args, model, prompt, threads)
        if rep["prompt_tokens"] != n_prompt:
            raise RuntimeError(f"kgen encoded the prompt to {rep['prompt_tokens']} tokens, not {n_prompt}")
        kp.append(rep["prefill_tok_per_s"])
        kd.append(rep["decode_tok_per_s"])
        gen.append(len(rep["tokens"]))
        if tools:
            p, d = llama_bench(args, tools, model, threads, n_prompt)
            lp.append(p)
            ld.append(d)
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    r.update(kgen_pp=med(kp), kgen_tg=med(kd), llama_pp=med(lp), llama_tg=med(ld), generated=min(gen))
    r["pp_ratio"] = r["kgen_pp"] / r["llama_pp"] if lp else float("nan")
    r["tg_ratio"] = r["kgen_tg"] / r["llama_tg"] if ld else float("nan")
    r["weights_mb"] = wbytes / 1e6
    r["triad"] = triad
    r["kgen_bw"] = wbytes * r["kgen_tg"] / (triad * 1e9)
    r["llama_bw"] = wbytes * r["llama_tg"] / (triad * 1e9)
    if min(gen) < N_GEN:
        r["note"] = f"kgen stopped at EOS after {min(gen)} tokens"
    return r


# ---------------------------------------------------------------------------------------------
# Report


def host_info(args, tools):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor() or "unknown")
    commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    llama = f"llama.cpp from llama-cpp-python {tools['version']}" if tools else "llama.cpp: not built"
    return f"CPU: {cpu} ({os.cpu_count()} logical cores); {llama}; kgen {args.kgen} (checkout {commit})"


COLS = [("model", "row", "{}"), ("thr", "threads", "{}"), ("weights MB", "weights_mb", "{:.1f}"),
        ("kgen pp", "kgen_pp", "{:.1f}"), ("llama pp", "llama_pp", "{:.1f}"), ("pp kgen/llama", "pp_ratio", "{:.2f}"),
        ("kgen tg", "kgen_tg", "{:.1f}"), ("llama tg", "llama_tg", "{:.1f}"), ("tg kgen/llama", "tg_ratio", "{:.2f}"),
        ("triad GB/s", "triad", "{:.1f}"), ("kgen tg/bw", "kgen_bw", "{:.2f}"), ("llama tg/bw", "llama_bw", "{:.2f}"),
        ("note", "note", "{}")]


def cells(r):
    return [f.format(r[k]) if r[k] == r[k] else "n/a" for _, k, f in COLS]  # NaN: not measured


def print_table(rows):
    table = [[h for h, _, _ in COLS]] + [cells(r) for r in rows]
    widths = [max(len(c[i]) for c in table) for i in range(len(COLS))]
    for c in table:
        print("  ".join(s.ljust(w) if i in (0, len(COLS) - 1) else s.rjust(w)
                        for i, (s, w) in enumerate(zip(c, widths))))


def print_markdown(args, rows, header, commands, notes):
    print(f"\n{header}\n\nCommand: `python3 {shlex.join(sys.argv)}`\n")
    print("| " + " | ".join(h for h, _, _ in COLS) + " |")
    print("|" + "|".join("---" if i in (0, len(COLS) - 1) else "---:" for i in range(len(COLS))) + "|")
    for r in rows:
        print("| " + " | ".join(cells(r)) + " |")
    print(f"\npp / tg: prefill / decode tok/s, median of {args.repeats} alternating rounds; tg/bw: weight bytes "
          "per token x decode tok/s / triad bytes/s (triad measured once per thread count).\n\n"
          "Commands (T: the thread count):\n")
    for c in commands:
        print(f"    {c}")
    for n in notes:
        print(f"\n{n}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated subset of " + ",".join(ROWS))
    ap.add_argument("--repeats", type=int, default=3, help="alternating kgen / llama.cpp rounds (median)")
    ap.add_argument("--kgen", default=os.path.join(REPO, "build", "tools", "kgen"))
    ap.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/kgen-bench"),
                    help="holds llama.cpp-<version>/ (source, build, models)")
    ap.add_argument("--llama-version", default=PINNED, help="llama-cpp-python sdist whose llama.cpp is built")
    ap.add_argument("--skip-build", action="store_true", help="use the cached llama.cpp build, never build")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per process")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    lookup = {k.lower(): k for k in ROWS}
    if any(r.lower() not in lookup for r in rows) or args.repeats < 1:
        ap.error(f"--rows takes {','.join(ROWS)}; --repeats at least 1")
    rows = [lookup[r.lower()] for r in rows]
    args.failures = 0
    np, gguf = ensure_gguf()
    notes = []
    try:
        tools = build_llama_cpp(args)
    except Unavailable as e:
        tools = existing_llama_cpp(args)
        args.failures += 1  # the comparison is what was asked for: say so in the exit status
        notes.append(f"llama.cpp unavailable, kgen measured alone: {e}")
        print(f"NOTE {notes[-1]}", flush=True)
    header = host_info(args, tools)
    print(header, flush=True)
    models = prepare_models(args, tools, rows, np, gguf)
    for row, m in models.items():
        if not isinstance(m, str):
            args.failures += 1
            print(f"FAIL {row}: {m}", flush=True)
    notes += check_kgen_quantize(args, tools, models, np, gguf)
    triads, commands, prompts, results = {}, [], {}, []
    for t in args.threads:
        triads[t], cmd = host_triad(args, t)
        commands.append(cmd)
        print(f"triad at {t} thread(s): {triads[t]:.2f} GB/s", flush=True)
    for row in rows:
        model = models[row]
        if not isinstance(model, str):
            continue
        target = ROWS[row][2]
        # the random llama's vocabulary is llama-2-tiny-random's: calibrate on that tiny file
        tok_model = model if row == "stories260K" else os.path.join(SHARED_GGUF, "llama-2-tiny-random.gguf")
        try:
            if (tok_model, target) not in prompts:
                prompts[tok_model, target] = calibrate_prompt(args, tok_model, target)
            prompt = prompts[tok_model, target]
            wbytes = weight_bytes_per_token(model, gguf)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            args.failures += 1
            print(f"FAIL {row}: {e}", flush=True)
            continue
        commands.append(shlex.join(kgen_cmd(args, model, prompt, "T", N_GEN)))
        if tools:
            commands.append(shlex.join([tools["bench"], "-m", model, "-t", "T", "-p", str(target), "-n", str(N_GEN),
                                        "-r", "1", "-o", "json"]))
        for t in args.threads:
            try:
                r = bench_row(args, tools, row, model, prompt, t, triads[t], wbytes)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                args.failures += 1
                print(f"FAIL {row} threads={t}: {e}", flush=True)
                continue
            results.append(r)
            log(f"{row} threads={t}: kgen pp {r['kgen_pp']:.1f} tg {r['kgen_tg']:.1f}, "
                f"llama.cpp pp {r['llama_pp']:.1f} tg {r['llama_tg']:.1f} tok/s")
    print()
    print_table(results)
    for n in notes:
        print(n)
    if args.markdown:
        print_markdown(args, results, header, commands, notes)
    return 1 if args.failures or not results else 0


if __name__ == "__main__":
    sys.exit(main())
