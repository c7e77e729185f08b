#!/usr/bin/env python3
"""Add to a ratchet every expected test that passed in a run.

  conformance_ratchet.py [--check] RATCHET EXPECTED RESULTS_JSON

RATCHET is tests/conformance/ratchet.txt (test ids, one a line, sorted,
after a header of '#' lines); EXPECTED is the suite's expected.txt; the
results are what `run.py --json` wrote.  An id is added when it is expected
and PASSED in the run.  No id is ever removed: a ratchet test that stops
passing is a regression to fix, not a line to delete.  Prints what it added.
With --check it also exits 1 when a ratchet test did not pass in the run
(for suites whose runner has no ratchet of its own: the mlx-lm suite).

The results map a test id to "PASSED" (../shared/mlx-conformance/run.py)
or to [status, message] with status "pass" (../shared/mlx-lm-suite/run.py).
"""
import json
import sys


def read_ids(path):
    with open(path) as f:
        return {l.strip() for l in f if l.strip() and not l.startswith("#")}


def passed(result):
    if isinstance(result, list):
        return bool(result) and result[0] == "pass"
    return result == "PASSED"


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    args = args[1:] if check else args
    if len(args) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    ratchet_path, expected_path, results_path = args
    with open(ratchet_path) as f:
        lines = f.read().splitlines()
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    have = read_ids(ratchet_path)
    expected = read_ids(expected_path)
    with open(results_path) as f:
        results = json.load(f)
    new = sorted(t for t in expected if passed(results.get(t)) and t not in have)
    with open(ratchet_path, "w") as f:
        f.write("".join(h + "\n" for h in header))
        f.write("".join(t + "\n" for t in sorted(have | set(new))))
    for t in new:
        print(f"  added: {t}")
    print(f"ratchet: {len(new)} added, {len(have) + len(new)} in {ratchet_path}")
    if not check:
        return  # the suite's own runner checked the ratchet
    lost = sorted(t for t in have if not passed(results.get(t)))
    for t in lost:
        print(f"  REGRESSION: {t}")
    if lost:
        sys.exit(f"ratchet: {len(lost)} of {len(have)} ratchet tests did not pass")


if __name__ == "__main__":
    main()
