"""The process that cmlx.launch starts for each rank, in the rank's own
session (process group), to run the rank's command and to make sure that
stopping the rank stops everything the rank started:

    python _rank_guard.py RANK FD GRACE -- command [args...]

- It runs the command as its child and exits as the child did (the same
  code, or the same signal), so the launcher sees the rank's own status.
- When the rank ends, or is stopped (SIGTERM, SIGINT or SIGHUP reach the
  guard), whatever the rank started and left behind gets SIGTERM, then
  SIGKILL after GRACE seconds.  "Whatever it started" is the process group
  and, on Linux, every descendant: the guard is a child subreaper
  (PR_SET_CHILD_SUBREAPER), so orphans come back to it rather than to init,
  and a descendant that left the group with setsid() is still found by its
  parent links in /proc.
- FD is the read end of a pipe whose only write end the launcher holds: EOF
  on it means the launcher is gone (even by SIGKILL), and the rank is
  stopped as above.  On Linux the child also gets PR_SET_PDEATHSIG, so it is
  killed if the guard itself is killed.

It is run by path with ``python -I -S`` and imports nothing from cmlx, so
it starts in a few tens of milliseconds and works for any command.
"""

import os
import signal
import subprocess
import sys
import threading
import time

LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


_libc = []


def _prctl(option, value):
    # libc is loaded before any fork: the child only calls into it
    try:
        if not _libc:
            import ctypes

            _libc.append(ctypes.CDLL(None, use_errno=True))
        return _libc[0].prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _descendants(root):
    """Every live process below root, by the parent links in /proc."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            out.append(pid)
            todo.append(pid)
    return out


class Guard:
    def __init__(self, rank, grace):
        self.rank = rank
        self.grace = grace
        self.child = None
        self.child_done = False
        self.lock = threading.Lock()
        self.stopping = False
        self.stopped = threading.Event()

    def signal_all(self, sig):
        """sig to every process the rank started, never to the guard."""
        me = os.getpid()
        if LINUX:
            targets = _descendants(me)
        else:
            # only the process group is known here; SIGTERM reaches the
            # guard's own handler, which ignores a second stop; SIGKILL
            # ends the guard too
            targets = []
            try:
                os.killpg(me, sig)
            except OSError:
                pass
        for pid in targets:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        return targets

    def reap(self):
        """Collect exited orphans (they are ours as the subreaper); returns
        the child's wait status if it was among them."""
        status = None
        while True:
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return status
            if pid == 0:
                return status
            if self.child is not None and pid == self.child.pid:
                status = st

    def stop(self):
        """SIGTERM to all, SIGKILL after the grace period to what is left."""
        with self.lock:
            if self.stopping:
                return
            self.stopping = True
        try:
            self.signal_all(signal.SIGTERM)
            deadline = time.monotonic() + self.grace
            while time.monotonic() < deadline:
                if LINUX and not _descendants(os.getpid()):
                    return
                if not LINUX and self.child_done:
                    return
                time.sleep(0.02)
            self.signal_all(signal.SIGKILL)
        finally:
            self.stopped.set()

    def watch_launcher(self, fd):
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass
        self.stop()

    def run(self, command, fd):
        if LINUX:
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            # a handler, not SIG_IGN: the child's exec resets it to default
            signal.signal(sig, self._on_signal)
        parent = os.getpid()

        def in_child():
            if LINUX and _prctl(PR_SET_PDEATHSIG, signal.SIGKILL) and os.getppid() != parent:
                os._exit(1)  # the guard died before the death signal was set

        try:
            self.child = subprocess.Popen(command, preexec_fn=in_child if LINUX else None)
        except OSError as e:
            sys.stderr.write(f"cmlx.launch: could not start rank {self.rank}: {e}\n")
            return 127
        if fd >= 0:  # started after the fork: preexec_fn and threads don't mix
            threading.Thread(target=self.watch_launcher, args=(fd,), daemon=True).start()
        return self.wait()

    def _on_signal(self, signum, frame):
        threading.Thread(target=self.stop, daemon=True).start()

    def wait(self):
        status = None
        while status is None:
            try:
                pid, st = os.waitpid(-1, 0)  # the child or an orphan
            except InterruptedError:
                continue
            except ChildProcessError:
                break
            if pid == self.child.pid:
                status = st
        self.child_done = True
        # the rank is over: what it left behind goes too (a stop under way
        # already sees to it)
        if self.stopping:
            self.stopped.wait()
        elif not LINUX or _descendants(os.getpid()):
            self.stop()
        self.reap()
        if status is None:
            return 1
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            return 128 + sig
        return os.WEXITSTATUS(status)


def main(argv):
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write("usage: _rank_guard.py RANK FD GRACE -- command [args...]\n")
        return 2
    rank, fd, grace = argv[0], int(argv[1]), float(argv[2])
    return Guard(rank, grace).run(argv[4:], fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
