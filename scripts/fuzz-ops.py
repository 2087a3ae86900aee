#!/usr/bin/env python3
# Fuzzes every op with random odd, tiny and malformed problems, checking every variant.
# Each case runs `kgen tune --no-store`, which checks every candidate (and the
# heuristic's) against the op's reference with poisoned outputs and
# temporaries, so a variant wrong on some shape shows up as a FAIL line with
# the command that reproduces it (add --variant to `kgen op` for one variant).
#
#   python3 scripts/fuzz-ops.py [seed] [seconds] [device] [kgen binary]
#
# FUZZ_BIG (default 0.2) is the share of cases drawn larger (hundreds to
# thousands per axis), for the blocked paths' edge tiles and K slices.
# The seed fixes the cases. It copies the binary first (a rebuild during the
# sweep would replace it) and keeps its kernel cache in /tmp/kgen-fuzz.
import os, random, re, shutil, subprocess, sys, time

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
budget = float(sys.argv[2]) if len(sys.argv) > 2 else 600
DEV = sys.argv[3] if len(sys.argv) > 3 else "cpu"
SRC = sys.argv[4] if len(sys.argv) > 4 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tools", "kgen")
WORK = "/tmp/kgen-fuzz"
os.makedirs(WORK, exist_ok=True)
K = os.path.join(WORK, "kgen-%d" % os.getpid())  # per run: another sweep may be using its copy
shutil.copy2(SRC, K)
R = random.Random(seed)
BIG_SHARE = float(os.environ.get("FUZZ_BIG", "0.2"))  # share of cases drawn larger
BIG = False
BAD_SHARE = float(os.environ.get("FUZZ_BAD", "0.05"))  # share of malformed problems
env = dict(os.environ, KGEN_CACHE_DIR=os.path.join(WORK, "cache"))
def pick(*a): return R.choice(a)
def odd(lo, hi): return R.randint(lo, hi)
def case():
    global BIG
    BIG = R.random() < BIG_SHARE  # larger problems: blocked paths' edge tiles and K slices
    op = pick("matmul","matmul","qmatmul","qmatmul","attention","attention","conv2d","conv2d","scan","softmax","log_softmax","rmsnorm","layernorm",
              "reduce","transpose","rope","maxpool2d","avgpool2d","global_avgpool","dequantize","quantize","gated_mlp",
              "ew_unary","ew_binary","ew_ternary","ew_chain","selective_scan")
    attrs = []; dtype = None
    if op == "matmul":
        M = pick(1,2,3,4,5,7,8,9,13,17,33,65,70); N = pick(1,3,16,17,31,33,48,100,129); Kk = pick(1,3,16,17,32,33,64,100,257)
        if BIG: M, N, Kk = pick(M, 100, 129, 257, 300), pick(N, 257, 513, 700), pick(Kk, 300, 513, 1025, 2049)
        shape = [M,N,Kk]; tb = pick(0,1); attrs.append(f"trans_b={tb}")
        dtype = pick("f32","f32","bf16","f16")
        if dtype != "f32" and R.random() < 0.5: attrs.append("a_f32=1")
        if (dtype in ("f32", "f16") or "a_f32=1" in attrs) and R.random() < 0.2: attrs.append(f"prec={pick(1,2)}")  # bf16 terms on AMX hosts
        if R.random() < 0.3: attrs.append(f"batch={pick(2,3)}")
    elif op == "qmatmul":
        f = pick(2,3,6,7,8,10,11,12,13,14); blk = 256 if f >= 10 else 32
        shape = [pick(1,2,3,4,5,8,9,17,33,65), pick(1,3,15,16,17,33), blk*pick(1,2,3,5)]
        if BIG: shape = [pick(1,2,5,9,65,129), pick(33,100,257,513), blk*pick(4,9,17)]
        attrs += [f"format={f}", f"xq={pick(0,1)}"]
        if f in (2,8,12,14) and R.random() < 0.3: attrs.append("layout=16")
    elif op == "attention":
        B,H = pick(1,2), pick(1,2,4,8); S = pick(1,2,5,17,33,64,70); D = pick(16,32,64,8,24)
        if BIG: S = pick(129, 257, 300)
        shape = [B,H,S,D]
        if R.random() < 0.5:
            hk = pick(*[h for h in (1,2,4,8) if H % h == 0]); shape.append(hk)
            if R.random() < 0.5: shape.append(pick(1,3,17,40,65,300,600))  # 300, 600: key splits
        attrs.append(f"causal={pick(0,1)}"); dtype = pick("f32","f32","f16","bf16")
        if R.random() < 0.3: attrs.append(f"scale_milli={pick(50, 125, 1000)}")
    elif op == "conv2d":
        g = pick(1,1,1,2,4,"dw"); C = pick(1,2,3,4,8,16,20,33) ; OC = pick(1,3,8,16,20,32,40)
        if BIG and g != "dw": C, OC = pick(C, 32, 64, 96), pick(OC, 64, 96)
        if g == "dw": g = C; OC = C * pick(1,2)
        else: C = C * g; OC = OC * g
        kh, kw = pick(1,3,5,2), pick(1,3,5,2); H, W = pick(1,5,7,13,28,31), pick(1,5,7,13,28,31)
        shape = [pick(1,2), C, H, W, OC, kh, kw]
        sh, sw = pick(1,1,2,3), pick(1,1,2); ph, pw = pick(0,0,1,2), pick(0,1,2); dh, dw = pick(1,1,2), pick(1,1,2)
        if (H + 2*ph - dh*(kh-1) - 1) < 0 or (W + 2*pw - dw*(kw-1) - 1) < 0: ph, pw, dh, dw = kh, kw, 1, 1
        if R.random() < 0.2:  # asymmetric, where the dilated kernel still fits
            pb, pr = pick(0, ph + 1), pick(0, pw + 1)
            if H + ph + pb - dh*(kh-1) - 1 >= 0 and W + pw + pr - dw*(kw-1) - 1 >= 0: attrs += [f"pad_b={pb}", f"pad_r={pr}"]
        attrs += [f"stride_h={sh}", f"stride_w={sw}", f"pad_h={ph}", f"pad_w={pw}", f"dilation_h={dh}", f"dilation_w={dw}", f"groups={g}", f"bias={pick(0,1)}", f"relu={pick(0,1)}"]
        if DEV == "cpu" and g != C and R.random() < 0.2: attrs.append("w_layout=32")  # weights packed by 32 output channels
    elif op == "scan":
        shape = pick([odd(1,70000)], [pick(1,2,3,5), odd(1,20000)]); attrs.append(f"exclusive={pick(0,1)}"); dtype = pick("f32","i32")
    elif op in ("softmax","log_softmax","rmsnorm","layernorm"):
        # (40 and 300 rows: the softmaxes' 16-row blocks; the norms of a few columns are ill-conditioned)
        shape = [pick(1,2,3,7,33,40,300) if op in ("softmax","log_softmax") else pick(1,2,3,7,33), pick(1,2,3,8,10,15,16,17,100,1000,4097)]
    elif op == "reduce":
        rank = pick(1,2,3,4); shape = [pick(1,2,3,5,17,33,100) for _ in range(rank)]
        attrs += [f"axis={R.randrange(rank)}", f"kind={pick(0,1,2,3,4)}", f"idx={pick(0,1)}"]
    elif op == "transpose":
        rank = pick(2,3,4); shape = [pick(1,2,3,4,5,8,16,17,33,64,100) for _ in range(rank)]
        p = list(range(rank)); R.shuffle(p); attrs.append("perm=" + "".join(map(str,p))); dtype = pick("f32","f32","bf16","f16")
    elif op == "rope":
        shape = [pick(1,2,5,17), pick(1,2,3,8), pick(2,4,8,16,64,128,6,34,48,80,96)]; attrs += [f"mode={pick(0,1)}", f"pos={pick(0,7,1000)}"]
        if R.random() < 0.3: attrs.append(f"base={pick(500, 10000, 1000000)}")
    elif op in ("maxpool2d","avgpool2d"):
        k = pick(1,2,3); s = pick(1,2,3); p = pick(0,1) if k > 1 else 0
        shape = [pick(1,2), pick(1,3,16,17), pick(3,5,7,13,28), pick(3,5,7,13,28)]
        attrs += [f"kernel_h={k}", f"kernel_w={k}", f"stride_h={s}", f"stride_w={s}", f"pad_h={p}", f"pad_w={p}"]
        if op == "avgpool2d": attrs.append(f"count_include_pad={pick(0,1)}")
    elif op == "global_avgpool":
        shape = [pick(1,2,3), pick(1,3,16,17,64), pick(1,3,7,14), pick(1,3,7,14)]
    elif op == "dequantize":
        f = pick(2,3,6,7,8,10,11,12,13,14); blk = 256 if f >= 10 else 32
        shape = [pick(1,2,3,17), blk*pick(1,2,3,7)]; attrs.append(f"format={f}")
    elif op == "quantize":
        shape = [pick(1,2,3,17), 32*pick(1,2,3,7,33)]; attrs.append(f"format={pick(2,8)}")
    elif op == "gated_mlp":
        shape = [pick(1,2,3,5,17,33), pick(16,32,48,64,96), pick(16,17,32,48,100)]; dtype = pick("f32","bf16","f16")
        if dtype == "bf16" and R.random() < 0.5: attrs.append("h_bf16=1")
        if dtype != "f16" and R.random() < 0.3: attrs.append(f"prec={pick(1,2)}")
    elif op == "ew_binary":
        rank = pick(1,2,3); shape = [pick(1,2,3,17,33,100) for _ in range(rank)]
        attrs += [f"fn={pick(0,1,2,3,4,5,6)}", f"bb={R.randrange(1<<rank)}"]; dtype = pick("f32","f16","bf16")
    elif op == "ew_unary":
        rank = pick(1,2,3); shape = [pick(1,2,3,17,33,100) for _ in range(rank)]
        attrs += [f"fn={R.randrange(12)}", f"out={pick(0,1,2,3)}"]; dtype = pick("f32","f16","bf16")
    elif op == "ew_ternary":
        rank = pick(1,2,3); shape = [pick(1,2,3,17,33,100) for _ in range(rank)]
        attrs += [f"fn={pick(0,1)}", f"ba={R.randrange(1<<rank)}", f"bc={R.randrange(1<<rank)}"]; dtype = pick("f32","f16","bf16")
    elif op == "ew_chain":
        rank = pick(1,2,3); shape = [pick(1,2,3,17,33,100) for _ in range(rank)]; attrs.append(f"chain={pick(0,1,2)}")
    elif op == "selective_scan":
        shape = [pick(1,2), pick(1,3,17,33), pick(1,3,16,17,31,37), pick(1,4,16)]; attrs += [f"delta_softplus={pick(0,1)}", f"d_skip={pick(0,1)}"]
    return op, "x".join(map(str, shape)), ",".join(attrs), dtype

t0 = time.time(); n = 0; bad = 0
while time.time() - t0 < budget:
    op, shape, attrs, dtype = case(); thr = pick(1,2)
    # A few malformed problems: they must be refused with a message (exit
    # status 1), never crash.
    bad_input = R.random() < BAD_SHARE
    if bad_input:
        how = R.randrange(4)
        dims = shape.split("x")
        if how == 0: dims[R.randrange(len(dims))] = pick("0", "-3", "4294967297")
        elif how == 1: dims = dims + ["7"] * pick(1, 5)
        elif how == 2: attrs = (attrs + "," if attrs else "") + pick("bogus=1", "axis=9", "format=5", "groups=7", "kind=9", "perm=99")
        else: dtype = pick("f64", "i8", "u16")
        shape = "x".join(dims)
    cmd = [K, "tune", op, "--shape", shape, "--threads", str(thr), "--no-store", "--min-time", "0.0002", "--device", DEV]
    if attrs: cmd += ["--attrs", attrs]
    if dtype: cmd += ["--dtype", dtype]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        print("TIMEOUT", " ".join(cmd), flush=True); continue
    n += 1
    if n % 25 == 0: print(f"... {n} cases, {bad} failing, {time.time()-t0:.0f} s", flush=True)
    out = p.stdout + p.stderr
    fails = [l for l in out.splitlines() if re.match(r"^\[\d+/\d+\]", l) and not re.search(r"\d ms$", l)]
    # A candidate its plan rejects for this shape is fine (a note); a wrong
    # result, an unwritten output or a failing run is not.
    real = [l for l in fails if re.search(r"differ from the reference|never written|\bnan\b|crash|signal", l, re.I)]
    # rc 1 with every candidate refused (a dtype or form this device lacks,
    # named in each line) is a refusal, not a failure; a crash never is.
    refused_all = p.returncode == 1 and fails and not real and len(fails) == len(
        [l for l in out.splitlines() if re.match(r"^\[\d+/\d+\]", l)])
    if bad_input:
        if p.returncode not in (0, 1) or (p.returncode == 1 and "error" not in out):
            bad += 1
            print("FAIL (malformed input not refused cleanly) rc=%d %s" % (p.returncode, " ".join(cmd)), flush=True)
            for l in out.splitlines()[-4:]: print("   ", l[:400], flush=True)
        continue
    if real or (p.returncode != 0 and not refused_all):
        bad += 1
        print("FAIL rc=%d %s" % (p.returncode, " ".join(cmd)), flush=True)
        for l in (real or out.splitlines()[-5:])[:6]: print("   ", l[:400], flush=True)
    elif fails:
        print("note %s: %d rejected (%s)" % (" ".join(cmd[2:]), len(fails), fails[0][:200]), flush=True)
print(f"done: {n} cases, {bad} failing", flush=True)
os.remove(K)
sys.exit(1 if bad else 0)
