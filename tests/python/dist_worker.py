"""Per-rank programs for test_distributed.py, started on local ranks by
dist_launch_util.launch: ``python dist_worker.py MODE``.  Each checks its
results itself (values against NumPy) and exits non-zero on a failure."""
import importlib
import os
import sys
import time

import numpy as np

mx = importlib.import_module(os.environ.get("CMLX_TEST_SUBJECT", "cmlx.core"))
CMLX = mx.__name__.startswith("cmlx")

DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64", "complex64"]
SIZES = [1, 7, 1000, 70_000, 1_500_000]  # up to 6 MB of float32


def say(*parts):
    """print(*parts) as one write: mpirun and the launcher forward each
    rank's writes as they come, so print's separate writes of its parts can
    interleave with another rank's line."""
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def rank_values(r, shape, name):
    """Rank r's input as NumPy (values exact in every dtype, sums too)."""
    rng = np.random.default_rng(1000 + r)
    if name == "bool_":
        return rng.integers(0, 2, shape).astype(bool)
    if name.startswith("uint"):
        return rng.integers(0, 30, shape).astype(name)
    v = rng.integers(-30, 30, shape)
    if name == "complex64":
        return (v + 1j * rng.integers(-30, 30, shape)).astype(np.complex64)
    if name == "bfloat16":
        return v.astype(np.float32)
    return v.astype(name)


def to_np(a):
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    return np.array(a)


def check(cond, *msg):
    if not cond:
        say("FAIL", *msg)
        sys.exit(1)


def collectives(g):
    r, n = g.rank(), g.size()
    for name in DTYPES:
        dt = getattr(mx, name)
        sizes = SIZES if name in ("float32", "float16", "bool_", "complex64", "int64") else SIZES[:4]
        for size in sizes:
            xs = [rank_values(k, (size,), name) for k in range(n)]
            x = mx.array(xs[r]).astype(dt)
            stacked = np.stack(xs)
            if name == "bool_":
                want_sum = stacked.any(0)
            else:
                want_sum = stacked.sum(0, dtype=stacked.dtype)
            got = mx.distributed.all_sum(x, group=g)
            check(got.dtype == dt and got.shape == x.shape, "all_sum meta", name, size)
            check(np.array_equal(to_np(got), want_sum), "all_sum", name, size)
            if name == "complex64":
                continue  # max/min of complex: checked against mx below
            check(np.array_equal(to_np(mx.distributed.all_max(x, group=g)), stacked.max(0)),
                  "all_max", name, size)
            check(np.array_equal(to_np(mx.distributed.all_min(x, group=g)), stacked.min(0)),
                  "all_min", name, size)
        # all_gather concatenates along axis 0
        xs = [rank_values(k, (3, 2), name) for k in range(n)]
        got = mx.distributed.all_gather(mx.array(xs[r]).astype(dt), group=g)
        check(np.array_equal(to_np(got), np.concatenate(xs)), "all_gather", name)
    # complex max / min: the same order as mx.max
    xs = [rank_values(k, (500,), "complex64") for k in range(n)]
    allx = mx.array(np.stack(xs))
    x = mx.array(xs[r])
    check(mx.array_equal(mx.distributed.all_max(x, group=g), allx.max(0)).item(), "cmax")
    check(mx.array_equal(mx.distributed.all_min(x, group=g), allx.min(0)).item(), "cmin")
    # layouts: a transposed and a sliced input, 0-d and empty arrays
    base = mx.array(rank_values(r, (40, 30), "float32"))
    want = sum(rank_values(k, (40, 30), "float32") for k in range(n))
    check(np.array_equal(np.array(mx.distributed.all_sum(base.T, group=g)), want.T), "T")
    check(np.array_equal(np.array(mx.distributed.all_sum(base[::3, 1::2], group=g)),
                         want[::3, 1::2]), "strided")
    got = mx.distributed.all_gather(base[:, 0], group=g)
    want_g = np.concatenate([rank_values(k, (40, 30), "float32")[:, 0] for k in range(n)])
    check(np.array_equal(np.array(got), want_g), "gather strided")
    got = mx.distributed.all_gather(mx.array(float(r)), group=g)
    check(got.shape == (n,) and got.tolist() == [float(k) for k in range(n)], "gather 0-d")
    check(mx.distributed.all_sum(mx.array(r), group=g).item() == n * (n - 1) // 2, "0-d sum")
    e = mx.distributed.all_sum(mx.zeros((0, 3)), group=g)
    check(e.shape == (0, 3), "empty")
    # all_sum inside a graph, evaluated together with other work
    y = mx.distributed.all_sum(mx.ones((1000,)) * (r + 1), group=g) * 2
    check(mx.all(y == n * (n + 1)).item(), "graph")
    if CMLX:  # MLX's ring has no sum_scatter
        xs = [rank_values(k, (n * 5, 3), "float32") for k in range(n)]
        got = mx.distributed.sum_scatter(mx.array(xs[r]), group=g)
        check(np.array_equal(np.array(got), sum(xs)[r * 5:(r + 1) * 5]), "sum_scatter")
        big = [rank_values(k, (n * 300_000,), "int32") for k in range(n)]
        got = mx.distributed.sum_scatter(mx.array(big[r]), group=g)
        check(np.array_equal(np.array(got), sum(big)[r * 300_000:(r + 1) * 300_000]), "rs big")


def sendrecv(g):
    r, n = g.rank(), g.size()
    right, left = (r + 1) % n, (r - 1) % n
    for name in ["uint8", "int32", "float16", "bfloat16", "complex64", "bool_"]:
        for size in [1, 1000, 1_000_000]:
            dt = getattr(mx, name)
            mine = mx.array(rank_values(r, (size,), name)).astype(dt)
            if r % 2 == 0:
                s = mx.distributed.send(mine, right, group=g)
                z = mx.distributed.recv_like(mine, left, group=g)
                mx.eval(s, z)
            else:
                z = mx.distributed.recv(mine.shape, dt, left, group=g)
                s = mx.distributed.send(mine, right, group=g)
                mx.eval(z, s)
            check(mx.array_equal(s, mine).item(), "send output", name, size)
            want = rank_values(left, (size,), name)
            check(np.array_equal(to_np(z), want), "recv", name, size)
    # a strided array is sent in row-major order
    m = mx.arange(12, dtype=mx.float32).reshape(3, 4) + 100 * r
    if r % 2 == 0:
        s = mx.distributed.send(m.T, right, group=g)
        z = mx.distributed.recv((4, 3), mx.float32, left, group=g)
        mx.eval(s, z)
    else:
        z = mx.distributed.recv((4, 3), mx.float32, left, group=g)
        s = mx.distributed.send(m.T, right, group=g)
        mx.eval(z, s)
    want = (np.arange(12, dtype=np.float32).reshape(3, 4) + 100 * left).T
    check(np.array_equal(np.array(z), want), "recv strided")
    if n > 2 and CMLX:
        try:
            mx.eval(mx.distributed.send(mx.ones(3), (r + 2) % n, group=g))
            check(False, "send to a non-neighbour did not raise")
        except RuntimeError as e:
            check("neighbor" in str(e), str(e))


def grads(g):
    r, n = g.rank(), g.size()
    # vjp rules: all_sum passes the cotangent, all_gather slices this rank's part
    dx = mx.grad(lambda x: mx.distributed.all_sum(x, group=g).sum())(mx.ones((3,)))
    check(mx.array_equal(dx, mx.ones((3,))).item(), "all_sum vjp")
    dx = mx.grad(lambda x: (mx.distributed.all_gather(x, group=g) *
                            mx.arange(2 * n, dtype=mx.float32).reshape(-1, 1)).sum())(
        mx.ones((2, 1)))
    check(dx.reshape(-1).tolist() == [2.0 * r, 2.0 * r + 1], "all_gather vjp", dx.tolist())
    _, t = mx.jvp(lambda x: mx.distributed.all_sum(x, group=g), [mx.ones(2)], [mx.ones(2) * r])
    check(t[0].tolist() == [n * (n - 1) / 2] * 2, "all_sum jvp")
    v = mx.vmap(lambda x: mx.distributed.all_sum(x, group=g))(mx.ones((3, 2)) * r)
    check(v.shape == (3, 2) and mx.all(v == n * (n - 1) / 2).item(), "vmap")
    # a data-parallel SGD step equals the single-process step on the whole batch
    import importlib as il
    nn = il.import_module(mx.__name__.rsplit(".", 1)[0] + ".nn")
    mx.random.seed(7)
    model = nn.Linear(8, 3)
    mx.eval(model.parameters())
    X = mx.random.normal((4 * n, 8))
    Y = mx.random.normal((4 * n, 3))
    loss = lambda m, x, y: ((m(x) - y) ** 2).mean()
    lg = nn.value_and_grad(model, loss)
    _, full = lg(model, X, Y)
    _, part = lg(model, X[4 * r:4 * (r + 1)], Y[4 * r:4 * (r + 1)])
    avg = nn.average_gradients(part, group=g)
    for k in ("weight", "bias"):
        check(mx.allclose(avg[k], full[k], atol=1e-5, rtol=1e-4).item(), "data parallel", k)
    # parameters stay equal on every rank after the update
    w = model.weight - 0.1 * avg["weight"]
    gathered = mx.distributed.all_gather(w[None], group=g)
    check(mx.array_equal(gathered.max(0), gathered.min(0)).item(), "replicas differ")


def fsdp(g):
    """fully_shard: each rank keeps rows r*k..(r+1)*k of every parameter;
    the wrapped model computes what the whole model computes, its
    gradients are the group's mean gradient's rows for this rank, and an
    SGD step on the shards equals the step of the whole model on the whole
    batch, row for row."""
    import importlib as il
    nn = il.import_module(mx.__name__.rsplit(".", 1)[0] + ".nn")
    r, n = g.rank(), g.size()
    mx.random.seed(11)
    whole = nn.Sequential(nn.Linear(6, 4 * n), nn.ReLU(), nn.Linear(4 * n, 2 * n))
    sharded = nn.Sequential(nn.Linear(6, 4 * n), nn.ReLU(), nn.Linear(4 * n, 2 * n))
    sharded.update(whole.parameters())
    mx.eval(whole.parameters(), sharded.parameters())
    wrapped = nn.layers.distributed.fully_shard(sharded, group=g)
    check(isinstance(wrapped, nn.layers.distributed.FullyShardedModule), "wrapped")
    w0 = np.array(whole.layers[0].weight)
    check(np.array_equal(np.array(sharded.layers[0].weight), w0[4 * r:4 * (r + 1)]), "shard rows")
    X = mx.random.normal((3 * n, 6))
    Y = mx.random.normal((3 * n, 2 * n))
    mine = slice(3 * r, 3 * (r + 1))
    check(np.allclose(np.array(wrapped(X)), np.array(whole(X)), atol=1e-6), "forward")
    # the parameters are shards again after the call
    check(sharded.layers[0].weight.shape == (4, 6), "shards restored")
    loss = lambda m, x, y: ((m(x) - y) ** 2).mean()
    _, g_sh = nn.value_and_grad(wrapped, loss)(wrapped, X[mine], Y[mine])
    _, g_full = nn.value_and_grad(whole, loss)(whole, X, Y)  # the mean over the ranks' batches
    from importlib import import_module
    tu = import_module(mx.__name__.rsplit(".", 1)[0] + ".utils")
    gs, gf = dict(tu.tree_flatten(g_sh)), dict(tu.tree_flatten(g_full))
    for k, v in gs.items():
        full = np.array(gf[k.replace("module.", "", 1)])
        rows = full.shape[0] // n
        check(np.allclose(np.array(v), full[rows * r:rows * (r + 1)], atol=1e-5, rtol=1e-4),
              "fsdp grad", k)
    bad = nn.Linear(3, 2 * n + 1)
    try:
        nn.layers.distributed.fully_shard(bad, group=g)
        check(False, "indivisible axis accepted")
    except ValueError as e:
        check("axis 0 must be divisible" in str(e), "message", e)


def killed(g):
    r = g.rank()
    if r == 1:
        os._exit(3)
    t0 = time.monotonic()
    try:
        mx.eval(mx.distributed.all_sum(mx.ones((1_000_000,)), group=g))
        check(False, "no error after a rank died")
    except RuntimeError as e:
        check("[ring]" in str(e), str(e))
    check(time.monotonic() - t0 < 30, "too slow")
    try:  # the group stays unusable, at once
        mx.eval(mx.distributed.all_sum(mx.ones((10,)), group=g))
        check(False, "no error on a broken ring")
    except RuntimeError as e:
        check("earlier" in str(e), str(e))
    say("OK killed")


def stalled(g):
    """Rank 1 stops taking part (alive, sockets open): the others fail
    after CMLX_RING_OP_TIMEOUT."""
    if g.rank() == 1:
        time.sleep(8)
        os._exit(0)
    t0 = time.monotonic()
    try:
        mx.eval(mx.distributed.all_sum(mx.ones((1000,)), group=g))
        check(False, "no error from a stalled peer")
    except RuntimeError as e:
        check("[ring]" in str(e), str(e))
    check(time.monotonic() - t0 < 7, "not within the timeout", time.monotonic() - t0)
    say("OK stalled")


def expect_error(what, thunk, message):
    try:
        mx.eval(thunk())
    except RuntimeError as e:
        check(message in str(e), what, "raised", str(e))
        say("RAISED", what, e)
        return
    check(False, what, "did not raise")


def mismatch(g):
    """CMLX_DIST_CHECK=1: ranks combining different things all raise, and
    the group still works afterwards."""
    r, n = g.rank(), g.size()
    D = mx.distributed
    x = mx.arange(4, dtype=mx.float32)
    check(D.all_sum(x, group=g).tolist() == [n * v for v in range(4)], "all_sum before")
    expect_error("size", lambda: D.all_sum(mx.ones(3 if r == 0 else 5), group=g),
                 "all_sum: rank 0 has 3 float32 elements, rank 1 has 5 float32 elements")
    expect_error("dtype", lambda: D.all_max(mx.ones(3, dtype=mx.float32 if r == 0 else mx.int32),
                                            group=g),
                 "all_max: rank 0 has 3 float32 elements, rank 1 has 3 int32 elements")
    expect_error("gather", lambda: D.all_gather(mx.ones((2, 2) if r == 0 else (3, 2)), group=g),
                 "all_gather: rank 0 has 4 float32 elements, rank 1 has 6 float32 elements")
    expect_error("op", lambda: (D.all_sum if r == 0 else D.all_min)(x, group=g),
                 "rank 0 calls all_sum, rank 1 calls all_min")
    big = 1 << 20  # the ring's large path, too
    expect_error("large", lambda: D.all_sum(mx.ones(big + (r > 0)), group=g),
                 f"all_sum: rank 0 has {big} float32 elements, rank 1 has {big + 1}")
    check(D.all_sum(x, group=g).tolist() == [n * v for v in range(4)], "all_sum after")
    check(D.all_sum(mx.ones(big), group=g).sum().item() == n * big, "large all_sum after")
    if n == 2:  # rank 1 expects 5 elements, rank 0 sends 3: the receiver raises
        if r == 0:
            mx.eval(D.send(mx.ones(3), 1, group=g))
        else:
            expect_error("recv", lambda: D.recv((5,), mx.float32, 0, group=g),
                         "recv: rank 0 sent 3 float32 elements, rank 1 expected 5 float32")
        if r == 0:  # and the stream is still in step
            mx.eval(D.send(x, 1, group=g))
        else:
            check(D.recv((4,), mx.float32, 0, group=g).tolist() == [0, 1, 2, 3], "recv after")
    check(D.all_sum(x, group=g).tolist() == [n * v for v in range(4)], "all_sum at the end")
    say("OK mismatch")


def init_error():
    """init(strict=True) fails: print the exception's type and message."""
    t0 = time.monotonic()
    try:
        g = mx.distributed.init(strict=True, backend="ring")
        say("GROUP", g.rank(), g.size(), mx.distributed.all_sum(mx.array(5)).item())
    except Exception as e:
        say("RAISED", type(e).__name__, e)
    say("SECONDS", time.monotonic() - t0)


def main():
    mode = sys.argv[1]
    if mode == "init_error":
        return init_error()
    g = mx.distributed.init(strict=True, backend=os.environ.get("CMLX_TEST_BACKEND", "ring"))
    check(mx.distributed.init() is g or mx.distributed.init().size() == g.size(), "cache")
    globals()[mode](g)
    say("OK", mode, g.rank())


if __name__ == "__main__":
    main()
