#!/usr/bin/env python3
"""Generate docs/api-status.md: every name in scripts/api/mlx-0.32-names.md marked "done" or
"not yet" for cmlx.

    PYTHONPATH=build/pkg .venv/bin/python scripts/gen_api_status.py [--api PATH] [--out PATH]

With cmlx importable, a name is "done" when it exists and a small call
(a recipe below, or a generic probe for ops) works; a name that exists but
raises NotImplementedError, or whose recipe fails, is "not yet" (the note
says why).  "n/a" marks what MLX itself only has on Apple platforms.
Without cmlx importable the script falls back to a static scan of the
extension's sources (python/src/*.c: the op tables and method lists): names
found there are "done (static)", unverified.
"""

import argparse
import glob
import importlib
import importlib.util
import os
import re
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STOP = {"and", "the", "categories", "mirroring", "launcher", "backends", "schedulers",
        "methods", "Python", "operators", "Layers", "Functions", "Losses", "Init"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ------------------------------------------------------------ parsing API.md

class Entry:
    """One name of API.md: where it is looked up and how it is checked."""

    def __init__(self, name, kind, where, arg=None):
        self.name = name      # as shown in the page
        self.kind = kind      # attr | method | prop | operator | format | backend | module | na
        self.where = where    # dotted module path ("core", "core.linalg", "nn", ...)
        self.arg = arg        # extra data for the check
        self.status = "not yet"
        self.note = ""


def sections(text):
    out, cur, buf = [], None, []
    for line in text.splitlines():
        if line.startswith("## "):
            if cur:
                out.append((cur, " ".join(buf)))
            cur, buf = line[3:].strip(), []
        elif cur:
            buf.append(line.strip())
    if cur:
        out.append((cur, " ".join(buf)))
    return out


def words(text):
    return [w for w in IDENT.findall(text) if w not in STOP]


def parse_array_section(text):
    """'the array type': constructor, properties, at[...], methods,
    operator groups, NumPy conversion, DLPack."""
    es = []
    head, _, rest = text.partition("the methods")
    methods_txt, _, ops_txt = rest.partition("Python operators")
    at = re.search(r"at\[\.\.\.\]\s*\(([^)]*)\)", head)
    if at:
        for m in words(at.group(1)):
            es.append(Entry(f"at[...].{m}", "at", "core", m))
        head = head.replace(at.group(0), "at[...]")
    es.append(Entry("array(...)", "attr", "core", "array"))
    head = head.replace("array(...)", "")
    for w in words(head):
        es.append(Entry("at[...]" if w == "at" else w, "prop", "core", w))
    for w in words(methods_txt):
        es.append(Entry(f"array.{w}()", "method", "core", w))
    groups = re.search(r"\(([^)]*)\)", ops_txt)
    if groups:
        for g in [g.strip() for g in groups.group(1).split(",")]:
            for part in [p.strip() for p in g.split(" and ")]:
                if part:
                    es.append(Entry(f"operators: {part}", "operator", "core", part))
    conv = re.search(r"NumPy conversion\s*\(([^)]*)\)", ops_txt)
    if conv:
        for c in conv.group(1).split(","):
            c = c.strip().strip("`")
            es.append(Entry(f"NumPy: {c}", "numpy", "core", c))
    if "DLPack" in ops_txt:
        es.append(Entry("DLPack (__dlpack__)", "numpy", "core", "dlpack"))
    return es


def parse(text):
    """API.md -> [(section title, [Entry])]."""
    out = []
    for title, body in sections(text):
        t = title.lower()
        es = []
        if "array type" in t:
            es = parse_array_section(body)
        elif t.startswith("cmlx.core"):
            es = [Entry(w, "attr", "core", w) for w in words(body)]
        elif t in ("transforms",):
            es = [Entry(w, "attr", "core", w) for w in words(body)]
        elif t in ("random", "linalg", "fft", "metal", "cuda"):
            es = [Entry(w, "attr", f"core.{t}", w) for w in words(body)]
        elif t == "fast":
            na = re.findall(r"\((\w+):\s*Apple only\)", body)
            body = re.sub(r"\([^)]*\)", "", body)
            es = [Entry(w, "attr", "core.fast", w) for w in words(body)]
            es += [Entry(w, "na", "core.fast", "Apple only") for w in na]
        elif t.startswith("export"):
            fm = re.search(r"\(formats:([^)]*)\)", body)
            body = re.sub(r"\([^)]*\)", "", body)
            es = [Entry(w, "attr", "core", w) for w in words(body)]
            if fm:
                es += [Entry(f"format {f}", "format", "core", f) for f in fm.group(1).split()]
        elif t == "distributed":
            main, _, rest = body.partition("backends")
            back, _, launch = rest.partition("launcher")
            es = [Entry(w, "attr", "core.distributed", w) for w in words(main)]
            na = re.findall(r"\((\w+):\s*macOS only\)", back)
            back = re.sub(r"\([^)]*\)", "", back)
            es += [Entry(f"backend {w}", "backend", "core.distributed", w) for w in words(back)]
            es += [Entry(f"backend {w}", "na", "core.distributed", "macOS only") for w in na]
            mods = re.findall(r"`(cmlx\.[\w.]+)`", launch)
            es += [Entry(m, "module", m, m) for m in mods]
        elif t == "cmlx.nn":
            m = re.match(r"\s*Module\s*\(([^)]*)\)(.*)", body)
            if m:
                es.append(Entry("Module", "attr", "nn", "Module"))
                es += [Entry(f"Module.{w}", "member", "nn", ("Module", w)) for w in words(m.group(1))]
                body = m.group(2)
            parts = re.split(r"(Layers:|Functions:|Losses:|Init:)", body)
            where = "nn"
            for p in parts:
                if p == "Losses:":
                    where = "nn.losses"
                elif p == "Init:":
                    where = "nn.init"
                elif p in ("Layers:", "Functions:"):
                    where = "nn"
                else:
                    es += [Entry(w if where == "nn" else f"{where[3:]}.{w}", "attr", where, w)
                           for w in words(p)]
        elif t == "cmlx.optimizers":
            m = re.match(r"\s*Optimizer\s*\(([^)]*)\)(.*)", body)
            if m:
                es.append(Entry("Optimizer", "attr", "optimizers", "Optimizer"))
                es += [Entry(f"Optimizer.{w}", "member", "optimizers", ("Optimizer", w))
                       for w in words(m.group(1))]
                body = m.group(2)
            es += [Entry(w, "attr", "optimizers", w) for w in words(body)]
        elif t == "cmlx.utils":
            es = [Entry(w, "attr", "utils", w) for w in words(body)]
        else:
            es = [Entry(w, "attr", "core", w) for w in words(body)]
        out.append((title, es))
    return out


# ------------------------------------------------------------ live checks

def recipes(mx, np):
    """name -> zero-argument callable exercising cmlx.core.<name> once."""
    a = lambda: mx.array([[0.5, 0.25], [0.75, 0.125]])  # noqa: E731
    i = lambda: mx.array([[1, 2], [3, 4]], mx.int32)  # noqa: E731
    ev = mx.eval
    r = {}
    unary = ("abs negative positive sign square sqrt rsqrt reciprocal exp expm1 log log2 log10 log1p "
             "sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid erf "
             "erfinv floor ceil round isnan isinf isfinite isposinf isneginf nan_to_num logical_not "
             "real imag conj conjugate degrees radians stop_gradient trunc").split()
    for n in unary:
        r[n] = (lambda n=n: ev(getattr(mx, n)(a() + (1.0 if n == "arccosh" else 0.0))))
    r["bitwise_invert"] = lambda: ev(mx.bitwise_invert(i()))
    binary = ("add subtract multiply divide floor_divide remainder power maximum minimum arctan2 "
              "logaddexp equal not_equal less less_equal greater greater_equal logical_and "
              "logical_or logical_xor").split()
    for n in binary:
        r[n] = (lambda n=n: ev(getattr(mx, n)(a(), a())))
    for n in "bitwise_and bitwise_or bitwise_xor left_shift right_shift".split():
        r[n] = (lambda n=n: ev(getattr(mx, n)(i(), i())))
    r["divmod"] = lambda: ev(mx.divmod(a(), a() + 1))
    r["where"] = lambda: ev(mx.where(a() > 0.3, a(), 0.0))
    r["clip"] = lambda: ev(mx.clip(a(), 0.2, 0.6))
    r["astype"] = lambda: ev(mx.astype(a(), mx.float16))
    r["array"] = lambda: ev(mx.array([1, 2, 3]))
    r["asarray"] = lambda: ev(mx.asarray([1, 2, 3]))
    for n in ("zeros", "ones"):
        r[n] = (lambda n=n: ev(getattr(mx, n)((2, 3), mx.int8)))
    r["full"] = lambda: ev(mx.full((2, 3), 1.5))
    for n in ("zeros_like", "ones_like"):
        r[n] = (lambda n=n: ev(getattr(mx, n)(a())))
    r["full_like"] = lambda: ev(mx.full_like(a(), 3))
    r["arange"] = lambda: ev(mx.arange(0, 10, 2))
    r["linspace"] = lambda: ev(mx.linspace(0, 1, 5))
    r["eye"] = lambda: ev(mx.eye(3, 4, 1))
    r["identity"] = lambda: ev(mx.identity(3))
    r["tri"] = lambda: ev(mx.tri(3, 3, 0))
    r["result_type"] = lambda: mx.result_type(mx.int8, mx.float16)
    r["can_cast"] = lambda: mx.can_cast(mx.int8, mx.int16)
    r["issubdtype"] = lambda: mx.issubdtype(mx.int8, mx.integer)
    r["isdtype"] = lambda: mx.isdtype(mx.int8, "integral")
    r["finfo"] = lambda: mx.finfo(mx.float16).max
    r["iinfo"] = lambda: mx.iinfo(mx.int8).max
    r["eval"] = lambda: ev([a(), {"k": a()}])
    r["async_eval"] = lambda: (mx.async_eval(a() + 1), mx.synchronize())
    r["default_device"] = lambda: mx.default_device()
    r["set_default_device"] = lambda: mx.set_default_device(mx.cpu)
    r["default_stream"] = lambda: mx.default_stream(mx.cpu)
    r["new_stream"] = lambda: mx.new_stream(mx.cpu)
    r["set_default_stream"] = lambda: mx.set_default_stream(mx.default_stream(mx.cpu))
    r["stream"] = lambda: _with_stream(mx)
    r["synchronize"] = lambda: mx.synchronize()
    r["is_available"] = lambda: mx.is_available(mx.cpu)
    r["device_info"] = lambda: mx.device_info()
    r["device_count"] = lambda: mx.device_count(mx.cpu)
    r["get_active_memory"] = mx.get_active_memory if hasattr(mx, "get_active_memory") else None
    r["get_peak_memory"] = mx.get_peak_memory if hasattr(mx, "get_peak_memory") else None
    r["get_cache_memory"] = mx.get_cache_memory if hasattr(mx, "get_cache_memory") else None
    r["reset_peak_memory"] = mx.reset_peak_memory if hasattr(mx, "reset_peak_memory") else None
    r["clear_cache"] = mx.clear_cache if hasattr(mx, "clear_cache") else None
    r["set_memory_limit"] = lambda: mx.set_memory_limit(mx.set_memory_limit(1 << 30))
    r["set_cache_limit"] = lambda: mx.set_cache_limit(mx.set_cache_limit(1 << 30))
    r["set_wired_limit"] = lambda: mx.set_wired_limit(mx.set_wired_limit(0))
    return {k: v for k, v in r.items() if v is not None}


def _with_stream(mx):
    with mx.stream(mx.new_stream(mx.cpu)):
        mx.eval(mx.ones((2,)) + 1)


# Never probed with made-up arguments: files, global state, communication.
NO_PROBE = re.compile(r"save|load|export|import|^set_|seed|clear|launch|init|send|recv|^all_|"
                      r"scatter|gather$|synchronize|depends|dlpack|compile|checkpoint")

METHOD_ARGS = {"moveaxis": (0, 1), "swapaxes": (0, 1), "reshape": ((4,),), "split": (2,),
               "view": ("int32",), "astype": ("float16",)}

OPERATOR_DUNDERS = {
    "arithmetic": ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
                   "__pow__", "__neg__", "__pos__", "__abs__"],
    "reflected": ["__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
                  "__rpow__"],
    "in-place": ["__iadd__", "__isub__", "__imul__", "__itruediv__"],
    "comparison": ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"],
    "bitwise": ["__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__invert__"],
    "matmul": ["__matmul__"],
    "indexing": ["__getitem__"],
    "index assignment": ["__setitem__"],
    "len": ["__len__"],
    "iter": ["__iter__"],
    "bool": ["__bool__"],
}


def _smoke_operator(mx, group):
    a = mx.array([[1, 2], [3, 4]], mx.int32)
    f = mx.array([[1.5, 2.5], [3.5, 4.5]])
    checks = {
        "arithmetic": lambda: mx.eval(a + a, a - a, a * a, f / f, a // a, a % a, a ** 2, -a, +a, abs(a)),
        "reflected": lambda: mx.eval(1 + a, 1 - a, 2 * a, 1 / f, 3 // a, 3 % a, 2 ** a),
        "in-place": lambda: _inplace(mx),
        "comparison": lambda: mx.eval(a == a, a != 1, a < 2, a <= 2, a > 2, a >= 2),
        "bitwise": lambda: mx.eval(a & a, a | 1, a ^ a, a << 1, a >> 1, ~a),
        "matmul": lambda: mx.eval(f @ f),
        "indexing": lambda: mx.eval(a[0], a[:, 1]),
        "index assignment": lambda: _setitem(mx),
        "len": lambda: len(a),
        "iter": lambda: [x for x in a],
        "bool": lambda: bool(mx.array(True)),
    }
    return checks[group]()


def _inplace(mx):
    b = mx.array([1.0, 2.0])
    b += 1
    b -= 1
    b *= 2
    b /= 2
    mx.eval(b)


def _setitem(mx):
    b = mx.array([1, 2, 3])
    b[0] = 5
    mx.eval(b)


def submodule(name):
    try:
        return importlib.import_module("cmlx." + name)
    except Exception:
        return None


def check_live(entries, mx, np):
    rec = recipes(mx, np)
    mods = {}

    def mod(where):
        if where not in mods:
            mods[where] = submodule(where)
        return mods[where]

    probe = mx.array([[0.5, 0.25], [0.75, 0.125]])
    for e in entries:
        try:
            _check(e, mx, np, rec, mod, probe)
        except NotImplementedError as ex:
            e.status, e.note = "not yet", f"stub: {str(ex)[:60]}"
        except Exception as ex:
            e.status = "not yet"
            e.note = f"present but failing: {type(ex).__name__}: {str(ex)[:60]}"


def _check(e, mx, np, rec, mod, probe):
    if e.kind == "na":
        e.status, e.note = "n/a", e.arg
        return
    if e.kind == "module":
        try:
            found = importlib.util.find_spec(e.arg) is not None
        except (ImportError, ValueError):
            found = False
        e.status = "done" if found else "not yet"
        return
    if e.kind == "prop":
        a = mx.array([[1.0, 2.0], [3.0, 4.0]])
        if not hasattr(a, e.arg):
            return
        v = getattr(a, e.arg)
        if callable(v) and e.arg in ("item", "tolist"):
            v = mx.array(1.5).item() if e.arg == "item" else v()
        e.status = "done"
        return
    if e.kind == "method":
        a = mx.array([[1.0, 2.0], [3.0, 4.0]])
        if not hasattr(a, e.arg):
            return
        args = tuple(getattr(mx, x) if isinstance(x, str) else x for x in METHOD_ARGS.get(e.arg, ()))
        r = getattr(a, e.arg)(*args)
        mx.eval(r)
        e.status = "done"
        return
    if e.kind == "at":
        a = mx.array([1.0, 2.0, 3.0])
        mx.eval(getattr(a.at[mx.array([0, 0])], e.arg)(1.0))
        e.status = "done"
        return
    if e.kind == "operator":
        t = type(mx.array(1))
        if not all(hasattr(t, d) for d in OPERATOR_DUNDERS.get(e.arg, ["?"])):
            return
        _smoke_operator(mx, e.arg)
        e.status = "done"
        return
    if e.kind == "numpy":
        a = mx.array([[1.0, 2.0], [3.0, 4.0]])
        if e.arg == "buffer protocol":
            assert memoryview(a).tolist() == [[1.0, 2.0], [3.0, 4.0]]
        elif e.arg == "__array__":
            assert hasattr(a, "__array__") and np.asarray(a).sum() == 10
        elif e.arg == "dlpack":
            a.__dlpack__()
            if hasattr(np, "from_dlpack"):
                assert np.from_dlpack(a).sum() == 10
        e.status = "done"
        return
    if e.kind == "format":
        _check_format(e, mx)
        return
    if e.kind == "backend":
        dist = mod("core.distributed") or getattr(mx, "distributed", None)
        if dist is None or not hasattr(dist, "is_available"):
            return
        dist.is_available(e.arg)  # the backend name is known (available or not here)
        e.status = "done"
        return
    if e.kind == "member":
        m = mod(e.where)
        cls, member = e.arg
        if m is not None and hasattr(getattr(m, cls, None), member):
            e.status = "done"
        return
    # plain attribute of a module
    m = mx if e.where == "core" else (getattr(mx, e.where.split(".", 1)[1], None)
                                      if e.where.startswith("core.") else mod(e.where))
    if e.where.startswith("core.") and m is None:
        m = mod(e.where)
    if m is None or not hasattr(m, e.arg):
        return
    obj = getattr(m, e.arg)
    if e.where == "core" and e.arg in rec:
        rec[e.arg]()
        e.status = "done"
        return
    if e.where in ("core",) and e.arg in ("cpu", "gpu"):
        e.status = "done"
        return
    if callable(obj) and not isinstance(obj, type) and e.where.startswith("core") \
            and not NO_PROBE.search(e.arg):
        # Generic probe: one or two small float arrays.  Success or an
        # argument error means implemented; NotImplementedError means a stub.
        for args in ((probe,), (probe, probe)):
            try:
                mx.eval(obj(*args))
                e.status = "done"
                return
            except NotImplementedError:
                raise
            except Exception:
                continue
        e.status, e.note = "done", "present (no automatic smoke call)"
        return
    e.status = "done"
    if not (e.where == "core" and isinstance(obj, type)):
        e.note = "present (no automatic smoke call)"


def _check_format(e, mx):
    ext = e.arg
    needed = {".npy": "save", ".npz": "savez", ".safetensors": "save_safetensors",
              ".gguf": "save_gguf"}.get(ext)
    if needed is None or not hasattr(mx, needed) or not hasattr(mx, "load"):
        return
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x" + ext)
        if ext == ".npy":
            mx.save(path, a)
            b = mx.load(path)
        elif ext == ".npz":
            mx.savez(path, x=a)
            b = mx.load(path)["x"]
        elif ext == ".safetensors":
            mx.save_safetensors(path, {"x": a})
            b = mx.load(path)["x"]
        elif ext == ".gguf":
            mx.save_gguf(path, {"x": a}, {})
            b = mx.load(path)["x"]
        else:
            return
        assert b.tolist() == a.tolist()
    e.status = "done"


# ------------------------------------------------------------ static fallback

def static_names():
    """Names the extension's sources mention: string literals (method tables,
    op-table rows, module attributes) and the names in table macros such as
    UNARY(exp).  Over-inclusive on purpose: this is only a fallback."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, "python", "src", "*.c")):
        src = open(path, encoding="utf-8", errors="replace").read()
        names.update(re.findall(r'"([A-Za-z_]\w*)"', src))
        names.update(re.findall(r"\b[A-Z][A-Z0-9_]*\(\s*([a-z_]\w*)\s*[,)]", src))
    return names


def check_static(entries):
    names = static_names()
    for e in entries:
        if e.kind == "na":
            e.status, e.note = "n/a", e.arg
        elif e.where == "core" and isinstance(e.arg, str) and e.arg in names:
            e.status, e.note = "done", "static scan (cmlx not importable): unverified"


# ------------------------------------------------------------ output

def kernel_table(path):
    """The primitives a backend's kernel table (src/backend/<dev>/kernels.c)
    registers: the descriptor names of its {&cm_prim_<x>, fn} rows."""
    src = open(path, encoding="utf-8").read()
    return re.findall(r"\{&cm_prim_(\w+),", src)


def device_section():
    """Which primitives have a kernel on each device, read from the tables."""
    cpu = kernel_table(os.path.join(ROOT, "src", "backend", "cpu", "kernels.c"))
    gpu = set(kernel_table(os.path.join(ROOT, "src", "backend", "cuda", "kernels.c")))
    lines = ["## Primitives on the GPU (the CUDA backend)", "",
             "From the kernel tables `src/backend/cpu/kernels.c` and `src/backend/cuda/kernels.c`. "
             "A primitive without a GPU kernel is MLX's RuntimeError \"<Name> has no GPU "
             "implementation.\" on a GPU stream; the CPU runs every one of them. The GPU kernels "
             "compile and their host logic is tested without a GPU; what has been run on one is "
             "in the CUDA issue's notes.", "",
             f"{len(gpu)} of {len(cpu)} primitives with a CPU kernel have a GPU kernel.", "",
             "| primitive | GPU |", "|---|---|"]
    for name in cpu:
        lines.append(f"| `{name}` | {'yes' if name in gpu else 'not yet'} |")
    lines.append("")
    return lines


def render(parsed, mode, version, signatures):
    lines = ["# cmlx API status", "",
             "Generated by `scripts/gen_api_status.py` from `scripts/api/mlx-0.32-names.md` (MLX 0.32's public "
             "API). Regenerate after changes:", "",
             "    PYTHONPATH=build/pkg .venv/bin/python scripts/gen_api_status.py", ""]
    if mode == "live":
        lines.append(f"Checked live against cmlx {version}: **done** means the name exists and a "
                     "small call works; **not yet** means it is missing, a stub, or failing "
                     "(the note says which); **n/a**: Apple-only in MLX too.")
    else:
        lines.append("cmlx was not importable when this page was generated: names found in the "
                     "extension's sources are marked done without being exercised.")
    if signatures:
        lines.append(f"The extension's signature table (`cmlx.core._signatures`) lists "
                     f"{signatures} bound functions.")
    lines.append("")
    total = {"done": 0, "not yet": 0, "n/a": 0}
    summary = []
    for title, es in parsed:
        c = {"done": 0, "not yet": 0, "n/a": 0}
        for e in es:
            c[e.status] += 1
            total[e.status] += 1
        summary.append(f"| {title} | {c['done']} | {c['not yet']} | {c['n/a']} |")
    lines += ["## Summary", "", "| section | done | not yet | n/a |", "|---|---:|---:|---:|"]
    lines += summary
    lines.append(f"| **all** | **{total['done']}** | **{total['not yet']}** | **{total['n/a']}** |")
    lines.append("")
    for title, es in parsed:
        lines += [f"## {title}", "", "| name | status | note |", "|---|---|---|"]
        for e in es:
            lines.append(f"| `{e.name}` | {e.status} | {e.note.replace('|', '/')} |")
        lines.append("")
    lines += device_section()
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--api", default=os.path.join(ROOT, "scripts", "api", "mlx-0.32-names.md"),
                   help="the list of MLX names (default: scripts/api/mlx-0.32-names.md)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "api-status.md"))
    p.add_argument("--static", action="store_true", help="do not import cmlx; scan the sources")
    args = p.parse_args(argv)

    api = args.api
    if not os.path.exists(api):
        print(f"gen_api_status: {api} not found (use --api)", file=sys.stderr)
        return 2
    parsed = parse(open(api, encoding="utf-8").read())
    entries = [e for _, es in parsed for e in es]

    mode, version, nsig = "static", "", 0
    if not args.static:
        try:
            import numpy as np
            mx = importlib.import_module("cmlx.core")
            import cmlx
            version = getattr(cmlx, "__version__", "")
            nsig = len(getattr(mx, "_signatures", []) or [])
            cwd = os.getcwd()
            with tempfile.TemporaryDirectory() as scratch:
                os.chdir(scratch)  # anything a probe writes lands here
                try:
                    check_live(entries, mx, np)
                finally:
                    os.chdir(cwd)
            mode = "live"
        except ImportError as ex:
            print(f"gen_api_status: cmlx not importable ({ex}); using the static scan",
                  file=sys.stderr)
        except Exception:
            traceback.print_exc()
            return 1
    if mode == "static":
        check_static(entries)

    text = render(parsed, mode, version, nsig)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    done = sum(e.status == "done" for e in entries)
    print(f"gen_api_status: {len(entries)} names, {done} done ({mode}); wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
