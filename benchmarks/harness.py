"""Benchmark machinery: the frameworks compared, a registry of workloads,
timing by medians, and the table.

A workload is registered by a `bench_<family>.py` file with

    @workload("add f32 1e7", family="elementwise", unit="ms")
    def add_big(fw):
        a = fw.from_numpy(x); b = fw.from_numpy(y)
        return lambda: fw.run(fw.op("add")(a, b))

It receives a Framework and returns a zero-argument callable that does the
work once, to completion (lazy frameworks evaluate), or None when that
framework cannot run it.  The harness times every workload in every
framework that is installed, in one run, and prints medians and ratios.
Speed is reported, never asserted.
"""

import gc
import importlib
import os
import platform
import statistics
import time

WORKLOADS = []


class Workload:
    def __init__(self, name, family, unit, fn, inner):
        self.name, self.family, self.unit, self.fn, self.inner = name, family, unit, fn, inner


def workload(name, family, unit="ms", inner=1):
    """Register a workload.  `inner` calls make one timed sample (for
    per-op overheads: many iterations, time reported per iteration)."""
    def deco(fn):
        WORKLOADS.append(Workload(name, family, unit, fn, inner))
        return fn
    return deco


# ------------------------------------------------------------ frameworks

class Framework:
    """Uniform access to one array framework.  `lazy` ones need eval."""

    def __init__(self, name, module, lazy, note="", label=None):
        self.name, self.mod, self.lazy, self.note = name, module, lazy, note
        # The column it is reported under: its name, except for a second
        # build of cmlx (--baseline), which runs the workloads as cmlx.
        self.label = label or name
        self.version = getattr(module, "__version__", "") if module is not None else ""

    # conversion ---------------------------------------------------
    def from_numpy(self, x):
        if self.name == "numpy":
            return x
        if self.name == "torch":
            return self.mod.from_numpy(x)
        a = self.mod.array(x)
        self.mod.eval(a)
        return a

    def transpose(self, a):
        """A transposed *view* where the framework has one; returns
        (array, note).  cmlx without a native transpose copies (the note
        says so and the workload is then contiguous)."""
        if self.name in ("numpy", "torch"):
            return a.T, ""
        if hasattr(self.mod, "transpose"):
            return self.mod.transpose(a), ""
        if hasattr(a, "T"):
            return a.T, ""
        import numpy as np
        return self.from_numpy(np.ascontiguousarray(np.array(a).T)), "copied: no native transpose"

    # ops ----------------------------------------------------------
    _TORCH = {"add": "add", "multiply": "mul", "exp": "exp", "tanh": "tanh", "subtract": "sub",
              "divide": "div", "maximum": "maximum", "sqrt": "sqrt", "sin": "sin", "log": "log"}

    def op(self, name):
        if self.name == "torch":
            return getattr(self.mod, self._TORCH.get(name, name))
        return getattr(self.mod, name)

    def run(self, result):
        """Force a result to completion."""
        if self.lazy:
            self.mod.eval(result)
        return result

    def sync(self):
        if self.lazy and hasattr(self.mod, "synchronize"):
            self.mod.synchronize()


def load_baseline(pkg_dir):
    """cmlx.core of another build (its staged package folder, e.g. the
    build/pkg of an earlier commit), loaded beside this one under another
    module name, so that one run times both builds on the same workloads."""
    import glob
    import importlib.util
    found = glob.glob(os.path.join(pkg_dir, "cmlx", "core*.so"))
    if not found:
        raise FileNotFoundError(f"no cmlx/core*.so under {pkg_dir}")
    spec = importlib.util.spec_from_file_location("cmlx_baseline.core", found[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_frameworks(baseline=None):
    """cmlx first (the subject), then another cmlx build (baseline: a
    package folder) where given, then NumPy, PyTorch and MLX where
    importable."""
    fws, missing = [], []
    for name, modname, lazy in (("cmlx", "cmlx.core", True), ("numpy", "numpy", False),
                                ("torch", "torch", False), ("mlx", "mlx.core", True)):
        try:
            mod = importlib.import_module(modname)
        except Exception as e:  # not installed or not built
            missing.append(f"{name} ({type(e).__name__}: {e})")
            continue
        fw = Framework(name, mod, lazy)
        if name == "mlx":
            try:
                import mlx
                fw.version = getattr(mlx, "__version__", "") or getattr(mod, "__version__", "")
            except Exception:
                pass
        if name == "cmlx":
            try:
                import cmlx
                fw.version = getattr(cmlx, "__version__", "")
            except Exception:
                pass
        fws.append(fw)
    if baseline:
        try:
            fws.insert(1, Framework("cmlx", load_baseline(baseline), True, label="cmlx-base"))
        except Exception as e:
            missing.append(f"cmlx-base ({type(e).__name__}: {e})")
    return fws, missing


# ------------------------------------------------------------ timing

def measure(fn, repeats, inner=1, warmup=2, budget_s=None):
    """Median and min seconds per call over `repeats` samples of `inner`
    calls each (stops early past budget_s, keeping at least 3 samples)."""
    for _ in range(warmup):
        fn()
    samples = []
    start = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
        if budget_s is not None and len(samples) >= 3 and time.perf_counter() - start > budget_s:
            break
    return statistics.median(samples), min(samples), len(samples)


UNIT_SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6}


def fmt_time(sec, unit):
    v = sec * UNIT_SCALE[unit]
    if v >= 100:
        return f"{v:.0f} {unit}"
    if v >= 10:
        return f"{v:.1f} {unit}"
    return f"{v:.2f} {unit}"


def environment_lines(fws, missing):
    lines = [f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus"
             + (f", CMLX_NUM_THREADS={os.environ['CMLX_NUM_THREADS']}" if "CMLX_NUM_THREADS" in os.environ else "")]
    lines.append("frameworks: " + ", ".join(f"{f.label} {f.version}".strip() for f in fws))
    if missing:
        lines.append("not measured: " + "; ".join(missing))
    return lines


def run_all(fws, selected, repeats, budget_s, out=print):
    """Time every selected workload in every framework; returns rows."""
    rows = []
    for w in selected:
        row = {"workload": w, "times": {}, "notes": []}
        for fw in fws:
            try:
                fn = w.fn(fw)
            except Exception as e:  # a framework lacking an op: reported, not fatal
                row["times"][fw.label] = None
                row["notes"].append(f"{fw.label}: {type(e).__name__}: {str(e)[:80]}")
                continue
            if fn is None:
                row["times"][fw.label] = None
                continue
            if isinstance(fn, tuple):
                fn, note = fn
                if note:
                    row["notes"].append(f"{fw.label}: {note}")
            try:
                med, best, n = measure(fn, repeats, inner=w.inner, budget_s=budget_s)
                row["times"][fw.label] = med
            except Exception as e:
                row["times"][fw.label] = None
                row["notes"].append(f"{fw.label}: {type(e).__name__}: {str(e)[:80]}")
            del fn
            gc.collect()
            fw.sync()
        rows.append(row)
        out(format_row(row, fws), flush=True)
    return rows


def header(fws):
    cols = [f"{'workload':<40}"] + [f"{fws[0].label:>11}"] + \
        [f"{f.label + ' (x)':>20}" for f in fws[1:]]
    return "".join(cols)


def format_row(row, fws):
    w = row["workload"]
    base = row["times"].get(fws[0].label)
    cells = [f"{w.name:<40}", f"{fmt_time(base, w.unit) if base else '-':>11}"]
    for f in fws[1:]:
        t = row["times"].get(f.label)
        if t is None:
            cells.append(f"{'-':>20}")
        elif base:
            cells.append(f"{fmt_time(t, w.unit) + f' ({t / base:.2f}x)':>20}")
        else:
            cells.append(f"{fmt_time(t, w.unit):>20}")
    line = "".join(cells)
    if row["notes"]:
        line += "   [" + "; ".join(row["notes"]) + "]"
    return line
