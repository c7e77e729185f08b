"""Training steps, cmlx.nn vs mlx.nn vs torch.nn (CPU), and loading a big
safetensors file.

One step = forward, backward, AdamW update, evaluated:

- the demo CNN (examples/demo.py: conv 3x3 32, pool, conv 3x3 64, pool,
  linear 256-128-10) on a batch of 64 8x8 digits, cross entropy;
- a 4-layer pre-norm Transformer encoder (d=256, 4 heads, MLP 1024, no
  dropout), sequence 128, batch 16, mean square of the output.

PyTorch runs the same models in its own layout (NCHW convolutions,
nn.TransformerEncoder with norm_first=True, batch_first=True).

Run alone (`python benchmarks/bench_train.py [--load-mib N]`) it also times
loading an N MiB safetensors file (default 1024) in a fresh process per
framework and reports the peak resident memory of that process; the row
"read" is one readinto() of the whole file into a preallocated buffer (the
speed of the page cache or disk, and one copy of memory).
"""

import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np

from harness import workload


def _libs(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    return (
        fw.mod,
        importlib.import_module(fw.name + ".nn"),
        importlib.import_module(fw.name + ".optimizers"),
    )


def _mlx_cnn(nn):
    class DigitsCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, kernel_size=3, padding=1)
            self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
            self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
            self.fc1 = nn.Linear(256, 128)
            self.fc2 = nn.Linear(128, 10)

        def __call__(self, x):
            x = self.pool(nn.relu(self.conv1(x)))
            x = self.pool(nn.relu(self.conv2(x)))
            return self.fc2(nn.relu(self.fc1(x.reshape(x.shape[0], -1))))

    return DigitsCNN()


def _torch_cnn(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10),
    )  # fmt: skip


def _mlx_step(fw, model, inputs, loss):
    mx, nn, optim = _libs(fw)
    opt = optim.AdamW(learning_rate=1e-3)
    xs = [fw.from_numpy(a) for a in inputs]
    mx.eval(model.parameters())
    vg = nn.value_and_grad(model, loss)

    def step():
        value, grads = vg(model, *xs)
        opt.update(model, grads)
        mx.eval(value, model.parameters(), opt.state)

    return step


def _torch_step(torch, model, inputs, loss):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    xs = [torch.from_numpy(a) for a in inputs]

    def step():
        opt.zero_grad(set_to_none=True)
        value = loss(model, *xs)
        value.backward()
        opt.step()
        return value.item()

    return step


def _digits_batch(batch=64):
    rng = np.random.default_rng(0)
    x = rng.random((batch, 8, 8, 1), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    return x, y


@workload("train step demo CNN b64 AdamW", family="train")
def cnn_step(fw):
    x, y = _digits_batch()
    if fw.name == "torch":
        torch = fw.mod
        torch.manual_seed(0)
        ce = torch.nn.functional.cross_entropy
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        return _torch_step(
            torch, _torch_cnn(torch), [x, y.astype(np.int64)], lambda m, a, b: ce(m(a), b)
        )
    if _libs(fw) is None:
        return None
    mx, nn, _ = _libs(fw)
    mx.random.seed(0)

    def loss(model, a, b):
        return nn.losses.cross_entropy(model(a), b, reduction="mean")

    return _mlx_step(fw, _mlx_cnn(nn), [x, y], loss)


@workload("train step Transformer 4x d256 h4 L128 b16 AdamW", family="train")
def transformer_step(fw):
    x = np.random.default_rng(3).standard_normal((16, 128, 256)).astype(np.float32)
    if fw.name == "torch":
        torch = fw.mod
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(
            256, 4, 1024, dropout=0.0, batch_first=True, norm_first=True
        )
        model = torch.nn.TransformerEncoder(
            layer, 4, norm=torch.nn.LayerNorm(256), enable_nested_tensor=False
        )
        return _torch_step(torch, model, [x], lambda m, a: (m(a) ** 2).mean())
    if _libs(fw) is None:
        return None
    mx, nn, _ = _libs(fw)
    mx.random.seed(0)
    model = nn.TransformerEncoder(4, 256, 4, mlp_dims=1024, dropout=0.0, norm_first=True)
    return _mlx_step(fw, model, [x], lambda m, a: (m(a, None) ** 2).mean())


# ------------------------------------------------ big safetensors load

# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child
# would report the parent's peak.
_HWM = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
_LOADER = r"""
import sys, time
name, path = sys.argv[1], sys.argv[2]
if name == "read":
    import os
    buf = bytearray(os.path.getsize(path)); t = time.perf_counter()
    with open(path, "rb", buffering=0) as f: n = f.readinto(buf)
elif name == "safetensors":
    from safetensors.numpy import load_file
    t = time.perf_counter(); d = load_file(path); n = sum(a.nbytes for a in d.values())
else:
    mx = __import__(name + ".core", fromlist=["core"])
    t = time.perf_counter(); d = mx.load(path); mx.eval(list(d.values()))
    n = sum(a.nbytes for a in d.values())
dt = time.perf_counter() - t
print(dt, n, HWM)
""".replace("HWM", _HWM)


def _write_safetensors(path, mib):
    """mib MiB of float32 in 64 MiB tensors, written with cmlx."""
    import cmlx.core as mx

    chunk = 16 << 20
    rng = np.random.default_rng(0)
    base = rng.standard_normal(chunk).astype(np.float32)
    arrays = {f"w{i:03d}": mx.array(base + i) for i in range(max(mib // 64, 1))}
    mx.save_safetensors(path, arrays)


def _baseline_rss(name):
    code = f"import {name}; print({_HWM})".replace("import read;", "")
    if name != "safetensors":
        code = code.replace(f"import {name};", f"import {name}.core;")
    else:
        code = code.replace("import safetensors;", "import safetensors.numpy;")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def _evict(path):
    """Drop the file's pages from the page cache (a clean file's pages go at
    once, no root needed), so the next read comes from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def load_big(mib, repeats=3, cold=False):
    folder = tempfile.mkdtemp(prefix="cmlx_bench_train_")
    path = os.path.join(folder, "big.safetensors")
    try:
        _write_safetensors(path, mib)
        size = os.path.getsize(path)
        cache = ("cold: evicted from the page cache before each run" if cold
                 else "page cache warm after the first run")
        print(f"load a {size / 2**20:.0f} MiB safetensors file ({cache}), fresh process each;"
              " peak RSS above the import baseline")
        for name in ("read", "cmlx", "mlx", "safetensors"):
            try:
                if name != "read":
                    importlib.import_module(name if name != "safetensors" else "safetensors.numpy")
            except ImportError:
                continue
            times, rss = [], 0
            for _ in range(repeats):
                if cold:
                    _evict(path)
                out = subprocess.run(
                    [sys.executable, "-c", _LOADER, name, path], capture_output=True, text=True
                )
                if out.returncode:
                    print(f"  {name}: failed: {out.stderr.strip()[-200:]}")
                    break
                dt, nbytes, peak = out.stdout.split()
                times.append(float(dt))
                rss = max(rss, int(peak))
            if times:
                extra = (rss - _baseline_rss(name)) / 1024
                t = float(np.median(times))
                print(f"  {name:<12} {t * 1e3:8.0f} ms  {size / t / 2**30:5.2f} GiB/s  "
                      f"peak RSS +{extra:.0f} MiB ({extra * 2**20 / size:.2f}x the file)")
    finally:
        if os.path.exists(path):
            os.remove(path)
        os.rmdir(folder)


if __name__ == "__main__":
    import argparse

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--load-mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-steps", action="store_true")
    ap.add_argument("--cold", action="store_true",
                    help="evict the file from the page cache before each load (disk speed)")
    args = ap.parse_args()
    if not args.skip_steps:
        import harness

        fws, missing = harness.load_frameworks()
        print("median of up to %d steps; (x) = other / cmlx" % args.repeats)
        for line in harness.environment_lines(fws, missing):
            print("  " + line)
        print(harness.header(fws))
        mine = [w for w in harness.WORKLOADS if w.family == "train"]
        harness.run_all(fws, mine, args.repeats, 10.0)
    if args.load_mib > 0:
        load_big(args.load_mib, cold=args.cold)
