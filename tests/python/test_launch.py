"""cmlx.launch (and cmlx.distributed_config's hostfiles): real processes,
short timeouts.  The ring runs check what each rank is given (MLX_RANK,
MLX_HOSTFILE, env, cwd, arguments, stdin); the failure runs check that one
failing, killed or interrupted rank stops every rank with a non-zero exit;
the mpi runs go through mpirun when it exists; MLX's own ring tests run with
real MLX when it is installed."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import SUBJECT_IS_MLX

pytestmark = pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's own launcher")

import cmlx  # noqa: E402
from cmlx import launch  # noqa: E402

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cmlx.__file__)))
CONFORMANCE = "/work/shared/mlx-conformance/tests"
HAVE_MPIRUN = shutil.which("mpirun") is not None

SHOW = textwrap.dedent("""
    import json, os, sys
    hf = os.environ.get("MLX_HOSTFILE")
    ring = open(hf).read() if hf else None
    print(json.dumps({"rank": os.environ.get("MLX_RANK"), "ring": ring, "argv": sys.argv[1:],
                      "cwd": os.getcwd(), "foo": os.environ.get("FOO"),
                      "verbose": os.environ.get("MLX_RING_VERBOSE"),
                      "ompi_rank": os.environ.get("OMPI_COMM_WORLD_RANK")}), flush=True)
""")


def _env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def _launch(args, timeout=60, env=None, input=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "cmlx.launch", *args],
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=timeout,
        input=input if input is not None else "",
        cwd=cwd,
    )


def _records(out):
    # Every JSON object a rank printed, wherever it starts: mpirun forwards
    # the ranks' output in chunks and can run two ranks' lines together.
    rows, dec, i = [], json.JSONDecoder(), out.find('{"rank"')
    while i >= 0:
        row, end = dec.raw_decode(out, i)
        rows.append(row)
        i = out.find('{"rank"', end)
    return sorted(rows, key=lambda r: int(r["rank"] or r["ompi_rank"] or 0))


@pytest.fixture
def show(tmp_path):
    p = tmp_path / "show.py"
    p.write_text(SHOW)
    return str(p)


# ---- options ----------------------------------------------------------------


def test_print_python():
    r = _launch(["--print-python"])
    assert r.returncode == 0 and r.stdout.strip() == sys.executable
    r = _launch(["--print-python", "--python", "/opt/py/bin/python3"])
    assert r.stdout.strip() == "/opt/py/bin/python3"


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "No script is provided"),
        (["-n", "2"], "No script is provided"),
        (["-n", "0", "x.py"], "invalid positive_number value"),
        (["--backend", "gloo", "x.py"], "invalid choice"),
        (["--backend", "nccl", "SHOW"], "not available in cmlx"),
        (["--backend", "jaccl", "SHOW"], "macOS-only"),
        (["--hostfile", "/nonexistent/hosts.json", "SHOW"], "doesn't exist"),
        (["--hosts", "a,,b", "SHOW"], "Hostname cannot be empty"),
        (["--hosts", "node1,node2", "SHOW"], "requires IPs"),
        (["--connections-per-ip", "0", "SHOW"], "invalid positive_number value"),
        (["/nonexistent/script.py"], "Invalid script or command"),
        (["--cwd", "/nonexistent/dir", "SHOW"], "is not a directory"),
    ],
)
def test_bad_options(args, message, show):
    r = _launch([show if a == "SHOW" else a for a in args], timeout=30)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr


def test_bad_hostfiles(tmp_path, show):
    cases = {
        "not json": "{hosts: [",
        "no hosts": json.dumps({"hosts": []}),
        "no ssh": json.dumps([{"ips": ["127.0.0.1"]}]),
        "bad ips": json.dumps([{"ssh": "a", "ips": "127.0.0.1"}]),
    }
    for name, text in cases.items():
        p = tmp_path / "hosts.json"
        p.write_text(text)
        r = _launch(["--hostfile", str(p), show], timeout=30)
        assert r.returncode == 2 and "Failed to parse hostfile" in r.stderr, (name, r.stderr)


def test_no_verify_script():
    # passed through unchecked, so the rank itself fails to start it; the
    # first rank to fail stops the other, which may not get as far as
    # saying so itself: either rank's report will do
    r = _launch(["--no-verify-script", "-n", "2", "/nonexistent/cmd"], timeout=30)
    assert r.returncode != 0
    assert re.search(r"could not start rank [01]: .*No such file", r.stderr), r.stderr


# ---- what the ranks get -----------------------------------------------------


def test_ring_local_ranks(show, tmp_path):
    r = _launch(["-n", "3", "--env", "FOO=bar baz", show, "--verbose", "x"], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    rows = _records(r.stdout)
    assert [row["rank"] for row in rows] == ["0", "1", "2"]
    ring = json.loads(rows[0]["ring"])
    assert all(json.loads(row["ring"]) == ring for row in rows)
    assert len(ring) == 3 and all(len(node) == 1 for node in ring)
    addrs = [node[0] for node in ring]
    assert all(a.startswith("127.0.0.1:") for a in addrs) and len(set(addrs)) == 3
    for row in rows:
        assert row["argv"] == ["--verbose", "x"]  # after the script: the script's
        assert row["foo"] == "bar baz" and row["verbose"] is None
        assert row["cwd"] == str(tmp_path)


def test_ring_ports_connections_cwd_verbose(show, tmp_path):
    r = _launch(
        ["-n", "2", "--starting-port", "45100", "--connections-per-ip", "2", "--cwd",
         str(tmp_path), "--verbose", "--", show, "a"]
    )
    assert r.returncode == 0, r.stderr
    rows = _records(r.stdout)
    ring = json.loads(rows[0]["ring"])
    assert ring == [["127.0.0.1:45100", "127.0.0.1:45101"], ["127.0.0.1:45102", "127.0.0.1:45103"]]
    assert all(row["verbose"] == "1" and row["cwd"] == str(tmp_path) for row in rows)
    assert rows[0]["argv"] == ["a"]
    assert "[INFO]" in r.stderr


def test_ring_hosts_and_hostfile(show, tmp_path):
    r = _launch(["--hosts", "127.0.0.1,localhost", show])
    rows = _records(r.stdout)
    assert r.returncode == 0 and [row["rank"] for row in rows] == ["0", "1"]
    # a hostfile's backend and envs apply; -n does not repeat a hostfile
    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps({"backend": "ring", "envs": ["FOO=from_file"],
                              "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2}))
    r = _launch(["--hostfile", str(hf), "-n", "3", show])
    rows = _records(r.stdout)
    assert r.returncode == 0 and len(rows) == 2 and rows[0]["foo"] == "from_file"
    # one rank: MLX writes an empty hostfile
    rows = _records(_launch([show]).stdout)
    assert len(rows) == 1 and rows[0]["ring"] == "" and rows[0]["rank"] == "0"


def test_ring_hostfile_content_unit():
    from cmlx._distributed_hosts import Hostfile

    hosts = Hostfile.from_list("10.0.0.1,10.0.0.2", 2).hosts
    assert [h.ssh_hostname for h in hosts] == ["10.0.0.1"] * 2 + ["10.0.0.2"] * 2
    ring = launch.ring_hostfile(hosts, 2, None)  # remote hosts: MLX's default port
    assert ring[0] == ["10.0.0.1:32323", "10.0.0.1:32324"]
    assert ring[3] == ["10.0.0.2:32329", "10.0.0.2:32330"]
    with pytest.raises(ValueError):
        launch.ring_hostfile(hosts, 1, 65534)


def test_stdin_broadcast_and_output(tmp_path):
    p = tmp_path / "echo.py"
    p.write_text(textwrap.dedent("""
        import os, sys
        line = sys.stdin.readline().strip()
        print(f"rank {os.environ['MLX_RANK']} got {line}", flush=True)
        print(f"err {os.environ['MLX_RANK']}", file=sys.stderr, flush=True)
        print("rest", sys.stdin.read().split(), flush=True)
    """))
    r = _launch(["-n", "2", str(p)], input="hello world\nmore\n")
    assert r.returncode == 0, r.stderr
    assert "rank 0 got hello world" in r.stdout and "rank 1 got hello world" in r.stdout
    assert r.stdout.count("rest ['more']") == 2
    assert "err 0" in r.stderr and "err 1" in r.stderr


# ---- failures ---------------------------------------------------------------

FAILING = textwrap.dedent("""
    import os, signal, sys, time
    rank = int(os.environ["MLX_RANK"])
    open(os.path.join(sys.argv[2], f"pid{rank}"), "w").write(str(os.getpid()))
    if rank == 1:
        time.sleep(0.5)
        if sys.argv[1] == "exit":
            sys.exit(3)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)
    open(os.path.join(sys.argv[2], f"done{rank}"), "w").write("late")
""")


def _alive(pid):
    """pid runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return not os.path.isdir("/proc/self")  # no /proc: kill(0) said it runs


def _all_gone(pids, within):
    deadline = time.monotonic() + within
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("how, code", [("exit", 3), ("kill", 128 + signal.SIGKILL)])
def test_failing_rank_stops_all(tmp_path, how, code):
    p = tmp_path / "fail.py"
    p.write_text(FAILING)
    start = time.monotonic()
    r = _launch(["-n", "3", str(p), how, str(tmp_path)], timeout=50)
    assert time.monotonic() - start < 30
    assert r.returncode == code, r.stderr
    assert "rank 1" in r.stderr
    assert not any((tmp_path / f"done{i}").exists() for i in range(3))
    pids = [int((tmp_path / f"pid{i}").read_text()) for i in range(3)]
    assert not any(_alive(pid) for pid in pids)


def test_interrupt_stops_all(tmp_path):
    p = tmp_path / "wait.py"
    p.write_text(textwrap.dedent("""
        import os, sys, time
        open(os.path.join(sys.argv[1], "pid" + os.environ["MLX_RANK"]), "w").write(str(os.getpid()))
        time.sleep(60)
    """))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cmlx.launch", "-n", "2", str(p), str(tmp_path)],
        env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
        (tmp_path / f"pid{i}").exists() and (tmp_path / f"pid{i}").read_text() for i in range(2)
    ):
        time.sleep(0.05)
    pids = [int((tmp_path / f"pid{i}").read_text()) for i in range(2)]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert not any(_alive(pid) for pid in pids)


# ---- remote ranks (ssh replaced by a stand-in that runs the command here) ------

FAKE_SSH = """#!/bin/bash
while [ $# -gt 0 ]; do case "$1" in -tt) shift;; -o) shift 2;; *) break;; esac; done
echo "$1" >> "$FAKE_SSH_LOG"
shift
exec bash -c "$*"
"""


def test_remote_ranks_via_ssh(tmp_path, show):
    ssh = tmp_path / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    log = tmp_path / "ssh.log"
    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps([{"ssh": "nodeA", "ips": ["127.0.0.1"]},
                              {"ssh": "nodeB", "ips": ["127.0.0.2"]}]))
    extra = {"CMLX_LAUNCH_SSH": str(ssh), "FAKE_SSH_LOG": str(log)}
    r = _launch(["--hostfile", str(hf), "--env", "FOO=it's", "--cwd", str(tmp_path), show, "y"],
                env=extra)
    assert r.returncode == 0, r.stderr
    rows = _records(r.stdout)
    assert [row["rank"] for row in rows] == ["0", "1"]
    assert json.loads(rows[1]["ring"]) == [["127.0.0.1:32323"], ["127.0.0.2:32324"]]
    assert all(row["foo"] == "it's" and row["cwd"] == str(tmp_path) for row in rows)
    assert rows[0]["argv"] == ["y"]
    assert sorted(log.read_text().split()) == ["nodeA", "nodeB"]
    assert not any(line.strip().isdigit() for line in r.stdout.splitlines())  # PID line eaten

    # a failing remote rank stops the other one (over ssh, by its PID)
    p = tmp_path / "fail.py"
    p.write_text(FAILING)
    r = _launch(["--hostfile", str(hf), str(p), "exit", str(tmp_path)], env=extra, timeout=50)
    assert r.returncode == 3, r.stderr
    pids = [int((tmp_path / f"pid{i}").read_text()) for i in range(2)]
    time.sleep(0.5)
    assert not any(_alive(pid) for pid in pids)
    assert log.read_text().split().count("nodeA") == 3  # two launches and the kill


# ---- mpi --------------------------------------------------------------------


def test_mpirun_command_unit(monkeypatch):
    monkeypatch.delenv("CMLX_LAUNCH_SSH", raising=False)
    monkeypatch.delenv("OMPI_MCA_plm_rsh_agent", raising=False)

    class A:
        env = [("FOO", "1")]
        cwd = "/tmp"
        mpi_arg = ["--mca btl self,vader", "--bind-to none"]

    cmd = launch.mpirun_command("/usr/bin/mpirun", "/tmp/h", A, ["python", "s.py"])
    assert cmd[:3] == ["/usr/bin/mpirun", "--hostfile", "/tmp/h"]
    assert cmd[cmd.index("-wdir") + 1] == "/tmp" and "FOO=1" in cmd
    i = cmd.index("--mca")
    assert cmd[i : i + 5] == ["--mca", "btl", "self,vader", "--bind-to", "none"]
    assert cmd[-3:] == ["--", "python", "s.py"]
    assert "plm_rsh_agent" not in cmd

    # mpirun reaches the hosts with the launcher's ssh, unless told otherwise
    monkeypatch.setenv("CMLX_LAUNCH_SSH", "ssh -F /tmp/cfg")
    cmd = launch.mpirun_command("/usr/bin/mpirun", "/tmp/h", A, ["python", "s.py"])
    i = cmd.index("plm_rsh_agent")
    assert cmd[i - 1 : i + 2] == ["--mca", "plm_rsh_agent", "ssh -F /tmp/cfg"]
    A.mpi_arg = ["--mca plm_rsh_agent rsh"]
    cmd = launch.mpirun_command("/usr/bin/mpirun", "/tmp/h", A, ["python", "s.py"])
    assert cmd.count("plm_rsh_agent") == 1 and "rsh" in cmd


@pytest.mark.skipif(not HAVE_MPIRUN, reason="mpirun (Open MPI) is not installed")
def test_mpi_backend_local(show):
    r = _launch(["-n", "2", "--backend", "mpi", "--env", "FOO=m", show, "z"], timeout=60)
    assert r.returncode == 0, r.stderr
    rows = _records(r.stdout)
    assert [row["ompi_rank"] for row in rows] == ["0", "1"]
    assert all(row["foo"] == "m" and row["argv"] == ["z"] for row in rows)


@pytest.mark.skipif(not HAVE_MPIRUN, reason="mpirun (Open MPI) is not installed")
def test_mpi_backend_failure(tmp_path):
    p = tmp_path / "f.py"
    p.write_text("import os, sys, time\n"
                 "sys.exit(5) if os.environ['OMPI_COMM_WORLD_RANK'] == '1' else time.sleep(60)\n")
    start = time.monotonic()
    r = _launch(["-n", "2", "--backend", "mpi", str(p)], timeout=60)
    assert r.returncode != 0 and time.monotonic() - start < 40


CMLX_MPI = textwrap.dedent("""
    import mlx.core as mx
    world = mx.distributed.init(strict=True, backend="mpi")
    r, n = world.rank(), world.size()
    for dt in (mx.float32, mx.float16, mx.bfloat16, mx.int32, mx.uint8, mx.complex64, mx.bool_):
        x = (mx.arange(6) + r).astype(dt)
        s = mx.distributed.all_sum(x)
        want = sum((mx.arange(6) + k).astype(dt) for k in range(n)) if dt != mx.bool_ else \\
            mx.array([True] * 6)
        assert mx.all(s == want).item(), (dt, s, want)
        assert mx.all(mx.distributed.all_max(x) == (mx.arange(6) + n - 1).astype(dt)).item()
        assert mx.all(mx.distributed.all_min(x) == mx.arange(6).astype(dt)).item()
    g = mx.distributed.all_gather(mx.array([[r, r]]))
    assert g.tolist() == [[k, k] for k in range(n)], g
    sub = world.split(r % 2)
    assert sub.size() == (n + 1 - r % 2) // 2 and sub.rank() == r // 2
    print("ok", r, flush=True)
""")


@pytest.mark.skipif(not HAVE_MPIRUN, reason="mpirun (Open MPI) is not installed")
@pytest.mark.parametrize("n", [2, 4])
def test_cmlx_program_over_mpi(tmp_path, n):
    """The MPI transport from Python: cmlx's own distributed ops under mpirun."""
    p = tmp_path / "prog.py"
    p.write_text(CMLX_MPI)
    r = _launch(["-n", str(n), "--backend", "mpi", "--", sys.executable, "-m", "cmlx.run",
                 str(p)], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ok") == n  # (mpirun may interleave the ranks' lines)


# ---- MLX's own ring tests with real MLX, through this launcher ----------------


@pytest.mark.skipif(
    not os.path.exists(os.path.join(CONFORMANCE, "ring_test_distributed.py")),
    reason="MLX's test suite is not here",
)
def test_real_mlx_ring_suite():
    pytest.importorskip("mlx.core")
    r = _launch(["-n", "2", "--backend", "ring", "ring_test_distributed.py"], timeout=300,
                cwd=CONFORMANCE, env={"PYTHONPATH": PKG_DIR})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stderr.count("Ran 13 tests") == 2 and r.stderr.count("\nOK") == 2


# ---- cmlx.distributed_config ---------------------------------------------------


def _config(args, env=None):
    return subprocess.run([sys.executable, "-m", "cmlx.distributed_config", *args],
                          capture_output=True, text=True, env=_env(env), timeout=60,
                          stdin=subprocess.DEVNULL)


def test_config_local_hosts(tmp_path):
    out = tmp_path / "hosts.json"
    r = _config(["--hosts", "127.0.0.1,localhost", "--backend", "ring", "--env", "A=1",
                 "--output-hostfile", str(out)])
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["backend"] == "ring" and data["envs"] == ["A=1"]
    assert [(h["ssh"], h["ips"]) for h in data["hosts"]] == [
        ("127.0.0.1", ["127.0.0.1"]), ("localhost", ["127.0.0.1"])]
    r = _config(["--hosts", "127.0.0.1"])  # printed when no output file
    assert r.returncode == 0 and r.stdout.startswith("Hostfile\n========\n")
    assert json.loads(r.stdout.split("========\n", 1)[1])["hosts"][0]["ips"] == ["127.0.0.1"]


def test_config_hostfile_feeds_launch(tmp_path, show):
    out = tmp_path / "hosts.json"
    assert _config(["--hosts", "127.0.0.1,127.0.0.1", "--output-hostfile", str(out)]).returncode == 0
    rows = _records(_launch(["--hostfile", str(out), show]).stdout)
    assert [row["rank"] for row in rows] == ["0", "1"]


def test_config_remote_hosts_via_ssh(tmp_path):
    ssh = tmp_path / "ssh"
    ssh.write_text(textwrap.dedent("""\
        #!/bin/bash
        while [ $# -gt 0 ]; do case "$1" in -o) shift 2;; *) break;; esac; done
        host="$1"; shift
        [ "$host" = down ] && exit 255
        [ "$*" = "hostname -I" ] && { echo "127.0.0.1 10.1.2.3 fe80::1"; exit 0; }
        exec "$@"
    """))
    ssh.chmod(0o755)
    env = {"CMLX_LAUNCH_SSH": str(ssh)}
    r = _config(["--hosts", "nodeA,down"], env=env)
    assert r.returncode == 1 and "Could not ssh to down" in r.stderr
    r = _config(["--hosts", "nodeA,down,10.9.9.9", "--ignore-unreachable"], env=env)
    assert r.returncode == 0, r.stderr
    hosts = json.loads(r.stdout.split("========\n", 1)[1])["hosts"]
    assert [(h["ssh"], h["ips"]) for h in hosts] == [("nodeA", ["10.1.2.3"]),
                                                    ("10.9.9.9", ["10.9.9.9"])]


@pytest.mark.parametrize("args", [["--over", "thunderbolt"], ["--dot"], ["--auto-setup"],
                                  ["--backend", "jaccl"]])
def test_config_macos_only_parts(args):
    r = _config(args)
    assert r.returncode == 2 and "macOS-only" in r.stderr


def test_config_bad_input(tmp_path):
    assert "Hostname cannot be empty" in _config(["--hosts", ","]).stderr
    assert "doesn't exist" in _config(["--hostfile", str(tmp_path / "none.json")]).stderr
    assert _config(["--no-auto-setup", "--hosts", "127.0.0.1"]).returncode == 0


# ---- MLX's own distributed suites with cmlx, through this launcher -------------

def _suite_with_cmlx(args, timeout):
    """Run a suite file with `import mlx` routed to cmlx (cmlx.run)."""
    return _launch([*args[:-1], "--", sys.executable, "-m", "cmlx.run", args[-1]],
                   timeout=timeout, cwd=CONFORMANCE)


@pytest.mark.skipif(
    not os.path.exists(os.path.join(CONFORMANCE, "ring_test_distributed.py")),
    reason="MLX's test suite is not here",
)
@pytest.mark.parametrize("n", [2, 4])
def test_cmlx_ring_suite(n):
    r = _suite_with_cmlx(["-n", str(n), "--backend", "ring", "ring_test_distributed.py"], 300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stderr.count("Ran 13 tests") == n and r.stderr.count("\nOK") == n


@pytest.mark.skipif(
    not (HAVE_MPIRUN and os.path.exists(os.path.join(CONFORMANCE, "mpi_test_distributed.py"))
         and os.environ.get("CMLX_DIST_SUITE")),
    reason="needs mpirun, MLX's suite and CMLX_DIST_SUITE=1 (8 ranks: about a minute on 2 cores)",
)
def test_cmlx_mpi_suite():
    r = _suite_with_cmlx(["-n", "8", "--backend", "mpi", "mpi_test_distributed.py"], 600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stderr.count("Ran 13 tests") == 8 and r.stderr.count("\nOK") == 8


# ---- stopping a job stops everything it started -------------------------------

# Each rank starts a grandchild in its process group and, on Linux, one that
# leaves it with setsid(); its pids go to a file once all are started.
FAMILY = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    rank = int(os.environ["MLX_RANK"])
    where, mode = sys.argv[1], sys.argv[2]
    kids = [subprocess.Popen(["sleep", "300"])]
    if sys.platform.startswith("linux"):
        kids.append(subprocess.Popen(["sleep", "301"], start_new_session=True))
    if "stubborn" in mode and rank == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    path = os.path.join(where, f"pids{rank}")
    with open(path + ".tmp", "w") as f:
        f.write(" ".join(str(p) for p in [os.getpid()] + [k.pid for k in kids]))
    os.rename(path + ".tmp", path)
    if mode.startswith("fail") and rank == 1:
        time.sleep(0.3)
        sys.exit(5)
    if mode == "done":
        sys.exit(0)
    time.sleep(120)
""")


def _family(tmp_path, args, env=None):
    p = tmp_path / "family.py"
    p.write_text(FAMILY)
    return [str(p), str(tmp_path), *args], _env({"CMLX_LAUNCH_GRACE": "1", **(env or {})})


def _pids(tmp_path, n):
    return [int(p) for r in range(n) for p in (tmp_path / f"pids{r}").read_text().split()]


def _wait_for_pids(tmp_path, n, within=15):
    deadline = time.monotonic() + within
    while not all((tmp_path / f"pids{r}").exists() for r in range(n)):
        assert time.monotonic() < deadline, "the ranks did not start"
        time.sleep(0.05)
    return _pids(tmp_path, n)


@pytest.mark.parametrize("mode, code", [("fail", 5), ("done", 0), ("fail-stubborn", 5)])
def test_stopping_stops_grandchildren(tmp_path, mode, code):
    """A failing rank, ranks that end leaving children behind, and a rank
    that ignores SIGTERM (killed after CMLX_LAUNCH_GRACE): once the launcher
    returns, nothing any rank started is left."""
    args, env = _family(tmp_path, [mode])
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cmlx.launch", "-n", "2", *args], env=env,
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == code, r.stderr
    assert time.monotonic() - start < 10
    pids = _pids(tmp_path, 2)
    assert _all_gone(pids, 1.0), [p for p in pids if _alive(p)]


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signalled_launcher_stops_grandchildren(tmp_path, sig, code):
    args, env = _family(tmp_path, ["wait-stubborn"])
    proc = subprocess.Popen([sys.executable, "-m", "cmlx.launch", "-n", "2", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    pids = _wait_for_pids(tmp_path, 2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == code, err
    assert _all_gone(pids, 1.0), [p for p in pids if _alive(p)]


def test_killed_launcher_stops_ranks(tmp_path):
    """The launcher dies by SIGKILL (it can do nothing): each rank's guard
    sees its pipe from the launcher close and stops the rank and all it
    started; rank 0 ignores SIGTERM, so that takes SIGKILL, 1 s later."""
    args, env = _family(tmp_path, ["wait-stubborn"])
    proc = subprocess.Popen([sys.executable, "-m", "cmlx.launch", "-n", "2", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    pids = _wait_for_pids(tmp_path, 2)
    assert all(_alive(p) for p in pids)
    proc.kill()
    proc.wait()
    assert _all_gone(pids, 6.0), [p for p in pids if _alive(p)]


def test_guard_passes_the_exit_status_through(tmp_path):
    guard = os.path.join(os.path.dirname(launch.__file__), "_rank_guard.py")
    run = lambda *cmd: subprocess.run([sys.executable, "-I", "-S", guard, "0", "-1", "1", "--",
                                       *cmd], capture_output=True, text=True, timeout=30)
    assert run(sys.executable, "-c", "import sys; sys.exit(7)").returncode == 7
    assert run(sys.executable, "-c", "import os; os.kill(os.getpid(), 9)").returncode == -9
    assert run("true").returncode == 0
    r = run("/nonexistent/cmd")
    assert r.returncode == 127 and "could not start rank 0" in r.stderr


def test_rank_ignoring_sigterm_is_killed(tmp_path):
    p = tmp_path / "stubborn.py"
    p.write_text(textwrap.dedent("""
        import os, signal, sys, time
        rank = os.environ["MLX_RANK"]
        if rank == "1":
            time.sleep(0.5)
            sys.exit(4)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open(os.path.join(sys.argv[1], "pid0"), "w").write(str(os.getpid()))
        time.sleep(60)
    """))
    start = time.monotonic()
    r = _launch(["-n", "2", str(p), str(tmp_path)], timeout=50, env={"CMLX_LAUNCH_GRACE": "1"})
    assert r.returncode == 4, r.stderr
    assert time.monotonic() - start < 10  # SIGKILL follows SIGTERM after 1 s
    assert not _alive(int((tmp_path / "pid0").read_text()))


def test_python_option_runs_options_and_scripts(tmp_path, show):
    code = "import os, sys; print('rank', os.environ['MLX_RANK'], sys.executable)"
    r = _launch(["-n", "2", "--python", sys.executable, "--", "-c", code])
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split("\n")[:2]) == [f"rank 0 {sys.executable}",
                                                f"rank 1 {sys.executable}"]
    # a script that is not executable runs with the interpreter, by its full path
    script = tmp_path / "prog"
    script.write_text(SHOW)
    rows = _records(_launch(["-n", "2", str(script)], cwd=str(tmp_path)).stdout)
    assert [row["rank"] for row in rows] == ["0", "1"]
