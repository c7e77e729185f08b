#!/usr/bin/env python3
"""A small character-level transformer language model, trained with cmlx.

The text is the documentation that ships with Python itself: the docstrings
of a fixed list of standard-library modules and of their public classes and
functions (always present, nothing downloaded).  The model is a stack of
pre-norm decoder blocks written with cmlx.nn: causal self-attention through
mx.fast.scaled_dot_product_attention with rotary position embeddings
(nn.RoPE), and a GELU MLP.  AdamW trains it for a few hundred steps; then it
samples text from a prompt with a key/value cache, one character at a time.

    python examples/transformer_lm.py [--steps N] [--prompt TEXT]
"""

import argparse
import importlib
import inspect
import math
import time

import numpy as np

import cmlx.core as mx
import cmlx.nn as nn
import cmlx.optimizers as optim
from cmlx.utils import tree_flatten

MODULES = [
    "argparse", "bisect", "collections", "contextlib", "csv", "dataclasses", "difflib",
    "enum", "fractions", "functools", "heapq", "json", "pathlib", "random", "shutil",
    "statistics", "string", "tempfile", "textwrap", "unittest",
]  # fmt: skip


def stdlib_text(modules=MODULES):
    """Docstrings of the modules and their public members, in a fixed order."""
    parts = []
    for name in modules:
        mod = importlib.import_module(name)
        docs = [inspect.getdoc(mod)]
        for attr in sorted(getattr(mod, "__all__", None) or dir(mod)):
            obj = getattr(mod, attr, None)
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue
            docs.append(inspect.getdoc(obj))
        parts.extend(d for d in docs if d)
    return "\n\n".join(parts)


class Vocab:
    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, s):
        return [self.index[c] for c in s if c in self.index]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


class Attention(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dims, 3 * dims, bias=False)
        self.out = nn.Linear(dims, dims, bias=False)
        self.rope = nn.RoPE(dims // heads)

    def __call__(self, x, cache=None):
        b, t, d = x.shape
        q, k, v = mx.split(self.qkv(x), 3, axis=-1)
        q, k, v = (a.reshape(b, t, self.heads, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        offset = 0 if cache is None else cache[0].shape[2]
        q, k = self.rope(q, offset=offset), self.rope(k, offset=offset)
        if cache is not None:
            k = mx.concatenate([cache[0], k], axis=2)
            v = mx.concatenate([cache[1], v], axis=2)
        scale = 1.0 / math.sqrt(q.shape[-1])
        # a causal mask is needed only when several new positions attend at once
        mask = "causal" if t > 1 else None
        y = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return self.out(y.transpose(0, 2, 1, 3).reshape(b, t, d)), (k, v)


class Block(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dims)
        self.attn = Attention(dims, heads)
        self.norm2 = nn.LayerNorm(dims)
        self.mlp = nn.Sequential(nn.Linear(dims, 4 * dims), nn.GELU(), nn.Linear(4 * dims, dims))

    def __call__(self, x, cache=None):
        h, cache = self.attn(self.norm1(x), cache)
        x = x + h
        return x + self.mlp(self.norm2(x)), cache


class CharLM(nn.Module):
    def __init__(self, vocab_size, dims=128, heads=4, layers=3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dims)
        self.blocks = [Block(dims, heads) for _ in range(layers)]
        self.norm = nn.LayerNorm(dims)
        self.head = nn.Linear(dims, vocab_size)

    def __call__(self, ids, caches=None):
        x = self.embed(ids)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, c = block(x, None if caches is None else caches[i])
            new_caches.append(c)
        return self.head(self.norm(x)), new_caches


def loss_fn(model, x, y):
    logits, _ = model(x)
    return nn.losses.cross_entropy(logits, y, reduction="mean")


def batches(data, seq, batch, rng):
    while True:
        starts = rng.integers(0, len(data) - seq - 1, batch)
        x = np.stack([data[s : s + seq] for s in starts])
        y = np.stack([data[s + 1 : s + seq + 1] for s in starts])
        yield mx.array(x), mx.array(y)


def train(steps=300, seq=64, batch=32, lr=3e-3, seed=0, dims=128, layers=3, log=print):
    text = stdlib_text()
    vocab = Vocab(text)
    data = np.array(vocab.encode(text), np.int32)
    split = int(0.95 * len(data))
    train_data, val_data = data[:split], data[split:]
    log(f"text: {len(text):,} characters of stdlib docstrings, {len(vocab)} distinct")

    mx.random.seed(seed)
    model = CharLM(len(vocab), dims=dims, layers=layers)
    mx.eval(model.parameters())
    nparams = sum(p.size for _, p in tree_flatten(model.parameters()))
    log(f"model: {layers} blocks, d={dims}, {nparams / 1e6:.2f}M parameters")
    warmup = max(steps // 10, 1)
    schedule = optim.join_schedules(
        [optim.linear_schedule(lr / warmup, lr, warmup), optim.cosine_decay(lr, steps - warmup)],
        [warmup],
    )
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=0.01)
    step = nn.value_and_grad(model, loss_fn)
    rng = np.random.default_rng(seed)
    stream = batches(train_data, seq, batch, rng)
    val_x, val_y = next(batches(val_data, seq, 64, np.random.default_rng(seed + 1)))

    losses = []
    start = time.perf_counter()
    for i in range(1, steps + 1):
        x, y = next(stream)
        model.train()
        loss, grads = step(model, x, y)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state, loss)
        losses.append(loss.item())
        if i % 50 == 0 or i == steps:
            model.eval()
            val = loss_fn(model, val_x, val_y).item()
            rate = i * batch * seq / (time.perf_counter() - start)
            log(
                f"step {i:4d}/{steps}  train loss {np.mean(losses[-50:]):.3f}  "
                f"val loss {val:.3f}  ({rate:,.0f} chars/s)"
            )
    return model, vocab, losses


def generate(model, vocab, prompt, length=300, temperature=0.8, seed=0):
    """Samples `length` characters after `prompt`, feeding one token at a time
    through the key/value cache."""
    model.eval()
    key = mx.random.key(seed)
    ids = mx.array([vocab.encode(prompt) or [0]])
    logits, caches = model(ids)
    out = []
    for _ in range(length):
        key, sub = mx.random.split(key)
        nxt = mx.random.categorical(logits[:, -1, :] / temperature, key=sub)
        mx.eval(nxt)
        out.append(nxt.item())
        logits, caches = model(nxt.reshape(1, 1), caches)
    return vocab.decode(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prompt", default="Return the ")
    ap.add_argument("--length", type=int, default=300)
    args = ap.parse_args(argv)
    model, vocab, losses = train(steps=args.steps, seed=args.seed)
    print(f"\nsample (temperature 0.8) after {args.prompt!r}:\n")
    print(args.prompt + generate(model, vocab, args.prompt, args.length, seed=args.seed))
    return model, vocab, losses


if __name__ == "__main__":
    main()
