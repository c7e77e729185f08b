#!/usr/bin/env python3
"""Report C source lines longer than the .clang-format column limit.

Usage: check_line_length.py [--strict] [PATH ...]   (default: src python/src)

Prints path:line: columns for each long line, then a summary.  Exits 0
unless --strict is given and something was found: some files are still
being rewritten, so the report must not break a build by default.
Columns are counted in characters, as clang-format counts them, not bytes.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def column_limit():
    text = (ROOT / ".clang-format").read_text(encoding="utf-8")
    m = re.search(r"^ColumnLimit:\s*(\d+)", text, re.M)
    return int(m.group(1)) if m else 100


def main(argv):
    strict = "--strict" in argv
    roots = [a for a in argv if a != "--strict"] or ["src", "python/src"]
    limit = column_limit()
    found, files = 0, 0
    for r in roots:
        base = ROOT / r
        paths = [base] if base.is_file() else sorted(base.rglob("*.[ch]"))
        for path in paths:
            here = 0
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    cols = len(line.rstrip("\n").expandtabs(8))
                    if cols > limit:
                        print(f"{path.relative_to(ROOT)}:{n}: {cols} columns")
                        here += 1
            found += here
            files += here > 0
    print(f"format-check: {found} lines over {limit} columns in {files} files")
    return 1 if strict and found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
