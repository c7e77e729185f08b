"""The .mlxfn fixtures of export_fixtures/ (made by make_fixtures.py from
export_fixtures/cases.py): cmlx writes the same bytes as when they were
made (node ids aside), cmlx reads its own old files and MLX 0.32.4's with
the values stored beside them, and MLX reads what cmlx writes now."""
import os
import sys

import numpy as np
import pytest

import cmlx.core as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_fixtures")
sys.path.insert(0, HERE)
import cases  # noqa: E402

try:
    import mlx.core as mlx
except ImportError:  # the oracle is optional
    mlx = None

needs_mlx = pytest.mark.skipif(mlx is None, reason="needs real MLX")
IDS = [c[0] for c in cases.CASES]
MLX_IDS = [c[0] for c in cases.CASES if c[3].get("mlx", True)]


def _fixture(kind, name):
    with open(os.path.join(HERE, kind, name + ".mlxfn"), "rb") as f:
        return f.read()


def _calls(name):
    """[(args, kwargs, {"cm": outputs, "mx": outputs})] from the npz."""
    z = np.load(os.path.join(HERE, name + ".npz"))
    out, c = [], 0
    while f"in_{c}_0" in z or f"kw_{c}_" in " ".join(z.files):
        args = [z[f"in_{c}_{k}"] for k in range(len(z.files)) if f"in_{c}_{k}" in z]
        kw = {f[len(f"kw_{c}_"):]: z[f] for f in z.files if f.startswith(f"kw_{c}_")}
        want = {side: [z[f"{side}_{c}_{k}"] for k in range(len(z.files))
                       if f"{side}_{c}_{k}" in z] for side in ("cm", "mx")}
        out.append((args, kw, want))
        c += 1
    return out


def _check(got, want, np_of):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np_of(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)


def _call_all(lib, f, name, side):
    for args, kw, want in _calls(name):
        got = f(*[lib.array(a) for a in args], **{k: lib.array(v) for k, v in kw.items()})
        _check(cases.as_list(got), want[side], lambda o: cases.to_numpy(lib, o))


@pytest.mark.parametrize("name", IDS)
def test_same_bytes_as_the_fixture(tmp_path, name):
    case = cases.BY_NAME[name]
    path = str(tmp_path / "f.mlxfn")
    cases.export(mx, path, case)
    with open(path, "rb") as f:
        new = f.read()
    diff = cases.diff_modulo_ids(new, _fixture("cmlx", name), bool(case[3].get("traces")))
    assert diff is None, diff


@pytest.mark.parametrize("name", IDS)
def test_cmlx_fixture_imports(name):
    f = mx.import_function(os.path.join(HERE, "cmlx", name + ".mlxfn"))
    _call_all(mx, f, name, "cm")


@pytest.mark.parametrize("name", MLX_IDS)
def test_mlx_fixture_imports(name):
    f = mx.import_function(os.path.join(HERE, "mlx", name + ".mlxfn"))
    _call_all(mx, f, name, "mx")


@needs_mlx
@pytest.mark.parametrize("name", MLX_IDS)
def test_mlx_imports_new_files(tmp_path, name):
    case = cases.BY_NAME[name]
    if not case[3].get("mlx_runs", True):
        pytest.skip("MLX evaluates these primitives only on the GPU")
    path = str(tmp_path / "f.mlxfn")
    cases.export(mx, path, case)
    f = mlx.import_function(path)
    _call_all(mlx, f, name, "cm")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "src", "primitives", "all.c")),
                    reason="needs the sources")
def test_every_exportable_descriptor_is_listed():
    # import reads only the descriptors primitives/all.c lists: one with an
    # export desc that is not listed would be written but never read back
    import glob
    import re

    declared = set()
    for path in glob.glob(os.path.join(ROOT, "src", "primitives", "*.c")):
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"const cm_prim (cm_prim_\w+) =([^;]*);", text):
            if "&cm_export_" in m.group(2):
                declared.add(m.group(1))
    with open(os.path.join(ROOT, "src", "primitives", "all.c")) as f:
        text = f.read()
    table = text[text.index("cm_export_prims[] = {"):]
    listed = set(re.findall(r"&(cm_prim_\w+)", table[:table.index("};")]))
    assert declared, "no descriptor declares an export desc"
    assert declared - listed == set(), "declare .export but are missing from all.c"
    assert listed - declared == set(), "listed in all.c without an export desc"
