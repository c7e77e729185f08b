#!/usr/bin/env python3
"""all_sum over MPI: cmlx's MPI transport next to Open MPI's own
MPI_Allreduce (a small C program built with mpicc) and real MLX's mpi
backend, float32, 1 KB to 256 MB, on 2 and 4 local ranks.  Multi-process, so
it runs on its own (benchmarks/run.py imports this file and finds no
in-process workload):

    PYTHONPATH=build/pkg python benchmarks/bench_distributed_mpi.py [--ranks 2 4]
        [--sizes 1K 64K 1M 16M 256M] [--repeats 9]

Every framework runs under the same mpirun options (ranks yield when idle);
cmlx and MLX keep freed buffers cached (mx.set_cache_limit), as the C program
reuses its output.
Prints, per size, the median time of rank 0 (each sample starts after a
barrier) and the ratio other / cmlx (above 1: cmlx is faster).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r"""
import json, statistics, sys, time
import mlx.core as mx
world = mx.distributed.init(strict=True, backend="mpi")
sizes, repeats = json.loads(sys.argv[1]), int(sys.argv[2])
# keep freed outputs cached, so a sample times the collective and not the page
# faults of a fresh 256 MB output (the C program reuses its buffer too)
mx.set_cache_limit(4 * max(sizes) + (64 << 20))
barrier = lambda: mx.eval(mx.distributed.all_sum(mx.zeros((1,))))
out = {}
for nbytes in sizes:
    x = mx.ones((nbytes // 4,))
    mx.eval(x)
    mx.eval(mx.distributed.all_sum(x))  # warm up
    times = []
    for _ in range(repeats if nbytes < (64 << 20) else max(3, repeats // 3)):
        barrier()
        t = time.perf_counter()
        mx.eval(mx.distributed.all_sum(x))
        times.append(time.perf_counter() - t)
    out[nbytes] = statistics.median(times)
if world.rank() == 0:
    print("RESULT " + json.dumps(out), flush=True)
"""

C_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y);
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, repeats = atoi(argv[1]);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("RESULT {");
  for (int i = 2; i < argc; i++) {
    long n = atol(argv[i]) / 4;
    float *in = malloc(n * 4), *out = malloc(n * 4);
    for (long k = 0; k < n; k++) in[k] = 1.0f;
    int reps = atol(argv[i]) < (64l << 20) ? repeats : (repeats / 3 > 3 ? repeats / 3 : 3);
    double *t = malloc(sizeof(double) * reps);
    MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < reps; r++) {
      float z = 0, zo;
      MPI_Allreduce(&z, &zo, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t[r] = MPI_Wtime() - t0;
    }
    qsort(t, reps, sizeof(double), cmp);
    if (rank == 0) printf("%s\"%s\": %.9f", i > 2 ? ", " : "", argv[i], t[reps / 2]);
    free(in); free(out); free(t);
  }
  if (rank == 0) printf("}\n");
  MPI_Finalize();
  return 0;
}
"""


def parse_size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else int(s)


def mpirun(n, cmd, env):
    # Ranks yield when idle (what --oversubscribe selects): on a machine shared
    # with other work, ranks that busy-poll lose whole time slices (8-16 ms
    # steps at every size) waiting for a descheduled peer.
    base = ["mpirun", "-np", str(n), "--bind-to", "none", "--oversubscribe"]
    if os.geteuid() == 0:
        base.append("--allow-run-as-root")
    r = subprocess.run(base + cmd, capture_output=True, text=True, env=env, timeout=600)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return {int(k): v for k, v in json.loads(line[7:]).items()}
    sys.stderr.write(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}\n")
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--sizes", nargs="+", default=["1K", "16K", "256K", "4M", "64M", "256M"])
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args(argv)
    if shutil.which("mpirun") is None:
        print("mpirun (Open MPI) is not installed; nothing to measure")
        return 0
    sizes = [parse_size(s) for s in args.sizes]
    tmp = tempfile.mkdtemp(prefix="bench_mpi_")
    worker = os.path.join(tmp, "worker.py")
    with open(worker, "w") as f:
        f.write(WORKER)
    c_bin = None
    if shutil.which("mpicc"):
        src = os.path.join(tmp, "allreduce.c")
        with open(src, "w") as f:
            f.write(C_PROGRAM)
        c_bin = os.path.join(tmp, "allreduce")
        if subprocess.run(["mpicc", "-O2", src, "-o", c_bin]).returncode != 0:
            c_bin = None
    env = dict(os.environ)
    try:
        import mlx.core  # noqa: F401  (real MLX, as the reference)

        have_mlx = True
    except ImportError:
        have_mlx = False
    job = [str(a) for a in (json.dumps(sizes), args.repeats)]
    for n in args.ranks:
        cm = mpirun(n, [sys.executable, "-m", "cmlx.run", worker, *job], env)
        ompi = mpirun(n, [c_bin, str(args.repeats), *map(str, sizes)], env) if c_bin else None
        mlx = None
        if have_mlx:
            mlx_env = dict(env, MLX_MPI_LIBNAME="libmpi.so.40")
            mlx = mpirun(n, [sys.executable, worker, *job], mlx_env)
        print(f"\nall_sum float32, {n} ranks (median ms; (x) = other / cmlx)")
        print(f"{'size':>8} {'cmlx':>10} {'Open MPI':>18} {'MLX mpi':>18} {'cmlx GB/s':>10}")
        for s in sizes:
            c = cm[s] if cm else None
            cols = []
            for other in (ompi, mlx):
                v = other.get(s) if other else None
                cols.append(f"{v * 1e3:9.3f} ({v / c:4.2f}x)" if v and c else f"{'-':>18}")
            label = f"{s >> 20}M" if s >= 1 << 20 else f"{s >> 10}K"
            cms = f"{c * 1e3:10.3f}" if c else f"{'-':>10}"
            bw = f"{s / c / 1e9:10.2f}" if c else ""
            print(f"{label:>8} {cms} {cols[0]} {cols[1]} {bw}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
