"""The short speed table of the README: one row per benchmark family, the
geometric mean over its workloads of other/cmlx (above 1: cmlx is faster),
with the date, the machine and its load when measured.

`python benchmarks/run.py --markdown FILE` writes it; `--readme` puts it
into README.md between the bench-summary markers."""

import datetime
import math
import os
import platform

START = "<!-- bench-summary:start (make bench-readme writes this table) -->"
END = "<!-- bench-summary:end -->"
NAMES = {"numpy": "NumPy", "torch": "PyTorch", "mlx": "MLX (CPU)"}


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def markdown(rows, fws):
    others = [f for f in fws[1:] if f.label in NAMES]
    families = {}
    for row in rows:
        families.setdefault(row["workload"].family, []).append(row)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    threads = os.environ.get("CMLX_NUM_THREADS", "all")
    versions = ", ".join(f"{NAMES.get(f.label, f.label)} {f.version}".strip() for f in others)
    lines = [
        f"Measured {datetime.date.today().isoformat()} on {_cpu_model()}, {os.cpu_count()} cores "
        f"(load {load:.1f} at the end; cmlx threads: {threads}; {versions}). Each cell is the "
        "geometric mean over the family's workloads of that framework's median time over "
        "cmlx's: above 1, cmlx is faster. `make bench` prints every workload.",
        "",
        "| family | workloads | " + " | ".join(f"vs {NAMES[f.label]}" for f in others) + " |",
        "|---|---:|" + "---:|" * len(others),
    ]
    for family in sorted(families):
        cells = []
        for f in others:
            ratios = [r["times"][f.label] / r["times"]["cmlx"] for r in families[family]
                      if r["times"].get(f.label) and r["times"].get("cmlx")]
            g = _geomean(ratios)
            cells.append(f"{g:.2f}x ({len(ratios)})" if g else "-")
        lines.append(f"| {family} | {len(families[family])} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def update_readme(path, table):
    """Replace the text between the markers of README.md; False when the
    markers are missing."""
    with open(path) as f:
        text = f.read()
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        return False
    with open(path, "w") as f:
        f.write(text[:i + len(START)] + "\n" + table + text[j:])
    return True
