#!/usr/bin/env python3
"""all_sum over the ring backend on local ranks: cmlx next to real MLX's
ring (each framework's ranks started by tests/python/dist_launch_util.py
with the same kind of hostfile), float32 from 1 KB to 256 MB, medians,
bandwidth (bytes of the buffer / time) and the ratio mlx/cmlx (above 1:
cmlx is faster).  The frameworks take turns for --rounds rounds and each
size keeps its best median, which filters out other tenants of a shared
machine.  Standalone (not part of run.py's table, which times one process):

    PYTHONPATH=build/pkg .venv/bin/python benchmarks/bench_distributed.py [-n 2 4]
        [--max-mb 256] [--connections 1] [--rounds 3]
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20]


def rank_main(framework, max_bytes):
    mx = importlib.import_module(framework + ".core")
    g = mx.distributed.init(strict=True, backend="ring")
    out = {}
    for nbytes in [s for s in SIZES if s <= max_bytes]:
        x = mx.ones((nbytes // 4,), dtype=mx.float32)
        mx.eval(x)
        reps = max(3, min(50, int(2e8 // nbytes)))
        mx.eval(mx.distributed.all_sum(x, group=g))  # warm-up
        times = []
        for _ in range(reps):
            mx.eval(mx.distributed.all_sum(mx.array(0.0), group=g))  # line the ranks up
            t0 = time.perf_counter()
            mx.eval(mx.distributed.all_sum(x, group=g))
            times.append(time.perf_counter() - t0)
        out[nbytes] = statistics.median(times)
        del x
    if g.rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)


def run(framework, n, max_bytes, connections):
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
    import dist_launch_util as dl

    res = dl.launch([sys.executable, os.path.abspath(__file__), "--rank-worker", framework,
                     "--max-mb", str(max_bytes >> 20)], n, connections=connections, timeout=900)
    for code, text in res:
        if code != 0:
            print(f"{framework} on {n} ranks failed:\n{text}", file=sys.stderr)
            return None
    line = [ln for ln in res[0][1].splitlines() if ln.startswith("RESULT ")][0]
    return {int(k): v for k, v in json.loads(line[7:]).items()}


def human(nbytes):
    return f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, nargs="+", default=[2, 4])
    p.add_argument("--max-mb", type=int, default=256)
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rank-worker", default=None)
    a = p.parse_args()
    if a.rank_worker:
        return rank_main(a.rank_worker, a.max_mb << 20)
    try:
        importlib.import_module("mlx.core")
        frameworks = ["cmlx", "mlx"]
    except ImportError:
        frameworks = ["cmlx"]
    for n in a.n:
        results = {f: {} for f in frameworks}
        for _ in range(a.rounds):
            for f in frameworks:
                got = run(f, n, a.max_mb << 20, a.connections) or {}
                for k, v in got.items():
                    results[f][k] = min(v, results[f].get(k, v))
        print(f"\nall_sum float32, ring, {n} local ranks, {a.connections} connection(s), "
              f"best median of {a.rounds} rounds")
        print(f"{'size':>8} {'cmlx ms':>10} {'cmlx GB/s':>10} {'mlx ms':>10} {'mlx GB/s':>10}"
              f" {'mlx/cmlx':>9}")
        for nbytes in sorted(results["cmlx"] or {}):
            c = results["cmlx"][nbytes]
            m = (results.get("mlx") or {}).get(nbytes)
            row = f"{human(nbytes):>8} {c * 1e3:10.3f} {nbytes / c / 1e9:10.2f}"
            if m:
                row += f" {m * 1e3:10.3f} {nbytes / m / 1e9:10.2f} {m / c:9.2f}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
