"""One side (real MLX or cmlx) of the mlx-lm architecture comparison.

Run by tests/ecosystem/test_mlx_lm_models.py, once per side, in its own
interpreter (real MLX and cmlx cannot share a process; cmlx stands in for
``mlx`` through CMLX_AS_MLX=1):

    python mlx_lm_models_driver.py --side mlx  --dir D [--models a,b]
    python mlx_lm_models_driver.py --side cmlx --dir D [--models a,b]

The MLX side builds each model with a fixed seed and saves its weights
(D/weights/NAME.safetensors; parameters that start constant get small
random values about it); both sides then load those weights, so
differences come from compute only.  For each model and each variant
(float32, float16, 4-bit affine quantized with group size 32) a side saves
into D/SIDE/NAME.npz:

  logits_V     the logits of a whole prompt without a cache (B=1; float32
               also B=2),
  tokens_V     16 greedy tokens from mlx_lm's generate_step with the
               model's prompt cache (make_prompt_cache),
  steplp_V     the log-probabilities generate_step returned at each step
               (used to tell a real divergence from a near tie),
  qparam:NAME  the 4-bit model's parameters (packed weights, scales,
               biases), which must be bit-identical across sides.

D/SIDE/status.json maps each model to {variant: "ok" or the error (a
traceback)}, or to the error that stopped the model as a whole (weights
that do not load, say), and "started" names the model in progress, so
that the caller can tell a crash (a signal) from an error and restart the
side after the model that crashed (--resume).
"""

import argparse
import faulthandler
import importlib
import json
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mlx_lm_configs import BASE, CONFIGS, MLX_BROKEN  # noqa: E402

PROMPT = [[3, 14, 15, 92, 65, 35, 89, 79, 32, 38]]
PROMPT2 = PROMPT + [[2, 71, 82, 81, 82, 8, 45, 90, 45, 23]]
GEN_TOKENS = 16
QUANT = dict(group_size=32, bits=4)
MODEL_TIMEOUT_S = 90


def config_of(name):
    cfg = dict(BASE)
    cfg.update(CONFIGS[name])
    cfg["model_type"] = name
    return cfg


def build(name):
    import mlx_lm.models  # noqa: F401

    mod = importlib.import_module(f"mlx_lm.models.{name}")
    return mod.Model(mod.ModelArgs.from_dict(config_of(name)))


def to_numpy(a):
    import mlx.core as mx

    if mx.issubdtype(a.dtype, mx.floating):
        a = a.astype(mx.float32)
    return np.array(a)


def spread(p):
    """A parameter that starts constant (norm weights at one, biases and
    some heads at zero: talkie's lm_head makes constant logits) gets small
    random values about that constant, so that every parameter takes part
    in the comparison."""
    import mlx.core as mx

    if p.size < 2 or not mx.issubdtype(p.dtype, mx.floating):
        return p
    c = p.reshape(-1)[0]
    if not mx.all(p == c).item():
        return p
    noise = mx.random.normal(p.shape, dtype=mx.float32) * 0.1
    return (p.astype(mx.float32) + noise * mx.maximum(mx.abs(c), 1.0)).astype(p.dtype)


def run_variant(model, tag, out):
    """Logits of the prompt and 16 greedy tokens with the prompt cache."""
    import mlx.core as mx
    from mlx_lm.generate import generate_step
    from mlx_lm.models.cache import make_prompt_cache

    logits = model(mx.array(PROMPT))
    out[f"logits_{tag}"] = to_numpy(logits)
    if tag == "f32":
        out["logits_b2_f32"] = to_numpy(model(mx.array(PROMPT2)))
    cache = make_prompt_cache(model)
    tokens, steplp = [], []
    gen = generate_step(
        mx.array(PROMPT[0]), model, max_tokens=GEN_TOKENS, prompt_cache=cache
    )
    for tok, lp in gen:
        tokens.append(int(tok))
        steplp.append(to_numpy(lp).reshape(-1))
    out[f"tokens_{tag}"] = np.array(tokens, dtype=np.int64)
    out[f"steplp_{tag}"] = np.stack(steplp)


def run_model(name, side, wdir):
    import mlx.core as mx
    from mlx.utils import tree_flatten, tree_map
    from mlx_lm.utils import quantize_model

    wpath = os.path.join(wdir, f"{name}.safetensors")
    if side == "mlx":
        mx.random.seed(0)
        model = build(name)
        params = {k: spread(v) for k, v in tree_flatten(model.parameters())}
        mx.save_safetensors(wpath, params)

    def loaded():
        m = build(name)
        m.load_weights(wpath, strict=True)
        m.eval()
        return m

    if side == "mlx" and name in MLX_BROKEN:
        return {}, {t: "not run: " + MLX_BROKEN[name] for t in ("f32", "f16", "q4")}

    # A variant that fails (MLX's CPU GatherMM has no float16, say) is
    # recorded and the next one still runs.
    out, errors = {}, {}

    def attempt(tag, make):
        try:
            run_variant(make(), tag, out)
            errors[tag] = "ok"
        except Exception as e:
            errors[tag] = "".join(traceback.format_exception(e))[-3000:]

    def half():
        m = loaded()
        # MLX's CPU gather_mm raises for float16, and an exception thrown
        # inside its evaluation sometimes corrupts its heap (a later crash in
        # another model): MLX has no float16 reference for mixture-of-experts.
        if side == "mlx" and any(
            type(x).__name__ == "SwitchLinear" for _, x in m.named_modules()
        ):
            raise NotImplementedError(
                "no MLX reference: MLX's CPU GatherMM supports float32 only"
            )
        cast = lambda p: p.astype(mx.float16) if mx.issubdtype(p.dtype, mx.floating) else p
        m.update(tree_map(cast, m.parameters()))
        return m

    def quantized():
        m = loaded()
        quantize_model(m, {}, **QUANT)
        for k, v in tree_flatten(m.parameters()):
            out[f"qparam:{k}"] = to_numpy(v)
        return m

    attempt("f32", loaded)
    attempt("f16", half)
    attempt("q4", quantized)
    return out, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mlx", "cmlx"), required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--models", default="")
    ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()

    names = [n for n in a.models.split(",") if n] or sorted(CONFIGS)
    wdir = os.path.join(a.dir, "weights")
    sdir = os.path.join(a.dir, a.side)
    os.makedirs(wdir, exist_ok=True)
    os.makedirs(sdir, exist_ok=True)
    spath = os.path.join(sdir, "status.json")
    status = {}
    if a.resume and os.path.exists(spath):
        with open(spath) as f:
            status = json.load(f)
        # A model that killed the process is tried once more (real MLX's CPU
        # build crashes now and then with heap corruption, not always in the
        # same model); a second death is its result.
        crashed = status.pop("started", None)
        if crashed:
            deaths = status.setdefault("_deaths", {})
            deaths[crashed] = deaths.get(crashed, 0) + 1
            if deaths[crashed] >= 2:
                status[crashed] = "crashed or hung (the process died in this model twice)"

    def save_status():
        with open(spath + ".tmp", "w") as f:
            json.dump(status, f, indent=1)
        os.replace(spath + ".tmp", spath)

    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    status["_impl"] = mx.__file__  # which library `mlx` was (the caller checks)
    for name in names:
        if name in status:
            continue
        status["started"] = name
        save_status()
        # A model that hangs ends the process (with a traceback on stderr);
        # the caller resumes after it and reports it.
        faulthandler.dump_traceback_later(MODEL_TIMEOUT_S, exit=True)
        t0 = time.time()
        try:
            out, errors = run_model(name, a.side, wdir)
            np.savez(os.path.join(sdir, f"{name}.npz"), **out)
            status[name] = errors
        except BaseException as e:  # SystemExit too: a model file may exit
            if isinstance(e, KeyboardInterrupt):
                raise
            status[name] = "".join(traceback.format_exception(e))[-3000:]
        faulthandler.cancel_dump_traceback_later()
        status.pop("started")
        status.setdefault("_seconds", {})[name] = round(time.time() - t0, 3)
        save_status()


if __name__ == "__main__":
    main()
