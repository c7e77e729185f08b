"""Launch a distributed program on one or more machines, as ``mlx.launch``:

    python -m cmlx.launch -n 4 train.py --lr 0.1
    python -m cmlx.launch --hosts 10.0.0.1,10.0.0.2 --backend ring -- train.py
    python -m cmlx.launch --hostfile hosts.json --backend mpi train.py

Every rank on ``127.0.0.1`` (or ``localhost``) runs here; other hosts are
reached with ssh.  The ring backend gets ``MLX_RANK`` and ``MLX_HOSTFILE`` (a
JSON list, per rank, of the "ip:port" addresses it listens on); the mpi
backend is started through ``mpirun``.  Each rank's stdout and stderr are
forwarded (whole lines, unprefixed, as MLX does), stdin is broadcast to every
rank, and when one rank fails, or the launcher is interrupted, every rank is
stopped and the launcher exits non-zero.  See docs/launch.md.
"""

import argparse
import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter

from cmlx._distributed_hosts import (
    Hostfile,
    ip_of,
    log,
    log_warning,
    positive_number,
    ssh_command,
)

DEFAULT_PORT = 32323
KILL_GRACE_S = 5.0  # SIGTERM, then SIGKILL after this long (CMLX_LAUNCH_GRACE)
STOP_SSH_TIMEOUT_S = 5  # the ssh that stops a remote rank: its ConnectTimeout
GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rank_guard.py")


def _grace():
    try:
        return max(0.0, float(os.environ.get("CMLX_LAUNCH_GRACE", KILL_GRACE_S)))
    except ValueError:
        return KILL_GRACE_S


_lifeline = []


def _lifeline_fd():
    """The read end of a pipe whose write end only this process holds: each
    rank's guard sees EOF on it when the launcher is gone, however it went."""
    if not _lifeline:
        _lifeline.extend(os.pipe())  # both ends close on exec unless passed
    return _lifeline[0]


def _guarded(rank, command):
    """command run by cmlx/_rank_guard.py, which stops whatever the rank
    started when the rank ends or is stopped, or when the launcher dies."""
    return [sys.executable, "-I", "-S", GUARD, str(rank), str(_lifeline_fd()),
            str(_grace()), "--", *command]


# ---- the ranks --------------------------------------------------------------


class Rank:
    """One launched process: a local child or an ssh session running it."""

    def __init__(self, rank, host, command, env, cwd, files, verbose):
        self.rank = rank
        self.host = host
        self.remote_pid = None
        self.stopped = False
        self.killer = None  # the ssh that stops a remote rank
        self.files = []
        if host is None or host.is_local:
            self.remote = False
            full_env = dict(os.environ)
            for key, value in env:
                full_env[key] = value
            for key, content in files.items():
                fd, path = tempfile.mkstemp(prefix="cmlx_launch_", suffix=".json")
                with os.fdopen(fd, "w") as f:
                    f.write(content)
                self.files.append(path)
                full_env[key] = path
            if host is not None:
                full_env["MLX_RANK"] = str(rank)
            log(verbose, f"Starting rank {rank} here:", shlex.join(command))
            self.proc = subprocess.Popen(
                _guarded(rank, command),
                env=full_env,
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(_lifeline_fd(),),
            )
        else:
            self.remote = True
            script = _remote_script(rank, command, env, cwd, files)
            cmd = ssh_command() + ["-tt", "-o", "LogLevel=QUIET", host.ssh_hostname, script]
            log(verbose, f"Starting rank {rank} on {host.ssh_hostname}:", shlex.join(command))
            # guarded too: when the launcher dies the guard ends ssh, and the
            # remote side gets SIGHUP as its terminal goes
            self.proc = subprocess.Popen(
                _guarded(rank, cmd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(_lifeline_fd(),),
            )

    def poll(self):
        return self.proc.poll()

    def stop(self):
        """Ask the rank to end (SIGTERM to its process group, and over ssh).
        The ssh that stops a remote rank runs in the background (a host that
        dropped off the network must not hold up the others); reap() waits
        for it."""
        if self.stopped or self.proc.poll() is not None:
            return
        self.stopped = True
        if self.remote and self.remote_pid:
            # the remote rank's whole process group, else the rank alone
            pid = self.remote_pid
            kill = (f"g=$(ps -o pgid= -p {pid} | tr -d ' '); "
                    f"{{ [ -n \"$g\" ] && kill -TERM -- -$g; }} 2>/dev/null "
                    f"|| kill -TERM {pid} 2>/dev/null")
            try:
                self.killer = subprocess.Popen(
                    ssh_command() + ["-o", f"ConnectTimeout={STOP_SSH_TIMEOUT_S}",
                                     self.host.ssh_hostname, kill],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError:
                self._unreachable()
        _signal_group(self.proc, signal.SIGTERM)

    def _unreachable(self):
        log_warning(f"Could not reach {self.host.ssh_hostname} to stop rank {self.rank}")

    def reap(self, deadline):
        """Wait for the background ssh of stop() until the deadline."""
        k, self.killer = self.killer, None
        if k is None:
            return
        try:
            code = k.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(k, signal.SIGKILL)
            k.wait()
            code = 255
        if code == 255:  # ssh's own failure (the kill itself may find nothing)
            self._unreachable()

    def kill(self):
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGKILL)

    def cleanup(self):
        for path in self.files:
            try:
                os.unlink(path)
            except OSError:
                pass


def _signal_group(proc, sig, group_only=False):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        if group_only:
            return
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass


def _remote_script(rank, command, env, cwd, files):
    """A bash script for the remote host: report its PID (the first line of
    stdout), enter the working directory, set the environment, write the
    files, then exec the command."""
    q = shlex.quote
    parts = ["stty -echo 2>/dev/null", "echo $$"]
    d = cwd or os.getcwd()
    if cwd is not None:
        parts.append(f"cd {q(d)} || {{ echo 'Failed to change directory to' {q(d)} >&2; exit 1; }}")
    else:
        parts.append(f"cd {q(d)} 2>/dev/null")
    for key, value in env:
        parts.append(f"export {key}={q(value)}")
    for key, content in files.items():
        parts.append(f"f=$(mktemp) && printf '%s' {q(content)} > \"$f\" && export {key}=\"$f\"")
    parts.append(f"export MLX_RANK={rank}")
    parts.append("exec " + " ".join(q(c) for c in command))
    return "bash -c " + q("; ".join(parts))


# ---- forwarding and supervision ---------------------------------------------


class _Stream:
    """A rank's stdout or stderr: whole lines go out as they come, a partial
    line when nothing more arrives for a moment."""

    def __init__(self, rank, src, dst, strip_pid):
        self.rank, self.src, self.dst = rank, src, dst
        self.buffer = b""
        self.strip_pid = strip_pid  # the remote script's first line is its PID

    def feed(self, data):
        self.buffer += data
        if self.strip_pid:
            if b"\n" not in self.buffer:
                return
            line, self.buffer = self.buffer.split(b"\n", 1)
            pid = line.strip().decode(errors="ignore")
            self.rank.remote_pid = int(pid) if pid.isdigit() else None
            self.strip_pid = False
        cut = self.buffer.rfind(b"\n") + 1
        if cut:
            self.write(self.buffer[:cut])
            self.buffer = self.buffer[cut:]

    def flush(self):
        if self.buffer and not self.strip_pid:
            self.write(self.buffer)
        self.buffer = b""

    def write(self, data):
        try:
            self.dst.write(data)
            self.dst.flush()
        except (BrokenPipeError, ValueError):
            pass


def _out(stream):
    return getattr(stream, "buffer", stream)


def _supervise(ranks, verbose, forward_stdin=True):
    """Forward output and stdin until every rank ends; stop them all as soon
    as one fails or on SIGINT/SIGTERM.  Returns the launcher's exit code."""
    streams = {}
    for r in ranks:
        streams[r.proc.stdout.fileno()] = _Stream(r, r.proc.stdout, _out(sys.stdout), r.remote)
        streams[r.proc.stderr.fileno()] = _Stream(r, r.proc.stderr, _out(sys.stderr), False)
    stdins = {r.proc.stdin.fileno(): [r.proc.stdin, b""] for r in ranks}
    for fd in stdins:
        os.set_blocking(fd, False)
    stdin_fd = None
    if forward_stdin:
        try:
            stdin_fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            stdin_fd = None

    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    first_failure = None
    deadline = None
    drained_by = None  # every rank has ended: forward what is left, briefly
    try:
        while streams or any(r.poll() is None for r in ranks):
            if drained_by is None and all(r.poll() is not None for r in ranks):
                drained_by = time.monotonic() + 2.0
            if drained_by is not None and time.monotonic() > drained_by:
                break
            if interrupted and deadline is None:
                log_warning("Interrupted, stopping every rank")
                deadline = _stop_all(ranks)
            # a failed rank stops the others
            if first_failure is None:
                first_failure = _failed(ranks)
                if first_failure is not None and deadline is None:
                    deadline = _stop_all(ranks)
            if deadline is not None and time.monotonic() > deadline:
                for r in ranks:
                    r.kill()
            readers = list(streams)
            if stdin_fd is not None and stdins:
                readers.append(stdin_fd)
            writers = [fd for fd, (_, pending) in stdins.items() if pending]
            try:
                readable, writable, _ = select.select(readers, writers, [], 0.1)
            except InterruptedError:
                continue
            for fd in readable:
                if fd == stdin_fd:
                    data = os.read(fd, 65536)
                    if not data:  # EOF: the ranks see EOF too
                        stdin_fd = None
                        for entry in stdins.values():
                            if not entry[1]:
                                _close(entry[0])
                        stdins = {k: v for k, v in stdins.items() if v[1]}
                    for entry in stdins.values():
                        entry[1] += data
                    continue
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if data:
                    streams[fd].feed(data)
                else:
                    streams.pop(fd).flush()
            if not readable:
                for s in streams.values():
                    s.flush()
            for fd in writable:
                entry = stdins.get(fd)
                if entry is None:
                    continue
                try:
                    n = os.write(fd, entry[1])
                    entry[1] = entry[1][n:]
                except (BrokenPipeError, OSError):
                    entry[1] = b""
                    _close(entry[0])
                    del stdins[fd]
                    continue
                if not entry[1] and stdin_fd is None:
                    _close(entry[0])
                    del stdins[fd]
    finally:
        for stream in streams.values():
            stream.flush()
        for s, h in old.items():
            signal.signal(s, h)
        reap_by = time.monotonic() + STOP_SSH_TIMEOUT_S + 5.0
        for r in ranks:
            if r.poll() is None:
                r.kill()
            r.proc.wait()
            r.reap(reap_by)
            if not sys.platform.startswith("linux"):
                # no guard finds descendants there: what the rank left in its
                # group goes now (the group's id is not reused while it has
                # members, so this reaches nothing else)
                _signal_group(r.proc, signal.SIGKILL, group_only=True)
            r.cleanup()
        for entry in stdins.values():
            _close(entry[0])

    if first_failure is None:
        first_failure = _failed(ranks)
    for r in ranks:
        if r.proc.returncode == 0:
            log(verbose, f"Node with rank {r.rank} completed")
    if interrupted:
        return 130 if interrupted[0] == signal.SIGINT else 143
    if first_failure is not None:
        code = first_failure.proc.returncode
        return code if code > 0 else 128 - code
    return 0


def _failed(ranks):
    """The first rank that ended in failure on its own (not stopped by us)."""
    for r in ranks:
        code = r.poll()
        if code not in (None, 0) and not r.stopped:
            where = f" on {r.host.ssh_hostname}" if r.remote else ""
            if code < 0:
                log_warning(f"Node with rank {r.rank}{where} was killed (signal {-code})")
            else:
                log_warning(f"Node with rank {r.rank}{where} exited with code {code}")
            return r
    return None


def _stop_all(ranks):
    """SIGTERM to every rank's group; the guards SIGKILL what is left after
    the grace period, and the launcher kills the groups a second later."""
    for r in ranks:
        r.stop()
    return time.monotonic() + _grace() + 1.0


def _close(f):
    try:
        f.close()
    except OSError:
        pass


# ---- backends ---------------------------------------------------------------


def _free_ports(ip, count):
    """count distinct free TCP ports on ip (held together, then released)."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.bind((ip, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def ring_hostfile(hosts, connections_per_ip, starting_port):
    """MLX_HOSTFILE's content: per rank, the "ip:port" addresses it listens
    on.  With starting_port None and every host here, the ports are free ones
    picked now; otherwise they count up from starting_port (default 32323)."""
    per_rank = [len(h.ips) * connections_per_ip for h in hosts]
    if starting_port is None and all(h.is_local for h in hosts):
        ports = iter(_free_ports(hosts[0].ips[0], sum(per_rank)))
    else:
        ports = iter(range(starting_port or DEFAULT_PORT, 1 << 30))
    ring = []
    for h in hosts:
        node = []
        for ip in h.ips:
            for _ in range(connections_per_ip):
                port = next(ports)
                node.append(f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}")
        ring.append(node)
    for addrs in ring:
        for a in addrs:
            if int(a.rsplit(":", 1)[1]) > 65535:
                raise ValueError(f"port of {a} is out of range")
    return ring


def launch_ring(parser, hosts, args, command):
    for h in hosts:
        if not h.ips and ip_of(h.ssh_hostname):
            h.ips = [ip_of(h.ssh_hostname)]
    if any(not h.ips for h in hosts):
        parser.error("The ring backend requires IPs to be provided instead of hostnames")
    try:
        ring = ring_hostfile(hosts, args.connections_per_ip, args.starting_port)
    except (OSError, ValueError) as e:
        parser.error(f"Could not choose the ring's ports: {e}")
    files = {"MLX_HOSTFILE": json.dumps(ring) if len(ring) > 1 else ""}
    env = list(args.env)
    if args.verbose:
        env.append(("MLX_RING_VERBOSE", "1"))
        log(True, "Ring hostfile:", json.dumps(ring))
    log(args.verbose, "Running", shlex.join(command))
    ranks = []
    try:
        for rank, h in enumerate(hosts):
            ranks.append(Rank(rank, h, command, env, args.cwd, files, args.verbose))
    except OSError as e:
        for r in ranks:
            r.stop()
        _supervise(ranks, args.verbose, forward_stdin=False)
        parser.exit(1, f"cmlx.launch: could not start rank {len(ranks)}: {e}\n")
    return _supervise(ranks, args.verbose)


def _mpi_libname():
    """The libmpi that this Open MPI's tools link (for MLX_MPI_LIBNAME)."""
    ompi_info = shutil.which("ompi_info")
    if not ompi_info:
        return None
    try:
        out = subprocess.run(["ldd", ompi_info], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("libmpi."):
            return parts[2] if len(parts) > 2 and parts[1] == "=>" else parts[0]
    return None


def mpirun_command(mpirun, hostfile_path, args, command):
    env = list(args.env)
    libname = _mpi_libname()
    if libname and not any(k == "MLX_MPI_LIBNAME" for k, _ in env):
        env.insert(0, ("MLX_MPI_LIBNAME", libname))
    cmd = [mpirun, "--hostfile", hostfile_path]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if args.cwd:
        cmd += ["-wdir", args.cwd]
    for key, value in env:
        cmd += ["-x", f"{key}={value}"]
    extra = [a for arg in args.mpi_arg for a in shlex.split(arg)]
    ssh = os.environ.get("CMLX_LAUNCH_SSH")
    if ssh and "plm_rsh_agent" not in extra and "OMPI_MCA_plm_rsh_agent" not in os.environ:
        # mpirun reaches the hosts with the same ssh as the ring's ranks
        cmd += ["--mca", "plm_rsh_agent", ssh]
    return cmd + extra + ["--", *command]


def launch_mpi(parser, hosts, args, command):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        parser.error("The mpi backend needs mpirun (Open MPI) on the PATH")
    log(args.verbose, f"Using '{mpirun}'")
    counts = Counter("localhost" if h.is_local else h.ssh_hostname for h in hosts)
    fd, path = tempfile.mkstemp(prefix="cmlx_launch_mpi_", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        for name, n in counts.items():
            f.write(f"{name} slots={n}\n")
    try:
        cmd = mpirun_command(mpirun, path, args, command)
        log(args.verbose, "Running", shlex.join(cmd))
        rank = Rank(0, None, cmd, [], None, {}, False)
        return _supervise([rank], args.verbose)
    finally:
        os.unlink(path)


# ---- command line -----------------------------------------------------------


def _parse_env(parser, entries):
    env = []
    for e in entries:
        key, _, value = e.partition("=")
        if not key or not all(c.isalnum() or c == "_" for c in key) or key[0].isdigit():
            log_warning(f"'{e}' is an invalid environment variable so it is ignored")
            continue
        env.append((key, value))
    return env


def resolve_command(parser, command, python, verify):
    """A script that exists runs with the interpreter (full path); a command
    on the PATH runs as is; anything else is an error unless verify is off."""
    first = command[0]
    if os.path.isfile(first):
        path = os.path.abspath(first)
        if first.endswith(".py") or not os.access(path, os.X_OK):
            return [python or sys.executable, path, *command[1:]]
        return [path, *command[1:]]
    if python is not None and first.startswith("-"):  # python options, e.g. -m module
        return [python, *command]
    if shutil.which(first) is not None:
        return command
    if verify:
        parser.error(f"Invalid script or command {first}")
    return [python, *command] if python and first.endswith(".py") else command


def make_parser():
    p = argparse.ArgumentParser(
        prog="cmlx.launch", description="Launch a cmlx (or MLX) distributed program"
    )
    p.add_argument(
        "--print-python",
        action="store_true",
        help="Print the path to the current python executable and exit",
    )
    p.add_argument("--verbose", action="store_true", help="Print debug messages in stderr")
    p.add_argument("--hosts", default="127.0.0.1", help="A comma separated list of hosts")
    p.add_argument(
        "--repeat-hosts",
        "-n",
        type=positive_number,
        default=1,
        help="Repeat each host a given number of times",
    )
    p.add_argument("--hostfile", help="The file containing the hosts")
    p.add_argument(
        "--backend",
        choices=["ring", "mpi", "any", "nccl", "jaccl", "jaccl-ring"],
        help="Which distributed backend to launch (default: the hostfile's, else ring)",
    )
    p.add_argument(
        "--env", action="append", default=[], help="Set environment variables for the jobs"
    )
    p.add_argument(
        "--mpi-arg", action="append", default=[], help="Arguments to pass directly to mpirun"
    )
    p.add_argument(
        "--connections-per-ip",
        default=1,
        type=positive_number,
        help="How many connections per ip to use for the ring backend",
    )
    p.add_argument(
        "--starting-port",
        "-p",
        type=int,
        default=None,
        help="For the ring backend listen on this port increasing by 1 per rank and IP "
        f"(default: free ports when every rank is local, else {DEFAULT_PORT})",
    )
    p.add_argument("--cwd", help="Set the working directory on each node to the provided one")
    p.add_argument(
        "--python", default=None, help="Launch the script with this python interpreter"
    )
    p.add_argument(
        "--no-verify-script",
        dest="verify_script",
        action="store_false",
        help="Do not verify that the script or command exists here",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the script and its arguments")
    return p


def main(argv=None):
    parser = make_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.print_python:
        print(args.python or sys.executable)
        return 0
    command = list(args.command)
    if command and command[0] == "--":
        command.pop(0)
    if not command:
        parser.error("No script is provided")
    try:
        if args.hostfile is not None:
            hostfile = Hostfile.from_file(args.hostfile)
        else:
            hostfile = Hostfile.from_list(args.hosts, args.repeat_hosts)
    except ValueError as e:
        parser.error(str(e))

    local = any(h.is_local for h in hostfile.hosts)
    if args.cwd is not None and local and not os.path.isdir(args.cwd):
        parser.error(f"--cwd: {args.cwd} is not a directory")
    if args.backend is None or args.backend == "any":
        args.backend = hostfile.backend or "ring"
    if args.backend in ("nccl", "jaccl", "jaccl-ring"):
        parser.error(
            f"The {args.backend} backend is not available in cmlx "
            "(NCCL needs the CUDA backend, JACCL is macOS-only); use ring or mpi"
        )
    if args.backend not in ("ring", "mpi"):
        parser.error("The backend should be one of {'ring', 'mpi'}")

    args.env = _parse_env(parser, hostfile.envs + args.env)
    cols, lines = shutil.get_terminal_size((0, 0))
    if cols > 0 and not any(k == "COLUMNS" for k, _ in args.env):
        args.env += [("COLUMNS", str(cols)), ("LINES", str(lines))]

    command = resolve_command(parser, command, args.python, args.verify_script)
    if args.backend == "ring":
        return launch_ring(parser, hostfile.hosts, args, command)
    return launch_mpi(parser, hostfile.hosts, args, command)


if __name__ == "__main__":
    sys.exit(main())
