"""One side (real MLX or cmlx) of the mlx-lm task comparison: a training
step (full fine-tune, LoRA, DoRA), the batch generator, mlx_lm.generate on
a saved model directory, mlx_lm.convert (4-bit) of it, and mlx_lm.server on
loopback answering one completion request.

Run by tests/ecosystem/test_mlx_lm_tasks.py, once per side:

    python mlx_lm_tasks_driver.py --side mlx|cmlx --dir D

The MLX side makes the starting state (model weights, a model directory
as a Hugging Face checkpoint has it with a word-level tokenizer built
offline, and the LoRA/DoRA adapters' initial values, which are random)
and saves it under D/start;
both sides load it, so differences come from compute only.  Each task
saves its results into D/SIDE/TASK.npz; D/SIDE/status.json maps each task
to "ok" or its error.
"""

import argparse
import json
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mlx_lm_models_driver import build, config_of, to_numpy  # noqa: E402

MODEL = "llama"
# A batch of two sequences of different lengths: default_loss masks the
# positions outside [lengths[:, 0], lengths[:, 1]].
BATCH = [[1, 5, 9, 13, 17, 21, 25, 29, 33, 37], [2, 4, 8, 16, 32, 64, 28, 56, 12, 0]]
LENGTHS = [[1, 9], [2, 6]]
# Plain SGD: the updated weights then differ only as the gradients do
# (Adam's first step is lr * sign(g), which flips for gradients near zero).
LR = 0.5
LORA = {"rank": 4, "scale": 10.0, "dropout": 0.0}
# Continuous batching: prompts of different lengths, more of them than fit
# in one prefill batch, with different token budgets.
BATCH_PROMPTS = [[3, 14, 15], [92, 65, 35, 89, 79, 32, 38, 46], [2, 71], [82, 81, 82, 8, 45]]
BATCH_MAX_TOKENS = [8, 5, 12, 1]
# The batch generator on models with each kind of batched cache: KV,
# rotating (sliding window 8, shorter than prompt plus budget), SSM state,
# gated-delta state, hybrid, and a mixture of experts.
BATCH_MODELS = ("llama", "gemma3_text", "mamba", "qwen3_next", "falcon_h1", "mixtral")
GEN_PROMPT = "w5 w17 w29 w41 w53"
TASKS = ("full", "lora", "dora", "generate", "convert", "server") + tuple(
    f"batch_generator:{n}" for n in BATCH_MODELS
)


def load_model(start, name=MODEL):
    m = build(name)
    f = "weights.safetensors" if name == MODEL else f"weights_{name}.safetensors"
    m.load_weights(os.path.join(start, f), strict=True)
    return m


def adapt(model, task, side, start):
    """Turns the model's linear layers into LoRA/DoRA ones; the MLX side
    saves their random initial values, the cmlx side loads them."""
    from mlx.utils import tree_flatten
    from mlx_lm.tuner.utils import linear_to_lora_layers
    import mlx.core as mx

    model.freeze()
    linear_to_lora_layers(model, 2, dict(LORA), use_dora=task == "dora")
    path = os.path.join(start, f"{task}_adapters.safetensors")
    if side == "mlx":
        # lora_b starts at zero; random values make its gradient reach lora_a.
        mx.random.seed(1)
        params = dict(tree_flatten(model.trainable_parameters()))
        for k, v in params.items():
            if k.endswith("lora_b"):
                params[k] = mx.random.normal(v.shape, scale=0.05)
        mx.save_safetensors(path, params)
    model.load_weights(path, strict=False)


def train_step(task, side, start, out):
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_flatten
    from mlx_lm.tuner.trainer import default_loss

    model = load_model(start)
    if task != "full":
        adapt(model, task, side, start)
    opt = optim.SGD(learning_rate=LR)
    loss_grad = nn.value_and_grad(model, default_loss)
    batch, lengths = mx.array(BATCH), mx.array(LENGTHS)
    (loss, ntoks), grads = loss_grad(model, batch, lengths)
    opt.update(model, grads)
    mx.eval(model.parameters(), opt.state)
    (loss2, _), _ = loss_grad(model, batch, lengths)
    out["loss"] = to_numpy(loss)
    out["ntoks"] = to_numpy(ntoks)
    out["loss_after"] = to_numpy(loss2)
    for k, v in tree_flatten(grads):
        out[f"grad:{k}"] = to_numpy(v)
    for k, v in tree_flatten(model.trainable_parameters()):
        out[f"param:{k}"] = to_numpy(v)


def batch_generator(side, start, out, name):
    from mlx_lm.generate import BatchGenerator

    model = load_model(start, name)
    gen = BatchGenerator(model, max_tokens=16, prefill_batch_size=2, completion_batch_size=3)
    uids = gen.insert(BATCH_PROMPTS, BATCH_MAX_TOKENS)
    tokens = {u: [] for u in uids}
    reasons = {}
    while responses := gen.next_generated():
        for r in responses:
            tokens[r.uid].append(int(r.token))
            if r.finish_reason is not None:
                reasons[r.uid] = r.finish_reason
    gen.close()
    for i, u in enumerate(uids):
        out[f"tokens_{i}"] = np.array(tokens[u], dtype=np.int64)
        out[f"reason_{i}"] = np.array(reasons.get(u, ""))


def make_model_dir(start):
    """start/model: config.json, model.safetensors and a tokenizer (word
    level: "w3" .. "w99" are ids 3 .. 99; <unk>, <s>, </s> are 0, 1, 2)."""
    import shutil

    from tokenizers import Tokenizer, models, pre_tokenizers

    d = os.path.join(start, "model")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(start, "weights.safetensors"), os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_of(MODEL), f, indent=1)
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"w{i}": i for i in range(3, 100)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>",
                   "eos_token": "</s>", "unk_token": "<unk>", "model_max_length": 256}, f)


def generate_task(side, start, out):
    from mlx_lm import generate, load

    model, tok = load(os.path.join(start, "model"))
    text = generate(model, tok, prompt=GEN_PROMPT, max_tokens=16, verbose=False)
    out["text"] = np.array(text)


def convert_task(side, start, out):
    """4-bit conversion of the model directory; the converted model's
    files and its generation."""
    from mlx_lm import convert, generate, load

    qdir = os.path.join(start, f"q4_{side}")
    convert(os.path.join(start, "model"), qdir, quantize=True, q_group_size=32, q_bits=4)
    import mlx.core as mx

    for k, v in mx.load(os.path.join(qdir, "model.safetensors")).items():
        out[f"file:{k}"] = to_numpy(v)
        out[f"dtype:{k}"] = np.array(str(v.dtype))
    with open(os.path.join(qdir, "config.json")) as f:
        out["config"] = np.array(json.dumps(json.load(f), sort_keys=True))
    model, tok = load(qdir)
    out["text"] = np.array(generate(model, tok, prompt=GEN_PROMPT, max_tokens=16, verbose=False))


def server_task(side, start, out):
    """mlx_lm.server on 127.0.0.1 (a free port), one /v1/completions
    request with greedy decoding."""
    import socket
    import subprocess
    import time
    import urllib.request

    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    cmd = [sys.executable, "-m", "mlx_lm.server", "--model", os.path.join(start, "model"),
           "--host", "127.0.0.1", "--port", str(port)]
    log = open(os.path.join(start, f"server_{side}.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        body = json.dumps({"prompt": GEN_PROMPT, "max_tokens": 12, "temperature": 0.0}).encode()
        deadline = time.time() + 120
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                             {"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=60) as r:
                    reply = json.loads(r.read())
                break
            except (ConnectionError, urllib.error.URLError):
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"the server did not answer (exit {proc.poll()})")
                time.sleep(0.5)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    choice = reply["choices"][0]
    out["text"] = np.array(choice["text"])
    out["finish_reason"] = np.array(str(choice.get("finish_reason")))
    out["completion_tokens"] = np.array(int(reply["usage"]["completion_tokens"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mlx", "cmlx"), required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()

    import mlx.core as mx
    from mlx.utils import tree_flatten

    mx.set_default_device(mx.cpu)
    start = os.path.join(a.dir, "start")
    sdir = os.path.join(a.dir, a.side)
    os.makedirs(start, exist_ok=True)
    os.makedirs(sdir, exist_ok=True)
    if a.side == "mlx":
        mx.random.seed(0)
        m = build(MODEL)
        mx.save_safetensors(
            os.path.join(start, "weights.safetensors"), dict(tree_flatten(m.parameters()))
        )
        for n in BATCH_MODELS:
            if n != MODEL:
                mx.random.seed(0)
                m = build(n)
                mx.save_safetensors(
                    os.path.join(start, f"weights_{n}.safetensors"),
                    dict(tree_flatten(m.parameters())),
                )
        make_model_dir(start)
    status = {"_impl": mx.__file__}  # which library `mlx` was (the caller checks)
    for task in TASKS:
        out = {}
        try:
            if task.startswith("batch_generator:"):
                batch_generator(a.side, start, out, task.split(":")[1])
            elif task == "generate":
                generate_task(a.side, start, out)
            elif task == "convert":
                convert_task(a.side, start, out)
            elif task == "server":
                server_task(a.side, start, out)
            else:
                train_step(task, a.side, start, out)
            np.savez(os.path.join(sdir, f"{task.replace(':', '_')}.npz"), **out)
            status[task] = "ok"
        except Exception as e:
            status[task] = "".join(traceback.format_exception(e))[-3000:]
        with open(os.path.join(sdir, "status.json"), "w") as f:
            json.dump(status, f, indent=1)


if __name__ == "__main__":
    main()
