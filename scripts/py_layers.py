#!/usr/bin/env python3
"""The layer map of python/src, from the extension's object files.

    py_layers.py [--check] OBJ...

For each file: the global symbols it defines and the files whose symbols it
uses (nm: defined T/D/R/B/C, undefined U).  A file's layer is one more than
the highest layer it uses, so util.c, which uses no other file, is layer 0
and module.c, which uses the init functions, is the top.  Prints the map;
with --check, also exits 1 when the files use each other in a cycle or a
.c file #includes another .c file (python/src is found next to the first
object's source path, or with --src)."""
import argparse
import collections
import os
import re
import subprocess
import sys


def symbols(obj, nm):
    out = subprocess.run([nm, "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] == "U":
            used.add(parts[0])
        elif parts[1] in "TDRBCVW":
            defined.add(parts[0])
    return defined, used


def file_name(obj):
    # CMake names objects python/src/<file>.c.o
    base = os.path.basename(obj)
    return base[: -len(".c.o")] if base.endswith(".c.o") else os.path.splitext(base)[0]


def find_cycle(deps):
    """One cycle as a list of files, or None (iterative DFS)."""
    state = {}
    for root in sorted(deps):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(deps[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(deps[nxt]))))
                path.append(nxt)
    return None


def layers(deps):
    memo = {}

    def layer(f):
        if f not in memo:
            memo[f] = 1 + max((layer(g) for g in deps[f]), default=-1)
        return memo[f]

    for f in deps:
        layer(f)
    return memo


def included_c_files(src):
    bad = []
    for name in sorted(os.listdir(src)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(src, name), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if re.match(r'\s*#\s*include\s*[<"][^>"]*\.c[>"]', line):
                    bad.append(f"{name}:{n}: {line.strip()}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail on a cycle or an included .c")
    ap.add_argument("--src", help="python/src, for the #include check")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("objects", nargs="+")
    a = ap.parse_args()

    defined, used = {}, {}
    for obj in a.objects:
        f = file_name(obj)
        defined[f], used[f] = symbols(obj, a.nm)
    owner = {s: f for f, syms in defined.items() for s in syms}
    deps = {f: set() for f in defined}
    for f, syms in used.items():
        deps[f] |= {owner[s] for s in syms if s in owner and owner[s] != f}

    failed = False
    cycle = find_cycle(deps)
    if cycle:
        print("cycle: " + " -> ".join(cycle))
        failed = True
    else:
        by_layer = collections.defaultdict(list)
        for f, n in layers(deps).items():
            by_layer[n].append(f)
        for n in sorted(by_layer):
            print(f"{n:2d}: " + " ".join(sorted(by_layer[n])))
    if a.src:
        for line in included_c_files(a.src):
            print("a .c file is included: " + line)
            failed = True
    return 1 if a.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
