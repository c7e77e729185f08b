#!/usr/bin/env python3
"""cmlx end to end: train a convolutional network on real data.

A small CNN (two 3x3 convolutions with max pooling, then two linear layers)
learns to classify scikit-learn's 8x8 handwritten digits (1,797 images that
ship inside the package: nothing is downloaded).  It is written with
cmlx.nn and trained with cmlx.optimizers.AdamW under a cosine learning-rate
schedule; the only thing imported from outside cmlx is the data set.

For each epoch it prints the training loss and accuracy and the test
accuracy (with a progress bar on a terminal); then it saves the weights to a
.safetensors file, loads them into a fresh model, checks that the reloaded
model predicts exactly as the trained one, and writes the loss curve to a
PNG (with matplotlib when it is installed, otherwise with the small PNG
writer below).

    python examples/demo.py [--epochs N] [--out DIR] [--seed S]
"""

import argparse
import math
import os
import struct
import sys
import time
import zlib

import numpy as np

import cmlx.core as mx
import cmlx.nn as nn
import cmlx.optimizers as optim

# ----------------------------------------------------------------- data


def load_data(seed=0, test_size=360):
    """Digits as NHWC float32 images in [0, 1], split by a fixed permutation."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    perm = np.random.default_rng(seed).permutation(len(labels))
    test, train = perm[:test_size], perm[test_size:]
    return images[train], labels[train], images[test], labels[test]


# ---------------------------------------------------------------- model


class DigitsCNN(nn.Module):
    """8x8x1 -> conv32 -> pool -> 4x4x32 -> conv64 -> pool -> 2x2x64 -> 128 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(64 * 2 * 2, 128)
        self.dropout = nn.Dropout(0.25)
        self.fc2 = nn.Linear(128, 10)

    def __call__(self, x):
        x = self.pool(nn.relu(self.conv1(x)))
        x = self.pool(nn.relu(self.conv2(x)))
        x = x.reshape(x.shape[0], -1)
        return self.fc2(self.dropout(nn.relu(self.fc1(x))))


def loss_fn(model, x, y):
    return nn.losses.cross_entropy(model(x), y, reduction="mean")


def predict(model, x, batch=512):
    model.eval()
    out = [mx.argmax(model(x[s : s + batch]), axis=1) for s in range(0, x.shape[0], batch)]
    return mx.concatenate(out)


def accuracy(model, x, y):
    return mx.mean(predict(model, x) == y).item()


# ------------------------------------------------------------- training


def progress(epoch, epochs, done, total, loss, width=30):
    filled = int(width * done / total)
    bar = "#" * filled + "." * (width - filled)
    sys.stdout.write(f"\repoch {epoch:2d}/{epochs} [{bar}] {done:4d}/{total} loss {loss:.4f}")
    sys.stdout.flush()


def train(epochs=12, batch_size=64, lr=3e-3, seed=0, log=print, show_bar=None):
    """Trains a DigitsCNN; returns (model, data, per-step losses, per-epoch rows)."""
    xtr, ytr, xte, yte = load_data(seed)
    x_train, y_train = mx.array(xtr), mx.array(ytr)
    x_test, y_test = mx.array(xte), mx.array(yte)
    n = len(ytr)
    steps_per_epoch = math.ceil(n / batch_size)

    mx.random.seed(seed)
    model = DigitsCNN()
    mx.eval(model.parameters())
    schedule = optim.cosine_decay(lr, epochs * steps_per_epoch, lr * 0.02)
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=1e-4)
    step = nn.value_and_grad(model, loss_fn)
    rng = np.random.default_rng(seed)
    if show_bar is None:
        show_bar = sys.stdout.isatty()

    losses, history = [], []
    for epoch in range(1, epochs + 1):
        model.train()
        order = rng.permutation(n)
        total_loss, correct = 0.0, 0
        for s in range(0, n, batch_size):
            idx = mx.array(order[s : s + batch_size].astype(np.int32))
            x, y = x_train[idx], y_train[idx]
            loss, grads = step(model, x, y)
            optimizer.update(model, grads)
            mx.eval(model.parameters(), optimizer.state, loss)
            losses.append(loss.item())
            total_loss += losses[-1] * idx.shape[0]
            if show_bar:
                progress(epoch, epochs, min(s + batch_size, n), n, losses[-1])
        if show_bar:
            sys.stdout.write("\r" + " " * 78 + "\r")
        train_acc = accuracy(model, x_train, y_train)
        test_acc = accuracy(model, x_test, y_test)
        history.append((epoch, total_loss / n, train_acc, test_acc))
        log(
            f"epoch {epoch:2d}/{epochs}  loss {total_loss / n:.4f}  "
            f"train acc {train_acc:.4f}  test acc {test_acc:.4f}"
        )
    return model, (x_train, y_train, x_test, y_test), losses, history


# ------------------------------------------------------------ loss plot


def _png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_png(path, rgb):
    """Writes an (H, W, 3) uint8 array as an 8-bit RGB PNG."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[r].tobytes() for r in range(h))  # filter 0 per row
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(_png_chunk(b"IHDR", ihdr))
        f.write(_png_chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(_png_chunk(b"IEND", b""))


def plot_plain(path, losses, width=640, height=400, margin=40):
    """The loss curve on a white canvas with axes and a log-scale grid, no text."""
    img = np.full((height, width, 3), 255, np.uint8)
    y = np.log10(np.maximum(np.asarray(losses, np.float64), 1e-6))
    lo, hi = math.floor(y.min()), math.ceil(y.max())
    hi = max(hi, lo + 1)
    pw, ph = width - 2 * margin, height - 2 * margin

    def to_row(v):
        return int(round(margin + (hi - v) / (hi - lo) * ph))

    for decade in range(lo, hi + 1):  # grid line at each power of ten
        img[to_row(decade), margin : width - margin] = 220
    img[margin : height - margin + 1, margin] = 0  # y axis
    img[height - margin, margin : width - margin + 1] = 0  # x axis
    xs = margin + np.arange(len(y)) * pw / max(len(y) - 1, 1)
    for i in range(len(y) - 1):  # straight segments, drawn densely
        n = int(max(abs(xs[i + 1] - xs[i]), abs(to_row(y[i + 1]) - to_row(y[i])), 1)) + 1
        for t in np.linspace(0.0, 1.0, n):
            c = int(round(xs[i] + t * (xs[i + 1] - xs[i])))
            r = to_row(y[i] + t * (y[i + 1] - y[i]))
            img[max(r - 1, 0) : r + 1, c : c + 2] = (31, 119, 180)
    write_png(path, img)


def plot_losses(path, losses, history, use_matplotlib=True):
    """Writes the loss curve; returns the tool that drew it."""
    if use_matplotlib:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            use_matplotlib = False
    if not use_matplotlib:
        plot_plain(path, losses)
        return "built-in PNG writer"
    steps_per_epoch = len(losses) / max(len(history), 1)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(np.arange(1, len(losses) + 1), losses, lw=0.8, alpha=0.6, label="batch loss")
    ax.plot(
        [e * steps_per_epoch for e, *_ in history],
        [row[1] for row in history],
        "o-",
        label="epoch mean",
    )
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_title("cmlx: DigitsCNN on scikit-learn digits")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return "matplotlib"


# ----------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join("build", "demo"))
    ap.add_argument("--min-accuracy", type=float, default=0.97)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    start = time.perf_counter()
    model, (_, _, x_test, y_test), losses, history = train(epochs=args.epochs, seed=args.seed)
    elapsed = time.perf_counter() - start
    test_acc = history[-1][3]
    print(f"trained {len(losses)} steps in {elapsed:.1f} s; test accuracy {test_acc:.4f}")

    weights = os.path.join(args.out, "digits_cnn.safetensors")
    model.save_weights(weights)
    fresh = DigitsCNN()
    fresh.load_weights(weights)
    same = mx.array_equal(predict(fresh, x_test), predict(model, x_test)).item()
    reloaded_acc = accuracy(fresh, x_test, y_test)
    print(
        f"saved {weights} ({os.path.getsize(weights) / 1024:.0f} KiB); reloaded model: "
        f"test accuracy {reloaded_acc:.4f}, predictions identical: {same}"
    )

    png = os.path.join(args.out, "loss_curve.png")
    tool = plot_losses(png, losses, history)
    print(f"loss curve written to {png} ({tool})")

    if not same or reloaded_acc != test_acc:
        raise SystemExit("the reloaded model does not predict like the trained one")
    if test_acc < args.min_accuracy:
        raise SystemExit(f"test accuracy {test_acc:.4f} is below {args.min_accuracy}")


if __name__ == "__main__":
    main()
