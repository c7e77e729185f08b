"""One side (real MLX or cmlx) of the mlx-lm task comparison: a training
step (full fine-tune, LoRA, DoRA) and the batch generator.

Run by tests/ecosystem/test_mlx_lm_tasks.py, once per side:

    python mlx_lm_tasks_driver.py --side mlx|cmlx --dir D

The MLX side makes the starting state (model weights, and the LoRA/DoRA
adapters' initial values, which are random) and saves it under D/start;
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

from mlx_lm_models_driver import build, to_numpy  # noqa: E402

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
TASKS = ("full", "lora", "dora", "batch_generator")


def load_model(start):
    m = build(MODEL)
    m.load_weights(os.path.join(start, "weights.safetensors"), strict=True)
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


def batch_generator(side, start, out):
    from mlx_lm.generate import BatchGenerator

    model = load_model(start)
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
    status = {}
    for task in TASKS:
        out = {}
        try:
            if task == "batch_generator":
                batch_generator(a.side, start, out)
            else:
                train_step(task, a.side, start, out)
            np.savez(os.path.join(sdir, f"{task}.npz"), **out)
            status[task] = "ok"
        except Exception as e:
            status[task] = "".join(traceback.format_exception(e))[-3000:]
        with open(os.path.join(sdir, "status.json"), "w") as f:
            json.dump(status, f, indent=1)


if __name__ == "__main__":
    main()
