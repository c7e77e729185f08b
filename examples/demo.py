#!/usr/bin/env python3
"""cmlx end to end: train a small neural network on real data.

A two-layer MLP (64 -> 64 -> 10, tanh) learns to classify scikit-learn's
8x8 handwritten digits (1,797 images shipped inside the package).  The
model is written with raw cmlx ops; mx.value_and_grad differentiates the
cross-entropy loss, and plain SGD with momentum updates the parameters.
The random module comes later, so the initial weights come from a fixed
deterministic formula rather than a random generator.

Prints the loss as training goes and the final test accuracy.
"""

import math
import time

import numpy as np

import cmlx.core as mx


def load_digits_split(test_fraction=0.25):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixels 0..16 -> 0..1
    y = digits.target.astype(np.int32)
    # A fixed interleaved split: every 4th image is held out.
    test = np.arange(len(y)) % int(round(1 / test_fraction)) == 0
    return x[~test], y[~test], x[test], y[test]


def init_params(sizes):
    """Deterministic, well-scaled weights: a scaled cosine pattern."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        i = np.arange(fan_in)[:, None]
        j = np.arange(fan_out)[None, :]
        w = np.cos(1.7 * i + 2.3 * j + 0.5 * i * j) * math.sqrt(2.0 / (fan_in + fan_out))
        params.append({"w": mx.array(w.astype(np.float32)), "b": mx.zeros((fan_out,))})
    return params


def forward(params, x):
    h = x
    for k, layer in enumerate(params):
        h = h @ layer["w"] + layer["b"]
        if k < len(params) - 1:
            h = mx.tanh(h)
    return h


def loss_fn(params, x, onehot):
    logits = forward(params, x)
    # cross-entropy: logsumexp(logits) - logit of the true class
    return mx.mean(mx.logsumexp(logits, axis=1) - mx.sum(logits * onehot, axis=1))


def accuracy(params, x, y):
    pred = mx.argmax(forward(params, x), axis=1)
    return mx.mean((pred == y).astype(mx.float32)).item()


def main():
    xtr, ytr, xte, yte = load_digits_split()
    print(f"digits: {len(ytr)} training and {len(yte)} test images of 8x8 pixels")
    x_train, x_test = mx.array(xtr), mx.array(xte)
    y_train, y_test = mx.array(ytr), mx.array(yte)
    onehot = mx.array(np.eye(10, dtype=np.float32)[ytr])

    params = init_params([64, 64, 10])
    velocity = [{k: mx.zeros_like(v) for k, v in layer.items()} for layer in params]
    step = mx.value_and_grad(loss_fn)
    lr, momentum, batch = 0.1, 0.9, 128
    n = len(ytr)

    start = time.perf_counter()
    for epoch in range(1, 31):
        # a fixed per-epoch reordering (deterministic: no random module yet)
        order = mx.array(((np.arange(n) * (7919 * epoch + 1)) % n).astype(np.int32))
        for s in range(0, n, batch):
            idx = order[s : s + batch]
            loss, grads = step(params, x_train[idx], onehot[idx])
            for layer, vel, g in zip(params, velocity, grads):
                for k in layer:
                    vel[k] = momentum * vel[k] + g[k]
                    layer[k] = layer[k] - lr * vel[k]
            mx.eval(params, velocity, loss)
        if epoch % 5 == 0:
            print(f"epoch {epoch:2d}  loss {loss.item():.4f}  "
                  f"train acc {accuracy(params, x_train, y_train):.3f}")
    elapsed = time.perf_counter() - start
    acc = accuracy(params, x_test, y_test)
    print(f"trained in {elapsed:.2f} s; test accuracy {acc:.3f}")
    if acc < 0.9:
        raise SystemExit(f"test accuracy {acc:.3f} is unexpectedly low")


if __name__ == "__main__":
    main()
