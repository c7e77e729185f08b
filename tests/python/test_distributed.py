"""mx.distributed: the singleton group in this process, and the ring
backend over local ranks started by dist_launch_util (each rank checks its
values against NumPy itself: dist_worker.py)."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import mlx_ref, mx

import dist_launch_util as dl

HERE = os.path.dirname(os.path.abspath(__file__))
D = mx.distributed
CMLX = mx.__name__.startswith("cmlx")
cmlx_only = pytest.mark.skipif(not CMLX, reason="cmlx's own behaviour")


def _env(extra=None):
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    e = {"PYTHONPATH": pkg + os.pathsep + os.environ.get("PYTHONPATH", ""),
         "CMLX_TEST_SUBJECT": mx.__name__}
    e.update(extra or {})
    return e


def run_ranks(mode, n, timeout=240, env=None, connections=1):
    res = dl.launch([sys.executable, os.path.join(HERE, "dist_worker.py"), mode], n,
                    connections=connections, timeout=timeout, env=_env(env))
    return res


def assert_all_ok(res):
    for r, (code, out) in enumerate(res):
        assert code == 0, f"rank {r} exited {code}:\n{out}"


# ---------------------------------------------------------------- singleton group

def test_singleton_group():
    g = D.init()
    assert (g.rank(), g.size()) == (0, 1)
    assert D.init().size() == 1
    assert isinstance(g, D.Group)


@pytest.mark.parametrize("fn", ["all_sum", "all_max", "all_min", "all_gather", "sum_scatter"])
def test_singleton_collectives_are_identities(fn):
    f = getattr(D, fn)
    for x in [mx.array(3.5), mx.arange(6).reshape(2, 3), mx.ones((0, 2)),
              mx.arange(6, dtype=mx.float16).reshape(3, 2).T, mx.array([True, False])]:
        y = f(x)
        assert y.dtype == x.dtype and y.shape == x.shape
        assert np.array_equal(np.array(y), np.array(x))
    assert f(3).item() == 3  # a Python scalar is accepted, as MLX's
    assert f(mx.ones(2), group=D.init()).tolist() == [1, 1]


def test_singleton_send_recv_split_errors():
    g = D.init()
    with pytest.raises(ValueError, match="Cannot send to a singleton group"):
        D.send(mx.ones(2), 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        D.recv((2,), mx.float32, 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        D.recv_like(mx.ones(2), 0)
    with pytest.raises(RuntimeError, match="Cannot split the distributed group further."):
        g.split(0)


def test_singleton_grad():
    dx = mx.grad(lambda x: D.all_gather(x)[0])(mx.array([1.0, 2.0]))
    assert dx.tolist() == [1.0, 0.0]
    dx = mx.grad(lambda x: (D.all_sum(x) * 3).sum())(mx.ones(2))
    assert dx.tolist() == [3, 3]


def test_init_backends():
    with pytest.raises(ValueError, match="The only valid values for backend are 'any', 'mpi', "
                       "'nccl', 'jaccl' and 'ring' but 'foo' was provided."):
        D.init(backend="foo")
    # (not jaccl strictly: as MLX, a failed 'any' remembers its singleton under 'jaccl')
    with pytest.raises(RuntimeError, match="Cannot initialize nccl distributed backend."):
        D.init(strict=True, backend="nccl")
    for bk in ("nccl", "jaccl"):
        assert D.init(backend=bk).size() == 1
        assert D.is_available(bk) is False
    assert D.is_available("foo") is False
    assert D.is_available("ring") is True
    if "MLX_HOSTFILE" not in os.environ:
        with pytest.raises(RuntimeError, match=r"\[ring\] You need to provide via environment "
                           "variables both a rank \\(MLX_RANK\\) and a hostfile"):
            D.init(strict=True, backend="ring")
    with pytest.raises(ValueError):
        D.init(backend="ring", all_gather_factory=lambda rank, size: lambda src, n: b"")
    with pytest.raises(TypeError):
        D.init(backend="jaccl", all_gather_factory="not_callable")


def test_bad_arguments():
    with pytest.raises(TypeError):
        D.all_sum(mx.ones(2), group=3)
    with pytest.raises(TypeError):
        D.all_sum(mx.ones(2), D.init())  # group is keyword-only
    with pytest.raises(TypeError):
        D.send(mx.ones(2), "a")
    with pytest.raises(TypeError):
        D.recv(3, mx.float32, 0)  # shape must be a sequence


@cmlx_only
def test_displayed_signatures():
    rows = {
        "all_sum": "all_sum(x: array, *, group: Group | None = None, stream: StreamOrDevice = "
                   "None) -> array",
        "send": "send(x: array, dst: int, *, group: Group | None = None, stream: StreamOrDevice"
                " = None) -> array",
        "recv": "recv(shape: Sequence[int], dtype: Dtype, src: int, *, group: Group | None = "
                "None, stream: StreamOrDevice = None) -> array",
    }
    for name, sig in rows.items():
        assert getattr(D, name).__doc__.splitlines()[0] == sig
    if mlx_ref is not None:
        for name in ["is_available", "init", "all_sum", "all_max", "all_min", "all_gather",
                     "send", "recv", "recv_like", "sum_scatter"]:
            ours = getattr(D, name).__doc__.strip().splitlines()[0]
            assert ours == getattr(mlx_ref.distributed, name).__doc__.strip().splitlines()[0]
        assert (D.Group.split.__doc__.splitlines()[0] ==
                mlx_ref.distributed.Group.split.__doc__.strip().splitlines()[0])


# ---------------------------------------------------------------- ring, several processes

@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("mode", ["collectives", "sendrecv", "grads", "fsdp"])
def test_ring(mode, n):
    if mode == "fsdp" and not CMLX:
        pytest.skip("MLX's ring backend has no sum_scatter, which FSDP's backward needs")
    assert_all_ok(run_ranks(mode, n))


@cmlx_only
def test_ring_two_connections():
    assert_all_ok(run_ranks("collectives", 3, connections=2))


@cmlx_only
@pytest.mark.parametrize("n", [2, 4])
def test_killed_rank_fails_the_others(n):
    res = run_ranks("killed", n, timeout=60)
    assert res[1][0] == 3
    for r, (code, out) in enumerate(res):
        if r != 1:
            assert code == 0 and "OK killed" in out, out


@cmlx_only
def test_stalled_rank_times_out():
    res = run_ranks("stalled", 2, timeout=60, env={"CMLX_RING_OP_TIMEOUT": "2"})
    assert res[0][0] == 0 and "OK stalled" in res[0][1], res[0][1]


@cmlx_only
@pytest.mark.parametrize("n", [2, 3])
def test_ring_mismatch_check(n):
    """CMLX_DIST_CHECK=1: different sizes, dtypes or collectives raise the
    same RuntimeError on every rank, and the group stays usable."""
    res = run_ranks("mismatch", n, timeout=120, env={"CMLX_DIST_CHECK": "1"})
    assert_all_ok(res)
    for r, (_, out) in enumerate(res):
        assert "RAISED size [distributed] all_sum: rank 0 has 3 float32" in out, out
        assert out.count("RAISED") == 5 + (r == 1 and n == 2), out


@cmlx_only
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun (Open MPI) is not installed")
def test_mpi_mismatch_check():
    cmd = [sys.executable, "-m", "cmlx.launch", "-n", "2", "--backend", "mpi",
           "--env", "CMLX_DIST_CHECK=1", "--env", f"CMLX_TEST_SUBJECT={mx.__name__}",
           "--env", "CMLX_TEST_BACKEND=mpi", "--", sys.executable,
           os.path.join(HERE, "dist_worker.py"), "mismatch"]
    e = dict(os.environ)
    e.update(_env())
    r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK mismatch 0" in r.stdout and "OK mismatch 1" in r.stdout, r.stdout
    assert r.stdout.count("RAISED size") == 2 and r.stdout.count("RAISED recv") == 1, r.stdout


def _init_error(hostfile, rank, env=None, timeout=60):
    e = dict(os.environ)
    e.update(_env(env))
    e["MLX_HOSTFILE"], e["MLX_RANK"] = hostfile, str(rank)
    out = subprocess.run([sys.executable, os.path.join(HERE, "dist_worker.py"), "init_error"],
                         env=e, capture_output=True, text=True, timeout=timeout).stdout
    return out


@cmlx_only
def test_peer_never_connects(tmp_path):
    path = dl.write_hostfile(2, directory=str(tmp_path))
    t0 = time.monotonic()
    out = _init_error(path, 0, {"CMLX_RING_TIMEOUT": "2"})
    assert "RAISED RuntimeError [ring]" in out and "couldn't connect to rank 1" in out, out
    assert time.monotonic() - t0 < 30
    out = _init_error(path, 1, {"CMLX_RING_TIMEOUT": "2"})
    assert "RAISED RuntimeError" in out and "rank 0" in out, out


@cmlx_only
@pytest.mark.parametrize("content, rank, message", [
    (None, 0, "Couldn't open the hostfile"),
    ("[[\"127.0.0.1:1\"", 0, "is not valid JSON"),
    ("{\"a\": 1}", 0, "is not a non-empty list"),
    ("[[\"127.0.0.1:1\"], [\"127.0.0.1:2\", \"127.0.0.1:3\"]]", 0, "different numbers"),
    ("[[\"127.0.0.1:1\"], [7]]", 0, "not a string"),
    ("[[\"nonsense\"], [\"127.0.0.1:2\"]]", 0, "Can't parse address nonsense"),
    ("[[\"127.0.0.1:1\"], [\"127.0.0.1:2\"]]", 2, "Rank cannot be larger than the size"),
    ("[[\"127.0.0.1:1\"], [\"127.0.0.1:2\"]]", "x", "MLX_RANK must be a rank"),
    ("[[\"127.0.0.1:1\"], [\"127.0.0.1:2\"]]", -1, "MLX_RANK must be a rank"),
])
def test_bad_hostfile_or_rank(tmp_path, content, rank, message):
    path = str(tmp_path / "hosts.json")
    if content is not None:
        with open(path, "w") as f:
            f.write(content)
    out = _init_error(path, rank)
    assert "RAISED RuntimeError" in out and message in out, out


@cmlx_only
def test_one_rank_hostfile(tmp_path):
    path = str(tmp_path / "hosts.json")
    with open(path, "w") as f:
        json.dump([["127.0.0.1:%d" % dl.free_ports(1)[0]]], f)
    out = _init_error(path, 0)
    assert "GROUP 0 1 5" in out, out


# ---------------------------------------------------------------- MLX's own ring tests

CONFORMANCE = os.environ.get("CONFORMANCE_DIR",
                             os.path.join(HERE, "..", "..", "..", "shared", "mlx-conformance"))
RING_TESTS = os.path.join(CONFORMANCE, "tests", "ring_test_distributed.py")


@cmlx_only
@pytest.mark.skipif(not os.path.exists(RING_TESTS), reason="MLX's test suite is not here")
@pytest.mark.parametrize("n", [2, 4])
def test_mlx_ring_test_distributed(n):
    """MLX's ring_test_distributed.py (13 tests) on n local ranks, with
    `import mlx` made cmlx (cmlx.run) and failed subTests counted."""
    plugins = os.path.join(HERE, "..", "conformance", "plugins")
    env = _env({"PYTEST_PLUGINS": "cmlx_strict_subtests"})
    env["PYTHONPATH"] += os.pathsep + plugins
    cmd = [sys.executable, "-m", "cmlx.run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-o", "addopts=", os.path.basename(RING_TESTS)]
    res = dl.launch(cmd, n, timeout=400, env=env, cwd=os.path.dirname(RING_TESTS))
    for r, (code, out) in enumerate(res):
        assert code == 0 and "13 passed" in out, f"rank {r}:\n{out}"
