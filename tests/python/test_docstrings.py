"""Every public callable and class of cmlx.core and its submodules has a
docstring beyond its signature line (the texts live in python/docs and are
put on the objects at import, see python/src/docs.c), and the committed type
stubs (python/cmlx/core/*.pyi, written by scripts/gen_stubs.py) are current."""
import ast
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import types

import pytest

import cmlx.core as mx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBMODULES = ("linalg", "fft", "random", "fast", "distributed", "metal", "cuda")


def public_objects():
    """(qualified name, object) for every public callable, class, method and
    property of cmlx.core and its submodules."""
    out = []

    def walk(mod, prefix):
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType):
                if not prefix and obj.__name__.startswith("cmlx.core."):
                    walk(obj, name + ".")
                continue
            q = prefix + name
            if isinstance(obj, type):
                out.append((q, obj))
                for attr, v in vars(obj).items():
                    if attr.startswith("_") or isinstance(v, obj):  # enum members
                        continue
                    if callable(v) or hasattr(v, "__get__"):
                        out.append((q + "." + attr, v))
            elif callable(obj):
                out.append((q, obj))

    walk(mx, "")
    return out


def text_of(obj, name):
    """The docstring without the signature lines it starts with."""
    doc = getattr(obj, "__doc__", None) or ""
    lines = doc.strip().splitlines()
    while lines and lines[0].strip().startswith(name + "("):
        lines.pop(0)
    return "\n".join(lines).strip()


def test_every_public_callable_has_a_docstring():
    objs = public_objects()
    assert len(objs) > 400
    missing = [q for q, o in objs if not text_of(o, q.split(".")[-1])]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_entries_name_existing_objects():
    # a text whose name matches nothing (a typo, a removed function) is dead
    names = {q for q, _ in public_objects()}
    assert set(mx._docs) - names == set()


def test_signature_line_stays_first():
    for row in mx._signatures:
        name = row[0]
        if "." in name:
            continue
        doc = getattr(mx, name).__doc__
        assert doc.splitlines()[0].startswith(name + "("), name
        assert "\n\n" in doc, name


def test_args_section_for_functions_with_parameters():
    # every text from python/docs for a function with parameters has Args
    for key in mx._docs:
        obj = mx
        for part in key.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type):
            continue
        first = (obj.__doc__ or "").splitlines()[0]
        m = re.match(r"\w+\((.*)\)", first)
        if m and re.sub(r"\bself\b|[,/* ]", "", m.group(1)):
            assert "\nArgs:\n" in obj.__doc__, key


def test_help_shows_the_text():
    assert "exponential" in mx.exp.__doc__
    assert mx.exp.__doc__.startswith("exp(a: array")
    assert "Args:" in mx.linalg.norm.__doc__ and "Returns:" in mx.linalg.norm.__doc__
    assert "normal" in mx.random.normal.__doc__
    assert "exp" in mx.array.exp.__doc__ and "Method form" in mx.array.exp.__doc__
    assert "lazy" in mx.array.__doc__
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        help(mx.exp)
    assert "exponential" in buf.getvalue()


def stub_dir():
    return os.path.join(ROOT, "python", "cmlx", "core")


def test_sigs_parse():
    files = sorted(os.listdir(stub_dir()))
    assert "__init__.pyi" in files and "linalg.pyi" in files
    defs, exported = set(), set()
    for f in files:
        if f.endswith(".pyi"):
            with open(os.path.join(stub_dir(), f)) as fh:
                tree = ast.parse(fh.read())
            if f.startswith("_sigs_"):
                defs |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            if f == "__init__.pyi":  # re-exports each name of the parts
                exported |= {a.asname for n in tree.body if isinstance(n, ast.ImportFrom)
                             for a in n.names if a.asname}
    assert {"exp", "array", "Dtype", "reshape", "eval"} <= defs
    assert defs <= exported


def test_sigs_are_up_to_date():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_stubs.py"), "--out", tmp],
                       check=True, capture_output=True)
        made = sorted(os.listdir(os.path.join(tmp, "core")))
        assert made == sorted(f for f in os.listdir(stub_dir()) if f.endswith(".pyi")), \
            "python/cmlx/core's stub files are not the generated set: run scripts/gen_stubs.py"
        for f in made:
            with open(os.path.join(tmp, "core", f)) as a, open(os.path.join(stub_dir(), f)) as b:
                assert a.read() == b.read(), \
                    f"python/cmlx/core/{f} is stale: run scripts/gen_stubs.py"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed")
def test_sigs_type_check():
    r = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                        os.path.join(stub_dir(), "__init__.pyi")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
