"""Hosts for ``cmlx.launch`` and ``cmlx.distributed_config``: MLX's hostfile
format, host lists, logging.

A hostfile is JSON, either a list of hosts or an object with ``hosts`` and
optionally ``backend`` and ``envs``; each host is ``{"ssh": name, "ips":
[ip, ...]}`` (``rdma`` entries are read and kept, for MLX's macOS-only
backends)::

    {"backend": "ring", "envs": ["OMP_NUM_THREADS=1"],
     "hosts": [{"ssh": "node1", "ips": ["10.0.0.1"]},
               {"ssh": "node2", "ips": ["10.0.0.2"]}]}
"""

import ipaddress
import json
import os
import shlex
import sys
from dataclasses import dataclass, field

LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")


@dataclass
class Host:
    rank: int
    ssh_hostname: str
    ips: list
    rdma: list = field(default_factory=list)

    @property
    def is_local(self):
        return self.ssh_hostname in LOCAL_NAMES


@dataclass
class Hostfile:
    hosts: list
    backend: str = ""
    envs: list = field(default_factory=list)

    def to_json(self):
        return {
            "backend": self.backend,
            "envs": self.envs,
            "hosts": [
                {"ssh": h.ssh_hostname, "ips": h.ips, "rdma": h.rdma} for h in self.hosts
            ],
        }

    @classmethod
    def from_file(cls, path):
        try:
            with open(path) as f:
                data = json.load(f)
        except FileNotFoundError:
            raise ValueError(f"Hostfile {path} doesn't exist") from None
        except (OSError, ValueError) as e:
            raise ValueError(f"Failed to parse hostfile {path} ({e})") from None
        backend, envs, hosts = "", [], data
        if isinstance(data, dict):
            backend = data.get("backend", "") or ""
            envs = data.get("envs", []) or []
            hosts = data.get("hosts")
        if not isinstance(hosts, list) or not hosts:
            raise ValueError(f"Failed to parse hostfile {path} (it lists no hosts)")
        if not isinstance(backend, str) or not isinstance(envs, list):
            raise ValueError(f"Failed to parse hostfile {path} (bad 'backend' or 'envs')")
        parsed = []
        for i, h in enumerate(hosts):
            if not isinstance(h, dict) or not isinstance(h.get("ssh"), str) or not h["ssh"]:
                raise ValueError(f"Failed to parse hostfile {path} (host {i} has no 'ssh' name)")
            ips = h.get("ips", []) or []
            if not isinstance(ips, list) or not all(isinstance(ip, str) for ip in ips):
                raise ValueError(f"Failed to parse hostfile {path} (host {i}: bad 'ips')")
            parsed.append(Host(i, h["ssh"], list(ips), list(h.get("rdma", []) or [])))
        return cls(parsed, backend, [str(e) for e in envs])

    @classmethod
    def from_list(cls, hostlist, repeats=1):
        hosts = []
        for name in hostlist.split(","):
            name = name.strip()
            if not name:
                raise ValueError("Hostname cannot be empty")
            ips = [ip_of(name)] if ip_of(name) else []
            for _ in range(repeats):
                hosts.append(Host(len(hosts), name, list(ips)))
        return cls(hosts)


def ip_of(name):
    """The IP a host name stands for without a lookup (an IP, or localhost)."""
    if name == "localhost":
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return None


def ssh_command():
    """The ssh client (CMLX_LAUNCH_SSH replaces it, e.g. with a test's stand-in)."""
    return shlex.split(os.environ.get("CMLX_LAUNCH_SSH", "ssh"))


def positive_number(x):
    value = int(x)
    if value <= 0:
        raise ValueError("Number should be positive")
    return value


def log(verbose, *args):
    if verbose:
        print("\033[32m[INFO]", *args, "\033[0m", file=sys.stderr, flush=True)


def log_warning(*args):
    print("\033[33m[WARN]", *args, "\033[0m", file=sys.stderr, flush=True)


def log_error(*args):
    print("\033[31m[ERROR]", *args, "\033[0m", file=sys.stderr, flush=True)
