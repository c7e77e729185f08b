"""Language-model inference on the CPU: prefill and decode tokens per second
of cmlx running mlx-lm unchanged, beside llama.cpp (llama-cpp-python),
PyTorch (transformers) and real MLX, in one run.

    python benchmarks/bench_llm.py [--sizes 1b] [--formats f16,q4,q8]
                                   [--impls cmlx,mlx,torch,llama]
                                   [--prompt 512] [--gen 128] [--reps 3]

The model is a Llama with random weights (seeded), written once into
build/bench-llm/<size>/ as a Hugging Face folder (config.json and
model.safetensors in float16); every framework reads that folder:

  size   hidden  intermediate  layers  heads/kv  vocab
  0.5b   1024    2816          24      16/4      32000
  1b     2048    5632          16      16/4      32000
  3b     3072    8192          26      24/8      32000

Formats: f16 and bf16 (the weights as they are), q4 and q8 (mlx-lm's own
quantize_model, MLX affine with group size 64, against llama.cpp's Q4_0
and Q8_0 GGUF files written with the gguf package; PyTorch runs the
half formats only).

Each framework runs in its own process (cmlx stands in for mlx there
through the import alias, CMLX_AS_MLX=1), with the same thread count
(--threads, default all cores).  Prefill is the time to the first token
of a --prompt token prompt; decode is --gen greedy tokens after it with the
KV cache.  Each number is the median of --reps runs after a warm-up run.

Decode reads every weight once per token, so its bound is the streaming
read bandwidth (measured here: the fastest of cmlx's, NumPy's and
PyTorch's sum over 1 GiB) divided by the weight bytes per token; the
table gives each decode rate as a percentage of that bound.  Speed is
reported, never asserted.  llama-cpp-python is optional (it compiles
llama.cpp from source: `pip install llama-cpp-python`); a framework that
is not installed is skipped with a note.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = {  # hidden, intermediate, layers, heads, kv heads
    "tiny": (256, 704, 2, 4, 2),  # a smoke test of the script itself
    "0.5b": (1024, 2816, 24, 16, 4),
    "1b": (2048, 5632, 16, 16, 4),
    "3b": (3072, 8192, 26, 24, 8),
}
VOCAB = 32000
LLAMA_QTYPE = {"f16": "F16", "bf16": "BF16", "q4": "Q4_0", "q8": "Q8_0"}


# ------------------------------------------------------------ the model

def model_dir(size):
    return os.path.join(ROOT, "build", "bench-llm", size)


def config_of(size):
    h, inter, layers, heads, kv = SIZES[size]
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
            "intermediate_size": inter, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": VOCAB,
            "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 4096,
            "tie_word_embeddings": False, "hidden_act": "silu", "torch_dtype": "float16",
            "bos_token_id": 1, "eos_token_id": 2}


def tensor_shapes(cfg):
    h, inter, kvd = cfg["hidden_size"], cfg["intermediate_size"], \
        cfg["hidden_size"] // cfg["num_attention_heads"] * cfg["num_key_value_heads"]
    yield "model.embed_tokens.weight", (VOCAB, h)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (h,)
        yield p + "post_attention_layernorm.weight", (h,)
        for n, s in (("q_proj", (h, h)), ("k_proj", (kvd, h)), ("v_proj", (kvd, h)),
                     ("o_proj", (h, h))):
            yield p + "self_attn." + n + ".weight", s
        for n, s in (("gate_proj", (inter, h)), ("up_proj", (inter, h)), ("down_proj", (h, inter))):
            yield p + "mlp." + n + ".weight", s
    yield "model.norm.weight", (h,)
    yield "lm_head.weight", (VOCAB, h)


def make_model(size):
    """The random-weight folder (written once; the seed fixes it)."""
    import numpy as np
    from safetensors.numpy import save_file
    d = model_dir(size)
    if os.path.exists(os.path.join(d, "model.safetensors")):
        return d
    os.makedirs(d, exist_ok=True)
    cfg = config_of(size)
    rng = np.random.default_rng(0)
    tensors = {}
    for name, shape in tensor_shapes(cfg):
        if len(shape) == 1:
            tensors[name] = np.ones(shape, np.float16)
        else:  # scaled so activations stay O(1) through the layers
            std = 1.0 / np.sqrt(shape[1])
            tensors[name] = (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float16)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    return d


def weight_bytes_per_token(size, fmt):
    """Bytes of weights one decode step reads (every matrix but the
    embedding, which is a row lookup), in fmt's storage."""
    per = {"f16": 2.0, "bf16": 2.0, "q4": 0.5 + 4 / 64, "q8": 1.0 + 4 / 64}[fmt]
    n = sum(s[0] * s[1] for name, s in tensor_shapes(config_of(size))
            if len(s) == 2 and "embed_tokens" not in name)
    return n * per


def write_gguf(size, fmt):
    """The model as a GGUF file of llama.cpp's type for fmt."""
    import numpy as np
    import gguf
    from safetensors.numpy import load_file
    path = os.path.join(model_dir(size), f"model-{LLAMA_QTYPE[fmt]}.gguf")
    if os.path.exists(path):
        return path
    cfg = config_of(size)
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_rope_dimension_count(cfg["hidden_size"] // cfg["num_attention_heads"])
    w.add_vocab_size(VOCAB)
    # a vocabulary of placeholder pieces: llama.cpp needs one to load
    w.add_tokenizer_model("llama")
    toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    toks += [f"\u2581t{i}" for i in range(VOCAB - len(toks))]
    w.add_token_list(toks)
    w.add_token_scores([0.0] * VOCAB)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (VOCAB - 259))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    qtype = getattr(gguf.GGMLQuantizationType, LLAMA_QTYPE[fmt])
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight":
             "output_norm.weight", "lm_head.weight": "output.weight"}
    sub = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
           "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
           "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
           "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for name, t in load_file(os.path.join(model_dir(size), "model.safetensors")).items():
        if name in names:
            gname = names[name]
        else:
            i, rest = name.split(".")[2], ".".join(name.split(".")[3:-1])
            gname = f"blk.{i}.{sub[rest]}.weight"
        if t.ndim == 1:
            w.add_tensor(gname, t.astype(np.float32))
        elif fmt == "f16":
            w.add_tensor(gname, t)
        else:
            q = gguf.quants.quantize(t.astype(np.float32), qtype)
            w.add_tensor(gname, q, raw_shape=q.shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


# ------------------------------------------------------------ workers

def prompt_tokens(n):
    return [3 + (i * 7919) % (VOCAB - 3) for i in range(n)]


def timed_runs(run_once, reps):
    """run_once() -> (prefill seconds, decode seconds, tokens): a warm-up,
    then the median of reps."""
    run_once()
    res = [run_once() for _ in range(reps)]
    pre = statistics.median(r[0] for r in res)
    dec = statistics.median(r[1] for r in res)
    return pre, dec, res[0][2]


def worker_mlx_lm(a):
    """cmlx or MLX, through mlx-lm's own loading, quantizing and generate_step."""
    import mlx.core as mx
    from mlx_lm.generate import generate_step
    from mlx_lm.utils import load_model, quantize_model
    model, config = load_model(__import__("pathlib").Path(model_dir(a.size)))
    if a.format == "bf16":
        model.set_dtype(mx.bfloat16)
    elif a.format in ("q4", "q8"):
        model, config = quantize_model(model, config, group_size=64, bits=int(a.format[1:]),
                                       mode="affine")
    mx.eval(model.parameters())
    prompt = mx.array(prompt_tokens(a.prompt), mx.uint32)

    def once():
        t0 = time.perf_counter()
        toks = []
        for tok, _ in generate_step(prompt, model, max_tokens=a.gen + 1):
            if not toks:
                t1 = time.perf_counter()
            toks.append(int(tok))
        return t1 - t0, time.perf_counter() - t1, toks
    return timed_runs(once, a.reps)


def worker_torch(a):
    import torch
    from transformers import LlamaForCausalLM
    torch.set_num_threads(a.threads)
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[a.format]
    model = LlamaForCausalLM.from_pretrained(model_dir(a.size), torch_dtype=dt).eval()
    ids = torch.tensor([prompt_tokens(a.prompt)])

    @torch.inference_mode()
    def once():
        t0 = time.perf_counter()
        out = model(ids, use_cache=True)
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        t1 = time.perf_counter()
        past, toks = out.past_key_values, [int(tok)]
        for _ in range(a.gen):
            out = model(tok, past_key_values=past, use_cache=True)
            past, tok = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            toks.append(int(tok))
        return t1 - t0, time.perf_counter() - t1, toks
    return timed_runs(once, a.reps)


def worker_llama(a):
    import numpy as np
    import llama_cpp.llama_cpp as low
    if os.environ.get("BENCH_LLAMA_NO_EXTRA") == "1":
        # without llama.cpp's extra buffer types (AMX, repacked weights):
        # on a CPU with AMX whose use the machine does not grant, its AMX
        # matmul crashes
        default = low.llama_model_default_params

        def no_extra():
            p = default()
            p.use_extra_bufts = False
            return p
        low.llama_model_default_params = no_extra
    from llama_cpp import Llama
    path = write_gguf(a.size, a.format)
    llm = Llama(model_path=path, n_ctx=a.prompt + a.gen + 8, n_batch=a.prompt, n_ubatch=a.prompt,
                n_threads=a.threads, n_threads_batch=a.threads, verbose=False)
    prompt, n_vocab = prompt_tokens(a.prompt), llm.n_vocab()

    def greedy():  # the last position's logits, as llama.cpp left them
        return int(np.ctypeslib.as_array(low.llama_get_logits(llm._ctx.ctx), shape=(n_vocab,)).argmax())

    def once():
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        tok = greedy()
        t1 = time.perf_counter()
        toks = [tok]
        for _ in range(a.gen):
            llm.eval([tok])
            tok = greedy()
            toks.append(tok)
        return t1 - t0, time.perf_counter() - t1, toks
    return timed_runs(once, a.reps)


WORKERS = {"cmlx": worker_mlx_lm, "mlx": worker_mlx_lm, "torch": worker_torch,
           "llama": worker_llama}


def bandwidth_gbs():
    """The streaming read rate: the best of the frameworks' sums of 1 GiB."""
    import numpy as np
    x = np.ones(1 << 28, np.float32)
    best = []
    ts = []
    for _ in range(5):
        t0 = time.perf_counter(); x.sum(); ts.append(time.perf_counter() - t0)
    best.append(("numpy", x.nbytes / min(ts) / 1e9))
    try:
        import torch
        tx = torch.from_numpy(x)
        ts = []
        for _ in range(5):
            t0 = time.perf_counter(); tx.sum(); ts.append(time.perf_counter() - t0)
        best.append(("torch", x.nbytes / min(ts) / 1e9))
    except ImportError:
        pass
    return best


# ------------------------------------------------------------ the driver

def run_worker(impl, size, fmt, a, extra_env=None):
    env = dict(os.environ, **(extra_env or {}), OMP_NUM_THREADS=str(a.threads), CMLX_NUM_THREADS=str(a.threads))
    pypath = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    import importlib.util
    if importlib.util.find_spec("mlx_lm") is None:  # no installed mlx-lm: the suite's copy
        suite = os.path.join(os.path.dirname(ROOT), "shared", "mlx-lm-suite")
        if os.path.isdir(os.path.join(suite, "mlx_lm")):
            pypath.append(suite)
    if impl == "cmlx":
        env["CMLX_AS_MLX"] = "1"
        pypath.insert(0, os.path.join(ROOT, "build", "pkg"))
    env["PYTHONPATH"] = os.pathsep.join(pypath)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", impl, "--sizes", size,
           "--formats", fmt, "--prompt", str(a.prompt), "--gen", str(a.gen), "--reps", str(a.reps),
           "--threads", str(a.threads)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if p.returncode < 0:
        return None, f"signal {-p.returncode}"
    if p.returncode or not lines:
        err = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return None, err[:160]
    return json.loads(lines[-1][7:]), ""


def available(impl):
    mod = {"cmlx": None, "mlx": "mlx.core", "torch": "transformers", "llama": "llama_cpp"}[impl]
    if mod is None:
        return os.path.isdir(os.path.join(ROOT, "build", "pkg", "cmlx"))
    try:
        __import__(mod)
        return True
    except Exception:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1b")
    ap.add_argument("--formats", default="f16,q4,q8")
    ap.add_argument("--impls", default="cmlx,mlx,torch,llama")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--worker")
    a = ap.parse_args()
    if a.worker:  # one framework, one size, one format, in this process
        a.size, a.format = a.sizes, a.formats
        pre, dec, toks = WORKERS[a.worker](a)
        print("RESULT " + json.dumps({"prefill": pre, "decode": dec, "tokens": toks}), flush=True)
        return
    sizes, fmts = a.sizes.split(","), a.formats.split(",")
    impls = [i for i in a.impls.split(",") if i]
    bw = bandwidth_gbs()
    bound_gbs = max(v for _, v in bw)
    print(f"# bench_llm: {time.strftime('%Y-%m-%d')}, {a.threads} threads, prompt {a.prompt}, "
          f"{a.gen} decoded tokens, median of {a.reps}; load {os.getloadavg()[0]:.2f}")
    print("# streaming read: " + ", ".join(f"{n} {v:.1f} GB/s" for n, v in bw))
    rows = []
    for size in sizes:
        make_model(size)
        for fmt in fmts:
            per_tok = weight_bytes_per_token(size, fmt)
            bound = bound_gbs * 1e9 / per_tok
            res = {}
            for impl in impls:
                if impl == "torch" and fmt not in ("f16", "bf16"):
                    continue
                if not available(impl):
                    print(f"# {impl}: not installed, skipped")
                    continue
                r, err = run_worker(impl, size, fmt, a)
                if r is None and impl == "llama" and err.startswith("signal"):
                    print(f"# llama {size} {fmt}: {err}; again without its extra buffer types")
                    r, err = run_worker(impl, size, fmt, a, {"BENCH_LLAMA_NO_EXTRA": "1"})
                    if r is not None:
                        r["note"] = "no AMX/repack"
                if r is None:
                    print(f"# {impl} {size} {fmt}: failed: {err}")
                    continue
                res[impl] = r
            base = res.get("cmlx")
            for impl, r in res.items():
                pre_tps, dec_tps = a.prompt / r["prefill"], a.gen / r["decode"]
                row = [size, fmt, impl, f"{pre_tps:.1f}", f"{dec_tps:.2f}",
                       f"{100 * dec_tps / bound:.0f}%"]
                if base and impl != "cmlx":
                    row += [f"{(a.prompt / base['prefill']) / pre_tps:.2f}x",
                            f"{(a.gen / base['decode']) / dec_tps:.2f}x"]
                    if impl == "mlx":  # the same greedy tokens, as mlx-lm on MLX
                        row.append("same tokens" if r["tokens"] == base["tokens"] else
                                   "TOKENS DIFFER")
                    elif "note" in r:
                        row.append(r["note"])
                rows.append(row)
            print(f"# {size} {fmt}: {per_tok / 1e9:.2f} GB of weights per token, "
                  f"bound {bound:.1f} tok/s", flush=True)
    head = ["size", "format", "framework", "prefill tok/s", "decode tok/s", "% of bound",
            "cmlx/x prefill", "cmlx/x decode", "check"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r + [""] * (len(head) - len(r))) + " |")


if __name__ == "__main__":
    main()
