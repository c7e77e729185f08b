#!/usr/bin/env python3
"""GPU benchmarks: cmlx's CUDA backend beside PyTorch (and MLX's CUDA build
where importable), in one run, on a machine with a GPU.

    PYTHONPATH=build-cuda/pkg python benchmarks/bench_cuda.py [--quick]

Prints medians, the ratio torch/cmlx (above 1: cmlx is faster) and, for
the memory-bound workloads, the bandwidth reached (bytes read + written
per second).  The targets of the CUDA issue: GEMM 4096^3 within 10% of
cuBLAS through PyTorch; add and exp of 2^28 floats at >= 85% of HBM
bandwidth; sum of 2^28 at >= 80%; softmax and layer_norm of 8192^2 at or
above PyTorch.  Nothing is asserted: this reports.

run.py's discovery imports this file too; it registers nothing there
(the CPU benchmarks have their own harness).
"""
import argparse
import statistics
import sys
import time


def timeit(fn, sync, repeats):
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    import cmlx.core as mx
    if not mx.cuda.is_available():
        print("bench_cuda: no CUDA device: nothing to measure")
        return 0
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except Exception:
        have_torch = False
    mx.set_default_device(mx.gpu)
    info = mx.device_info()
    print(f"bench_cuda: {info.get('device_name')} ({info.get('architecture')})")
    n_big = 1 << (24 if a.quick else 28)
    gemm = 1024 if a.quick else 4096
    rows = 2048 if a.quick else 8192
    msync = lambda: mx.synchronize()
    tsync = (lambda: torch.cuda.synchronize()) if have_torch else (lambda: None)
    results = []

    def row(name, cm_fn, t_fn, nbytes=None, flops=None):
        try:
            tc = timeit(cm_fn, msync, a.repeats)
        except Exception as e:  # a primitive without a GPU kernel yet
            print(f"{name:32s} cmlx: {type(e).__name__}: {str(e)[:60]}")
            return
        tt = timeit(t_fn, tsync, a.repeats) if have_torch and t_fn else None
        extra = ""
        if nbytes:
            extra += f"  cmlx {nbytes / tc / 1e9:8.1f} GB/s"
            if tt:
                extra += f"  torch {nbytes / tt / 1e9:8.1f} GB/s"
        if flops:
            extra += f"  cmlx {flops / tc / 1e12:7.1f} TFLOP/s"
            if tt:
                extra += f"  torch {flops / tt / 1e12:7.1f} TFLOP/s"
        ratio = f"{tt / tc:6.2f}" if tt else "   n/a"
        print(f"{name:32s} cmlx {tc * 1e3:9.3f} ms  torch {tt * 1e3 if tt else float('nan'):9.3f} ms"
              f"  torch/cmlx {ratio}{extra}", flush=True)
        results.append((name, tc, tt))

    for dt, tdt in (("float32", "float32"), ("bfloat16", "bfloat16")):
        x = mx.random.normal((gemm, gemm)).astype(getattr(mx, dt))
        y = mx.random.normal((gemm, gemm)).astype(getattr(mx, dt))
        mx.eval(x, y)
        tx = torch.randn(gemm, gemm, device="cuda", dtype=getattr(torch, tdt)) if have_torch else None
        ty = torch.randn(gemm, gemm, device="cuda", dtype=getattr(torch, tdt)) if have_torch else None
        if have_torch and dt == "float32":
            torch.backends.cuda.matmul.allow_tf32 = False
        row(f"matmul {dt} {gemm}^3", lambda: mx.eval(x @ y), lambda: tx @ ty,
            flops=2 * gemm**3)

    x = mx.random.normal((n_big,))
    y = mx.random.normal((n_big,))
    mx.eval(x, y)
    tx = torch.randn(n_big, device="cuda") if have_torch else None
    ty = torch.randn(n_big, device="cuda") if have_torch else None
    row(f"add float32 2^{n_big.bit_length() - 1}", lambda: mx.eval(x + y), lambda: tx + ty,
        nbytes=12 * n_big)
    row(f"exp float32 2^{n_big.bit_length() - 1}", lambda: mx.eval(mx.exp(x)), lambda: torch.exp(tx),
        nbytes=8 * n_big)
    row(f"sum float32 2^{n_big.bit_length() - 1}", lambda: mx.eval(mx.sum(x)), lambda: tx.sum(),
        nbytes=4 * n_big)
    m = mx.random.normal((rows, rows))
    mx.eval(m)
    tm = torch.randn(rows, rows, device="cuda") if have_torch else None
    w = mx.ones((rows,))
    tw = torch.ones(rows, device="cuda") if have_torch else None
    row(f"softmax {rows}^2", lambda: mx.eval(mx.softmax(m, axis=-1)),
        lambda: torch.softmax(tm, -1), nbytes=8 * rows * rows)
    row(f"layer_norm {rows}^2", lambda: mx.eval(mx.fast.layer_norm(m, w, None, 1e-5)),
        lambda: torch.nn.functional.layer_norm(tm, (rows,), tw), nbytes=8 * rows * rows)
    row(f"sum rows {rows}^2 axis=-1", lambda: mx.eval(mx.sum(m, axis=-1)),
        lambda: tm.sum(-1), nbytes=4 * rows * rows)
    row(f"sum cols {rows}^2 axis=0", lambda: mx.eval(mx.sum(m, axis=0)),
        lambda: tm.sum(0), nbytes=4 * rows * rows)
    # per-op overhead: a chain of small ops (graph building and launches)
    s = mx.ones((1024,))
    mx.eval(s)
    ts = torch.ones(1024, device="cuda") if have_torch else None

    def chain_mx():
        v = s
        for _ in range(100):
            v = v * 1.0001 + 0.5
        mx.eval(v)

    def chain_t():
        v = ts
        for _ in range(100):
            v = v * 1.0001 + 0.5
        return v

    row("200 small elementwise ops", chain_mx, chain_t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
