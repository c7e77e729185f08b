"""A small local launcher for the distributed tests: a ring hostfile on
127.0.0.1 with free ports, N processes started with MLX_RANK and
MLX_HOSTFILE, their exit codes and output collected under a timeout.

    python tests/python/dist_launch_util.py -n 2 [--connections 1] [--timeout 300] \
        [--env K=V ...] -- python script.py args...
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from cmlx.launch import _free_ports  # the launcher's own port picking


def free_ports(n):
    return _free_ports("127.0.0.1", n)


def write_hostfile(n, connections=1, directory=None):
    ports = free_ports(n * connections)
    hosts = [[f"127.0.0.1:{ports[r * connections + c]}" for c in range(connections)]
             for r in range(n)]
    fd, path = tempfile.mkstemp(prefix="cmlx_dist_hosts_", suffix=".json", dir=directory)
    with os.fdopen(fd, "w") as f:
        json.dump(hosts, f)
    return path


def launch(cmd, n, connections=1, timeout=300, env=None, cwd=None, hostfile=None,
           capture=True):
    """Run cmd on n local ranks; returns [(returncode, output)] per rank
    (returncode None when the rank was killed at the timeout).  With its own
    hostfile it retries (new ports) when another process took a port between
    the choice and the bind."""
    for attempt in range(3):
        res = _launch_once(cmd, n, connections, timeout, env, cwd, hostfile, capture)
        if hostfile is not None or not any("Couldn't listen on" in out for _, out in res):
            break
    return res


def _launch_once(cmd, n, connections, timeout, env, cwd, hostfile, capture):
    own = hostfile is None
    hostfile = hostfile or write_hostfile(n, connections)
    procs = []
    try:
        for r in range(n):
            e = dict(os.environ)
            e.update(env or {})
            e["MLX_RANK"] = str(r)
            e["MLX_HOSTFILE"] = hostfile
            procs.append(subprocess.Popen(
                cmd, env=e, cwd=cwd, stdout=subprocess.PIPE if capture else None,
                stderr=subprocess.STDOUT if capture else None, text=True))
        deadline = time.monotonic() + timeout
        results = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
                results.append((p.returncode, out or ""))
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
                results.append((None, out or ""))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        if own:
            os.unlink(hostfile)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    env = dict(kv.split("=", 1) for kv in a.env)
    res = launch(cmd, a.n, a.connections, a.timeout, env)
    rc = 0
    for r, (code, out) in enumerate(res):
        sys.stdout.write("".join(f"[rank {r}] {line}\n" for line in out.splitlines()))
        if code != 0:
            rc = 1
    print("exit codes:", [c for c, _ in res])
    sys.exit(rc)


if __name__ == "__main__":
    main()
