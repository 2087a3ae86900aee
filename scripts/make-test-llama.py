#!/usr/bin/env python3
"""Small random-weight llama GGUF files (dense or Mixtral-style mixture of
experts) and their golden greedy tokens, computed by an independent float64
NumPy forward pass of the file as written.

    python3 scripts/make-test-llama.py OUT.gguf [--moe E,K] [--dim 64] [--layers 2]
        [--heads 4] [--kv-heads 2] [--ffn 96] [--ctx 64] [--type f32|f16] [--tied]
        [--rope-base 10000] [--rms-eps 1e-5] [--seed 1] [--name NAME] [--golden OUT.txt] [-n 24]
    python3 scripts/make-test-llama.py --check-forward MODEL.gguf [-n 64]

The vocabulary (512 tokens, SentencePiece "llama") is copied from
stories260K.gguf (../shared/models/gguf/, or --vocab-from). The forward pass
follows llama2.c and llama.cpp's `llama` architecture: RMSNorm, RoPE on
adjacent pairs ("normal" rope), grouped-query attention, SwiGLU, and for MoE
layers Mixtral's routing: softmax over all router logits, the top-k experts,
their probabilities renormalised to sum to 1. The golden file records, per
step, the token and the gap between the two largest logits, so a reader can
see that float32 rounding cannot flip the argmax; its header also lists
common implementation mistakes and the first step at which each changes the
tokens, so the golden ids are known to tell them apart."""
import argparse
import hashlib
import os
import sys

try:
    import numpy as np
    import gguf
except ImportError:
    sys.exit("make-test-llama.py needs numpy and gguf: pip install gguf numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_VOCAB = os.path.join(HERE, "..", "..", "shared", "models", "gguf", "stories260K.gguf")


# ---------------------------------------------------------------- the model file


def read_vocab(path):
    """The tokenizer keys of a llama GGUF file, to copy into a new one."""
    r = gguf.GGUFReader(path)
    f = r.fields
    model = f["tokenizer.ggml.model"].contents()
    if model != "llama":
        sys.exit(f"{path}: tokenizer.ggml.model is {model!r}, expected 'llama'")
    return {
        "tokens": f["tokenizer.ggml.tokens"].contents(),
        "scores": f["tokenizer.ggml.scores"].contents(),
        "types": f["tokenizer.ggml.token_type"].contents(),
        "bos": f["tokenizer.ggml.bos_token_id"].contents(),
        "eos": f["tokenizer.ggml.eos_token_id"].contents(),
        "unk": f["tokenizer.ggml.unknown_token_id"].contents(),
    }


def random_weights(a, vocab_size):
    """Name -> float32 array (numpy shape = reversed GGML ne) in llama.cpp's
    layout. Matrices are N(0, 1/sqrt(fan_in)) so activations stay O(1); norms
    are near 1; the router is scaled up so that top-k choices are decisive, and
    a separate output head so that the top-2 logit margins are large."""
    rng = np.random.default_rng(a.seed)
    head_dim = a.dim // a.heads
    q_dim, kv_dim = a.heads * head_dim, a.kv_heads * head_dim

    def mat(*shape, scale=1.0):  # the last numpy axis is the fan-in (ne[0])
        return (rng.standard_normal(shape) * scale / np.sqrt(shape[-1])).astype(np.float32)

    def norm():
        return (1.0 + 0.1 * rng.standard_normal(a.dim)).astype(np.float32)

    # A tied head scores tokens by their embedding: unit-variance embeddings
    # would dominate the residual stream, and every step would repeat its input.
    embed_std = 1.0 / np.sqrt(a.dim) if a.tied else 1.0
    w = {"token_embd.weight": (embed_std * rng.standard_normal((vocab_size, a.dim))).astype(np.float32),
         "output_norm.weight": norm()}
    if not a.tied:
        w["output.weight"] = mat(vocab_size, a.dim, scale=a.head_scale)
    for layer in range(a.layers):
        b = f"blk.{layer}."
        w[b + "attn_norm.weight"] = norm()
        w[b + "attn_q.weight"] = mat(q_dim, a.dim)
        w[b + "attn_k.weight"] = mat(kv_dim, a.dim)
        w[b + "attn_v.weight"] = mat(kv_dim, a.dim)
        w[b + "attn_output.weight"] = mat(a.dim, q_dim)
        w[b + "ffn_norm.weight"] = norm()
        if a.experts == 0:
            w[b + "ffn_gate.weight"] = mat(a.ffn, a.dim)
            w[b + "ffn_up.weight"] = mat(a.ffn, a.dim)
            w[b + "ffn_down.weight"] = mat(a.dim, a.ffn)
        else:
            w[b + "ffn_gate_inp.weight"] = mat(a.experts, a.dim, scale=a.router_scale)
            w[b + "ffn_gate_exps.weight"] = mat(a.experts, a.ffn, a.dim)
            w[b + "ffn_up_exps.weight"] = mat(a.experts, a.ffn, a.dim)
            w[b + "ffn_down_exps.weight"] = mat(a.experts, a.dim, a.ffn)
    return w


def write_model(a, path):
    vocab = read_vocab(a.vocab_from)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name(os.path.splitext(os.path.basename(path))[0] if a.name is None else a.name)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if a.type == "f32" else gguf.LlamaFileType.MOSTLY_F16)
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.dim)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ffn)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_dimension_count(a.dim // a.heads)
    w.add_rope_freq_base(a.rope_base)
    w.add_layer_norm_rms_eps(a.rms_eps)
    if a.experts:
        w.add_expert_count(a.experts)
        w.add_expert_used_count(a.experts_used)
    w.add_tokenizer_model("llama")
    w.add_token_list(vocab["tokens"])
    w.add_token_scores(vocab["scores"])
    w.add_token_types(vocab["types"])
    w.add_bos_token_id(vocab["bos"])
    w.add_eos_token_id(vocab["eos"])
    w.add_unk_token_id(vocab["unk"])
    for name, t in random_weights(a, len(vocab["tokens"])).items():
        # Like llama.cpp's converters, vectors (the norms) stay f32.
        w.add_tensor(name, t.astype(np.float16) if a.type == "f16" and t.ndim > 1 else t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ---------------------------------------------------------------- the reference forward pass


class Model:
    """A llama GGUF file read back: hyper-parameters and float64 weights."""

    def __init__(self, path):
        r = gguf.GGUFReader(path)
        f = r.fields

        def key(name, default=None):
            if name in f:
                return f[name].contents()
            if default is None:
                sys.exit(f"{path}: {name} is absent")
            return default

        if key("general.architecture") != "llama":
            sys.exit(f"{path}: general.architecture is not 'llama'")
        self.dim = key("llama.embedding_length")
        self.layers = key("llama.block_count")
        self.heads = key("llama.attention.head_count")
        self.kv_heads = key("llama.attention.head_count_kv", self.heads)
        self.head_dim = key("llama.attention.key_length", self.dim // self.heads)
        self.rope_dims = key("llama.rope.dimension_count", self.head_dim)
        self.rope_base = float(key("llama.rope.freq_base", 10000.0))
        factor = float(key("llama.rope.scaling.factor", 0.0))
        self.rope_scale = 1.0 / factor if factor > 0 else 1.0
        self.eps = float(key("llama.attention.layer_norm_rms_epsilon", 1e-5))
        self.experts = key("llama.expert_count", 0)
        self.experts_used = key("llama.expert_used_count", 0)
        self.bos = key("tokenizer.ggml.bos_token_id", 1)
        self.w = {}
        for t in r.tensors:
            if t.tensor_type not in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
                sys.exit(f"{path}: tensor {t.name} is {t.tensor_type.name}; the reference reads f32 and f16 only")
            self.w[t.name] = np.asarray(t.data, dtype=np.float64).reshape([int(n) for n in reversed(t.shape)])
        self.tied = "output.weight" not in self.w


# Implementation mistakes that the golden ids should expose (see --golden).
VARIANTS = {
    "moe-no-renormalise": "top-k weights are the full softmax probabilities, not renormalised",
    "moe-top1": "only the best expert",
    "moe-all-experts": "every expert, weighted by the full softmax",
    "rope-halves": "RoPE on (i, i + d/2) pairs (NeoX style) instead of adjacent pairs",
    "rope-base-10000": "RoPE base 10000 whatever the metadata says",
    "gqa-modulo": "query head h reads KV head h % n_kv instead of h / (n_heads / n_kv)",
    "tied-head": "logits from token_embd.weight even when output.weight exists",
    "eps-1e-5": "RMSNorm eps 1e-5 whatever the metadata says",
}


def variant_applies(m, v):
    if v.startswith("moe-"):
        return m.experts > 0 and not (v == "moe-top1" and m.experts_used == 1)
    return {"rope-base-10000": m.rope_base != 10000.0, "tied-head": not m.tied,
            "gqa-modulo": 1 < m.kv_heads < m.heads, "eps-1e-5": abs(m.eps - 1e-5) > 1e-12}.get(v, True)


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


class Forward:
    """One token at a time with a KV cache, in float64."""

    def __init__(self, m, ctx, variant=None):
        self.m, self.v = m, variant
        kv = m.kv_heads * m.head_dim
        self.k = np.zeros((m.layers, ctx, kv))
        self.vc = np.zeros((m.layers, ctx, kv))
        self.pos = 0
        self.router_gaps = []  # per layer and step: logit k minus logit k+1 (sorted)

    def rope(self, x):  # x: (heads, head_dim)
        m = self.m
        base = 10000.0 if self.v == "rope-base-10000" else m.rope_base
        half = m.rope_dims // 2
        theta = self.pos * m.rope_scale * base ** (-2.0 * np.arange(half) / m.rope_dims)
        c, s = np.cos(theta), np.sin(theta)
        y = x.copy()
        if self.v == "rope-halves":
            a, b = x[:, :half], x[:, half:2 * half]
            y[:, :half], y[:, half:2 * half] = a * c - b * s, a * s + b * c
        else:
            a, b = x[:, 0:2 * half:2], x[:, 1:2 * half:2]
            y[:, 0:2 * half:2], y[:, 1:2 * half:2] = a * c - b * s, a * s + b * c
        return y

    def attention(self, layer, xn):
        m, w, b = self.m, self.m.w, f"blk.{layer}."
        q = self.rope((w[b + "attn_q.weight"] @ xn).reshape(m.heads, m.head_dim))
        k = self.rope((w[b + "attn_k.weight"] @ xn).reshape(m.kv_heads, m.head_dim))
        self.k[layer, self.pos] = k.reshape(-1)
        self.vc[layer, self.pos] = w[b + "attn_v.weight"] @ xn
        keys = self.k[layer, :self.pos + 1].reshape(self.pos + 1, m.kv_heads, m.head_dim)
        vals = self.vc[layer, :self.pos + 1].reshape(self.pos + 1, m.kv_heads, m.head_dim)
        group = m.heads // m.kv_heads
        out = np.empty((m.heads, m.head_dim))
        for h in range(m.heads):
            g = h % m.kv_heads if self.v == "gqa-modulo" else h // group
            att = softmax(keys[:, g] @ q[h] / np.sqrt(m.head_dim))
            out[h] = att @ vals[:, g]
        return w[b + "attn_output.weight"] @ out.reshape(-1)

    def dense_ffn(self, layer, xn):
        w, b = self.m.w, f"blk.{layer}."
        h = silu(w[b + "ffn_gate.weight"] @ xn) * (w[b + "ffn_up.weight"] @ xn)
        return w[b + "ffn_down.weight"] @ h

    def moe_ffn(self, layer, xn):
        m, w, b = self.m, self.m.w, f"blk.{layer}."
        logits = w[b + "ffn_gate_inp.weight"] @ xn
        p = softmax(logits)
        order = np.argsort(-logits, kind="stable")
        k = 1 if self.v == "moe-top1" else m.experts if self.v == "moe-all-experts" else m.experts_used
        if m.experts_used < m.experts:
            self.router_gaps.append(logits[order[m.experts_used - 1]] - logits[order[m.experts_used]])
        chosen = order[:k]
        weights = p[chosen] if self.v in ("moe-no-renormalise", "moe-all-experts") else p[chosen] / p[chosen].sum()
        out = np.zeros(m.dim)
        for e, we in zip(chosen, weights):
            h = silu(w[b + "ffn_gate_exps.weight"][e] @ xn) * (w[b + "ffn_up_exps.weight"][e] @ xn)
            out += we * (w[b + "ffn_down_exps.weight"][e] @ h)
        return out

    def step(self, token):
        """The logits after feeding `token` at the current position."""
        m, w = self.m, self.m.w
        eps = 1e-5 if self.v == "eps-1e-5" else m.eps
        x = w["token_embd.weight"][token].copy()
        for layer in range(m.layers):
            b = f"blk.{layer}."
            x += self.attention(layer, rmsnorm(x, w[b + "attn_norm.weight"], eps))
            xn = rmsnorm(x, w[b + "ffn_norm.weight"], eps)
            x += self.moe_ffn(layer, xn) if m.experts else self.dense_ffn(layer, xn)
        self.pos += 1
        head = w["token_embd.weight"] if m.tied or self.v == "tied-head" else w["output.weight"]
        return head @ rmsnorm(x, w["output_norm.weight"], eps)


def greedy(m, n, variant=None):
    """n greedy tokens from BOS: (ids, top-2 logit margins, router gaps)."""
    f = Forward(m, n + 1, variant)
    ids, margins, tok = [], [], m.bos
    for _ in range(n):
        logits = f.step(tok)
        top2 = np.sort(logits)[-2:]
        tok = int(np.argmax(logits))
        ids.append(tok)
        margins.append(float(top2[1] - top2[0]))
    return ids, margins, f.router_gaps


# ---------------------------------------------------------------- outputs


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def write_golden(model_path, out, n, command):
    m = Model(model_path)
    ids, margins, gaps = greedy(m, n)
    lines = [
        "# Greedy decoding (argmax) from BOS by an independent float64 NumPy forward pass",
        "# (scripts/make-test-llama.py) of the model file beside this one.",
        f"# model {os.path.basename(model_path)}: sha256 {sha256(model_path)}",
        f"# command: {command}",
        f"# bos {m.bos}; {n} steps; smallest top-2 logit margin {min(margins):.6f}",
    ]
    if gaps:
        lines.append(f"# smallest router gap (logit of the k-th expert minus the next): {min(gaps):.6f}"
                     f" over {len(gaps)} routings")
    lines.append("# The ids change with these mistakes (first differing step, or 'same'):")
    for v, what in VARIANTS.items():
        if variant_applies(m, v):
            other = greedy(m, n, v)[0]
            diff = next((i for i, (p, q) in enumerate(zip(ids, other)) if p != q), None)
            lines.append(f"#   {v}: {'same' if diff is None else f'step {diff}'} ({what})")
    lines.append("# step token top1-top2-logit-margin")
    lines += [f"{i} {t} {g:.6f}" for i, (t, g) in enumerate(zip(ids, margins))]
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    # Below this a float32 implementation may legitimately pick another token or expert.
    if min(margins) < 1e-2 or (gaps and min(gaps) < 1e-2):
        print(f"warning: {out}: a near tie (margin or router gap < 0.01); try another --seed", file=sys.stderr)


def check_forward(path, n):
    ids, margins, gaps = greedy(Model(path), n)
    print(" ".join(map(str, ids)))
    print(f"smallest top-2 logit margin {min(margins):.6f}" +
          (f"; smallest router gap {min(gaps):.6f}" if gaps else ""))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", help="the GGUF file to write")
    p.add_argument("--check-forward", metavar="MODEL", help="print the greedy ids of MODEL from BOS and exit")
    p.add_argument("--golden", metavar="OUT", help="also write the golden greedy ids and margins here")
    p.add_argument("-n", type=int, default=None, help="greedy steps (24; 64 for --check-forward)")
    p.add_argument("--moe", metavar="E,K", help="E experts per layer, K used per token")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ffn", type=int, default=96)
    p.add_argument("--ctx", type=int, default=64)
    p.add_argument("--vocab", type=int, default=512, help="must be 512: the vocabulary is stories260K's")
    p.add_argument("--type", choices=["f32", "f16"], default="f32")
    p.add_argument("--tied", action="store_true", help="no output.weight (the head is token_embd.weight)")
    p.add_argument("--rope-base", type=float, default=10000.0)
    p.add_argument("--rms-eps", type=float, default=1e-5)
    p.add_argument("--head-scale", type=float, default=8.0, help="output.weight std times sqrt(dim)")
    p.add_argument("--router-scale", type=float, default=8.0, help="router std times sqrt(dim)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--name", help="general.name (default: the file's stem)")
    p.add_argument("--vocab-from", default=DEFAULT_VOCAB, help="the GGUF file whose tokenizer is copied")
    a = p.parse_args()
    a.experts, a.experts_used = (0, 0)
    if a.moe:
        a.experts, a.experts_used = (int(s) for s in a.moe.split(","))
        if not 1 <= a.experts_used <= a.experts:
            p.error("--moe E,K needs 1 <= K <= E")
    if not a.check_forward and not a.out:
        p.error("give OUT.gguf or --check-forward MODEL")
    if a.dim % a.heads or a.heads % a.kv_heads or (a.dim // a.heads) % 2:
        p.error("heads must divide dim, kv-heads must divide heads, and the head dim must be even")
    return a


def main():
    a = parse_args()
    if a.check_forward:
        check_forward(a.check_forward, a.n or 64)
        return
    vocab_size = len(read_vocab(a.vocab_from)["tokens"])
    if a.vocab != vocab_size:
        sys.exit(f"--vocab {a.vocab}: the vocabulary of {a.vocab_from} has {vocab_size} tokens")
    write_model(a, a.out)
    if a.golden:
        command = "python3 scripts/make-test-llama.py " + " ".join(
            os.path.relpath(s) if os.path.exists(s) else s for s in sys.argv[1:])
        write_golden(a.out, a.golden, a.n or 24, command)


if __name__ == "__main__":
    main()
