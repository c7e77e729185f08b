#!/usr/bin/env python3
"""Compare the public Python surface of the installed MLX wheel with cmlx's.

    PYTHONPATH=build/pkg .venv/bin/python scripts/api_diff.py [--check ALLOWLIST] [--all]

For each module pair (mlx.core / cmlx.core, its submodules, mlx.nn and its
layer modules, init, losses, utils, mlx.optimizers, mlx.utils) and each
public class both have (its methods and properties), it prints

    missing   mlx.core.foo                   a name MLX has and cmlx lacks
    signature mlx.core.bar  <details>        parameter names, kinds or defaults differ

Signatures come from inspect.signature where it works (Python functions
and classes), else from the first line of __doc__ (nanobind and cmlx's C
functions print "name(a: array, /, b: int = 0, *, stream: ...) -> ...").
Annotations are ignored: only names, kinds (positional-only, keyword-only,
*args, **kwargs) and defaults are compared.

With --check ALLOWLIST (one item per line, "missing mlx.core.foo" or
"signature mlx.core.bar"; "#" starts a comment) it exits 1 when an item
is not in the list: a new gap fails, known gaps do not.  Allowlisted items
that no longer differ are reported as fixed (remove them).  Without MLX
installed it says so and exits 0, so `make test` can run it anywhere.
"""

import argparse
import importlib
import inspect
import os
import re
import sys

CORE_SUBMODULES = ["linalg", "fft", "random", "fast", "distributed", "metal", "cuda"]
NN_LAYERS = ["activations", "base", "containers", "convolution", "convolution_transpose",
             "distributed", "dropout", "embedding", "linear", "normalization", "pooling",
             "positional_encoding", "quantized", "recurrent", "transformer", "upsample"]
MODULES = (["core"] + ["core." + m for m in CORE_SUBMODULES] + ["nn", "nn.init", "nn.losses",
           "nn.utils", "nn.layers"] + ["nn.layers." + m for m in NN_LAYERS]
           + ["optimizers", "optimizers.optimizers", "optimizers.schedulers", "utils"])


# ------------------------------------------------------------------ signatures

def split_top(s):
    """Split s at commas outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def norm_default(d):
    d = d.strip().replace('"', "'")
    d = re.sub(r" at 0x[0-9a-f]+", "", d)  # object reprs: no addresses
    return re.sub(r"\b(c?mlx\.core\.)", "", d)


def default_repr(v):
    """A default as text; a function by its name (MLX's nn.relu is a
    compiled function object, cmlx's a plain function)."""
    if callable(v) and not inspect.isclass(v) and getattr(v, "__name__", None):
        return "<function " + v.__name__ + ">"
    return norm_default(repr(v))


def top_level_eq(item):
    """The index of the "=" of "name: T = default" (not one inside T)."""
    depth, quote = 0, None
    for i, ch in enumerate(item):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth == 0 and item[i + 1:i + 2] != "=" and item[i - 1:i] not in "<>!=":
            return i
    return -1


def params_from_text(text):
    """[(name, kind, default)] from "a: T, /, b: T = 1, *, c = None"."""
    params, kind = [], "pos_or_kw"
    items = split_top(text)
    if "/" in items:  # everything before "/" is positional-only
        kind = "pos_only"
    for item in items:
        if item == "/":
            kind = "pos_or_kw"
            continue
        if item == "*":
            kind = "kw_only"
            continue
        if item.startswith("**"):
            params.append((item[2:].split(":")[0].strip(), "var_kw", None))
            continue
        if item.startswith("*"):
            params.append((item[1:].split(":")[0].strip(), "var_pos", None))
            kind = "kw_only"
            continue
        default = None
        head = item
        eq = top_level_eq(item)
        if eq >= 0:
            head, default = item[:eq], norm_default(item[eq + 1:])
        params.append((head.split(":")[0].strip(), kind, default))
    return params


KINDS = {inspect.Parameter.POSITIONAL_ONLY: "pos_only",
         inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos_or_kw",
         inspect.Parameter.KEYWORD_ONLY: "kw_only",
         inspect.Parameter.VAR_POSITIONAL: "var_pos",
         inspect.Parameter.VAR_KEYWORD: "var_kw"}


def doc_signature(obj, name):
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return None
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    m = re.match(r"\s*(?:\w+\.)*" + re.escape(name) + r"\((.*)\)\s*(->.*)?$", first)
    if not m:
        return None
    return params_from_text(m.group(1))


def signature(obj, name):
    """The parameter list of obj, or None when it cannot be read."""
    if isinstance(obj, property):
        return None
    if inspect.isclass(obj) and not is_python_class(obj):
        # a C type: its __init__'s docstring (nanobind's, or cmlx's), else
        # nothing (inspect only sees object's (*args, **kwargs))
        return doc_signature(getattr(obj, "__init__", None), "__init__")
    if name == "__init__" and not inspect.isfunction(obj):
        return doc_signature(obj, name)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return doc_signature(obj, name)
    out = []
    for p in sig.parameters.values():
        d = None if p.default is inspect.Parameter.empty else default_repr(p.default)
        out.append((p.name, KINDS[p.kind], d))
    if drop_self(out) == [("args", "var_pos", None), ("kwargs", "var_kw", None)]:
        # a Python function that parses its own arguments: the parameters
        # its docstring's first line shows (nanobind's convention), if any
        if inspect.isclass(obj):
            return doc_signature(getattr(obj, "__init__", None), "__init__") or out
        return doc_signature(obj, name) or out
    return out


def is_python_class(cls):
    return any("__dict__" in vars(c) and not c.__module__ == "builtins" and
               hasattr(sys.modules.get(c.__module__), "__file__") and
               str(getattr(sys.modules.get(c.__module__), "__file__", "")).endswith(".py")
               for c in cls.__mro__[:1])


def drop_self(params):
    """Without the instance parameter (MLX's activations call it "_")."""
    return params[1:] if params and params[0][0] in ("self", "cls", "_") else params


def describe(params):
    parts, kind = [], None
    for n, k, d in params:
        if k == "kw_only" and kind not in ("kw_only", "var_pos"):
            parts.append("*")
        if kind == "pos_only" and k != "pos_only":
            parts.append("/")
        prefix = {"var_pos": "*", "var_kw": "**"}.get(k, "")
        parts.append(prefix + n + ("" if d is None else "=" + d))
        kind = k
    if kind == "pos_only":
        parts.append("/")
    return "(" + ", ".join(parts) + ")"


# ------------------------------------------------------------------ names

def public_names(mod, pkg):
    """Public names of a module: what it defines within its part of the
    package (mlx.core, mlx.nn, mlx.optimizers, mlx.utils), not what it
    imports from the standard library, NumPy or another part (mlx.utils'
    tree_flatten seen from mlx.optimizers); submodules are compared on
    their own."""
    part = ".".join(mod.__name__.split(".")[:2])
    names = getattr(mod, "__all__", None)
    names = list(names) if names is not None else [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in names:
        try:
            v = getattr(mod, n)
        except AttributeError:
            continue
        if inspect.ismodule(v):
            continue
        owner = getattr(v, "__module__", None)
        if isinstance(owner, str) and (callable(v) or inspect.isclass(v)) and \
                not (owner == part or owner.startswith(part + ".")):
            continue
        out.append(n)
    return sorted(set(out))


def class_members(cls):
    return sorted(n for n in dir(cls) if not n.startswith("_") or n in ("__init__", "__call__"))


def compare(theirs, ours, prefix, report, seen):
    """Names of module/class `theirs` missing from `ours`, and signature
    differences; recurses into classes both have."""
    is_class = inspect.isclass(theirs)
    names = class_members(theirs) if is_class else public_names(theirs, "mlx")
    for n in names:
        key = f"{prefix}.{n}"
        if not hasattr(ours, n):
            if not (is_class and n in ("__init__", "__call__")):
                report.append(("missing", key, ""))
            continue
        a, b = getattr(theirs, n), getattr(ours, n)
        if inspect.isclass(a) and inspect.isclass(b):
            if id(a) in seen:
                continue
            seen.add(id(a))
            compare(a, b, key, report, seen)
        if callable(a) and callable(b) and not (is_class and n == "__call__" and
                                                  not inspect.isfunction(a)):
            sa, sb = signature(a, n), signature(b, n)
            if sa is None or sb is None:
                continue
            if is_class or inspect.isclass(a):
                sa, sb = drop_self(sa), drop_self(sb)
            if sa != sb:
                report.append(("signature", key, f"mlx {describe(sa)} vs cmlx {describe(sb)}"))


def run():
    try:
        importlib.import_module("mlx.core")
    except Exception as e:  # not installed, or a wheel for another platform
        print(f"api_diff: real MLX is not importable ({e}); skipping")
        return None
    report, seen = [], set()
    for m in MODULES:
        try:
            theirs = importlib.import_module("mlx." + m)
        except ImportError:
            continue
        try:
            ours = importlib.import_module("cmlx." + m)
        except ImportError:
            report.append(("missing", "mlx." + m, "(module)"))
            continue
        compare(theirs, ours, "mlx." + m, report, seen)
    return report


def read_allowlist(path):
    items = set()
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                items.add(" ".join(line.split()))
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", metavar="ALLOWLIST",
                    help="exit 1 when a gap is not listed in ALLOWLIST")
    args = ap.parse_args()
    report = run()
    if report is None:
        return 0
    allowed = read_allowlist(args.check) if args.check else set()
    new = []
    for kind, key, detail in report:
        item = f"{kind} {key}"
        mark = "" if not args.check else ("  " if item in allowed else "+ ")
        print(f"{mark}{kind:9} {key}" + (f"  {detail}" if detail else ""))
        if args.check and item not in allowed:
            new.append(item)
    counts = {k: sum(1 for r in report if r[0] == k) for k in ("missing", "signature")}
    print(f"api_diff: {counts['missing']} missing, {counts['signature']} signature differences")
    if args.check:
        found = {f"{k} {key}" for k, key, _ in report}
        for item in sorted(allowed - found):
            print(f"api_diff: fixed, remove from {os.path.basename(args.check)}: {item}")
        if new:
            print(f"api_diff: {len(new)} gap(s) not in {args.check} (marked +)")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
