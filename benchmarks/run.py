#!/usr/bin/env python3
"""Run cmlx's benchmarks against NumPy, PyTorch and MLX (each where
importable) and print one table of medians with ratios other/cmlx (above 1:
cmlx is faster).  `make bench` runs this with PYTHONPATH at the built
package.

Every `bench_<family>.py` beside this file registers workloads (see
harness.py); they are discovered by name, so a new family is one new file.

    python benchmarks/run.py                 # everything (about 1-2 minutes)
    python benchmarks/run.py -k overhead     # workloads whose name or family matches
    python benchmarks/run.py --repeats 5 --list
    python benchmarks/run.py --baseline ../old/build/pkg --only cmlx-base -k overhead
                                             # this build against an earlier one
"""

import argparse
import importlib
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402


def discover():
    for fname in sorted(os.listdir(HERE)):
        if fname.startswith("bench_") and fname.endswith(".py"):
            importlib.import_module(fname[:-3])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-k", dest="filter", default="", help="substring of workload name or family")
    p.add_argument("--repeats", type=int, default=9, help="timed samples per measurement (median)")
    p.add_argument("--budget", type=float, default=3.0,
                   help="seconds per measurement after which sampling stops (at least 3 samples)")
    p.add_argument("--list", action="store_true", help="list workloads and exit")
    p.add_argument("--baseline", metavar="PKG_DIR", default=None,
                   help="also time another cmlx build (its staged package folder, e.g. an earlier "
                        "commit's build/pkg) as cmlx-base: base/cmlx ratios in the same run")
    p.add_argument("--only", default="", help="comma-separated frameworks to time (default: all)")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="also write the per-family summary table (benchmarks/summary.py) to FILE")
    p.add_argument("--readme", action="store_true",
                   help="put that table into README.md between its bench-summary markers")
    args = p.parse_args(argv)

    discover()
    selected = [w for w in harness.WORKLOADS
                if args.filter in w.name or args.filter == w.family]
    if args.list:
        for w in selected:
            print(f"{w.family:<12} {w.name}")
        return 0

    fws, missing = harness.load_frameworks(args.baseline)
    if args.only:
        keep = set(args.only.split(",")) | {"cmlx"}
        fws = [f for f in fws if f.label in keep]
    if not fws or fws[0].name != "cmlx":
        print("cmlx is not importable; timing the others only (ratios need cmlx).")
    print(f"cmlx benchmarks: median of up to {args.repeats} samples; "
          "(x) = other / cmlx, above 1 means cmlx is faster")
    for line in harness.environment_lines(fws, missing):
        print("  " + line)
    print()
    print(harness.header(fws))
    t0 = time.perf_counter()
    rows = harness.run_all(fws, selected, args.repeats, args.budget)
    print(f"\n{len(selected)} workloads in {time.perf_counter() - t0:.0f} s")
    if args.markdown or args.readme:
        import summary

        table = summary.markdown(rows, fws)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(table)
            print(f"summary table: {args.markdown}")
        if args.readme:
            readme = os.path.join(os.path.dirname(HERE), "README.md")
            if not summary.update_readme(readme, table):
                print("README.md has no bench-summary markers; table not written")
                return 1
            print("summary table: README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
