"""Write a hostfile for ``cmlx.launch`` (and ``mlx.launch``), as
``mlx.distributed_config`` does for Ethernet:

    python -m cmlx.distributed_config --hosts node1,node2 --output-hostfile hosts.json

Each host is checked over ssh (BatchMode, 5 s connect timeout); its IP is
the host itself when it is an IP, 127.0.0.1 for localhost, else the first
IPv4 address ``hostname -I`` reports on it (falling back to resolving the
name here).  Thunderbolt configuration, its topology (``--dot``), automatic
setup and the JACCL backends are macOS-only in MLX and refused here with a
message.  See docs/launch.md.
"""

import argparse
import json
import socket
import subprocess
import sys
import threading

from cmlx._distributed_hosts import (
    Host,
    Hostfile,
    ip_of,
    log,
    log_error,
    log_warning,
    ssh_command,
)

MACOS_ONLY = (
    "{what} is macOS-only in MLX (Thunderbolt/RDMA between Macs); cmlx configures "
    "Ethernet: use --over ethernet"
)


def _ssh_run(host, *command, timeout=30):
    cmd = ssh_command() + ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host, *command]
    try:
        return subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.SubprocessError):
        return None


def check_ssh(hosts, verbose):
    """For each host, whether ssh reaches it (local hosts need no ssh)."""
    ok = [False] * len(hosts)

    def check(i, h):
        if h.is_local:
            ok[i] = True
            return
        log(verbose, "Checking ssh access to", h.ssh_hostname)
        r = _ssh_run(h.ssh_hostname, "echo", "success")
        ok[i] = r is not None and r.returncode == 0 and "success" in r.stdout

    threads = [threading.Thread(target=check, args=(i, h)) for i, h in enumerate(hosts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ok


def host_ip(h, verbose):
    ip = ip_of(h.ssh_hostname)
    if ip:
        return ip
    log(verbose, "Getting the ip of", h.ssh_hostname)
    r = _ssh_run(h.ssh_hostname, "hostname", "-I")
    if r is not None and r.returncode == 0:
        for candidate in r.stdout.split():
            if ":" not in candidate and not candidate.startswith("127."):
                return candidate
    try:
        infos = socket.getaddrinfo(h.ssh_hostname, None, socket.AF_INET)
        return infos[0][4][0]
    except (OSError, IndexError):
        return None


def make_parser():
    p = argparse.ArgumentParser(
        prog="cmlx.distributed_config",
        description="Configure machines for use with cmlx (and MLX) distributed",
    )
    p.add_argument("--verbose", action="store_true", help="Print debug messages in stderr")
    p.add_argument("--hosts", default="127.0.0.1", help="A comma separated list of hosts")
    p.add_argument(
        "--ignore-unreachable",
        action="store_true",
        help="Ignore hosts that are not reachable via ssh",
    )
    p.add_argument("--hostfile", help="The file containing the hosts")
    p.add_argument(
        "--over",
        choices=["thunderbolt", "ethernet"],
        default="ethernet",
        help="What type of connectivity to configure (thunderbolt is macOS-only)",
    )
    p.add_argument("--output-hostfile", help="If provided, save the hostfile to this path")
    p.add_argument(
        "--auto-setup",
        dest="auto_setup",
        action="store_true",
        default=None,
        help="Set up Thunderbolt interfaces automatically (macOS-only)",
    )
    p.add_argument("--no-auto-setup", dest="auto_setup", action="store_false")
    p.add_argument(
        "--dot", action="store_true", help="Output the Thunderbolt topology in DOT (macOS-only)"
    )
    p.add_argument(
        "--backend",
        choices=["ring", "jaccl", "jaccl-ring"],
        default=None,
        help="Which distributed backend to configure",
    )
    p.add_argument(
        "--env", action="append", default=[], help="Set environment variables for the jobs"
    )
    return p


def main(argv=None):
    parser = make_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.over == "thunderbolt":
        parser.error(MACOS_ONLY.format(what="Configuring Thunderbolt"))
    if args.dot:
        parser.error(MACOS_ONLY.format(what="The Thunderbolt topology (--dot)"))
    if args.auto_setup:
        parser.error(MACOS_ONLY.format(what="Automatic Thunderbolt setup (--auto-setup)"))
    if args.backend in ("jaccl", "jaccl-ring"):
        parser.error(MACOS_ONLY.format(what=f"The {args.backend} backend"))

    try:
        if args.hostfile is not None:
            hosts = Hostfile.from_file(args.hostfile).hosts
        else:
            hosts = Hostfile.from_list(args.hosts).hosts
    except ValueError as e:
        parser.error(str(e))

    reachable = check_ssh(hosts, args.verbose)
    unreachable = [h.ssh_hostname for h, ok in zip(hosts, reachable) if not ok]
    if unreachable:
        if not args.ignore_unreachable:
            log_error("Could not ssh to", ", ".join(unreachable))
            log_error("Set up passwordless ssh (ssh-copy-id) or pass --ignore-unreachable")
            return 1
        log_warning("Ignoring the unreachable hosts", ", ".join(unreachable))
        hosts = [h for h, ok in zip(hosts, reachable) if ok]
    if not hosts:
        log_error("No host is left")
        return 1

    out = []
    for i, h in enumerate(hosts):
        ips = list(h.ips) or [ip for ip in [host_ip(h, args.verbose)] if ip]
        if not ips:
            log_warning("Could not extract ip for", h.ssh_hostname)
        out.append(Host(i, h.ssh_hostname, ips))
    hostfile = Hostfile(out, args.backend or "", list(args.env))

    text = json.dumps(hostfile.to_json(), indent=4)
    if args.output_hostfile:
        with open(args.output_hostfile, "w") as f:
            f.write(text + "\n")
        log(args.verbose, "Wrote", args.output_hostfile)
    else:
        print("Hostfile")
        print("========")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
