"""Shape and view ops of cmlx.core as Python functions: reshape, flatten,
unflatten, squeeze, expand_dims, transpose, permute_dims, swapaxes,
moveaxis, broadcast_to/arrays/shapes, atleast_*d, as_strided, view,
contiguous, slice, slice_update, concatenate, concat, stack, unstack,
split, tile, repeat, pad, roll, diag, diagonal, trace, tril, triu,
meshgrid, kron, diff, outer, inner and the window functions.

Values are checked against NumPy across dtypes and layouts (0-d, empty,
transposed and strided inputs); accepted call forms, result dtypes/shapes
and error types against real MLX where it is importable."""

import numpy as np
import pytest

from conftest import (A, DTYPES, LAYOUTS, SUBJECT_IS_MLX, Raised, assert_call_forms_parse,
                      assert_displayed_signature, assert_same_as_oracle, assert_values, both,
                      call_form_pattern, cmlx_only, dname, ev, layout_input, make_layout, mlx_ref,
                      mx, needs_oracle, npv, sample, to_mx)


# ------------------------------------------------------------ call forms
#
# Each function's parameters with a valid value.  The pattern of accepted
# "first k by position, the rest by keyword" splits, a positional stream
# and an unknown keyword must be MLX's.


def _samples(m):
    a2 = m.arange(6, dtype=m.float32).reshape(2, 3)
    a1 = m.arange(4, dtype=m.float32)
    sq = m.arange(9, dtype=m.float32).reshape(3, 3)
    return {
        "reshape": [("a", a2), ("shape", (3, 2))],
        "flatten": [("a", a2), ("start_axis", 0), ("end_axis", -1)],
        "unflatten": [("a", a1), ("axis", 0), ("shape", (2, 2))],
        "squeeze": [("a", a2), ("axis", None)],
        "expand_dims": [("a", a2), ("axis", 0)],
        "transpose": [("a", a2), ("axes", (1, 0))],
        "permute_dims": [("a", a2), ("axes", (1, 0))],
        "swapaxes": [("a", a2), ("axis1", 0), ("axis2", 1)],
        "moveaxis": [("a", a2), ("source", 0), ("destination", 1)],
        "broadcast_to": [("a", a1), ("shape", (2, 4))],
        "as_strided": [("a", a2), ("shape", (3,)), ("strides", (1,)), ("offset", 0)],
        "view": [("a", a2), ("dtype", m.int32)],
        "contiguous": [("a", a2), ("allow_col_major", False)],
        "slice": [("a", a2), ("start_indices", m.array([0])), ("axes", (0,)),
                  ("slice_size", (1, 3))],
        "slice_update": [("a", a2), ("update", m.zeros((1, 3))),
                         ("start_indices", m.array([0])), ("axes", (0,))],
        "concatenate": [("arrays", [a1, a1]), ("axis", 0)],
        "concat": [("arrays", [a1, a1]), ("axis", 0)],
        "stack": [("arrays", [a1, a1]), ("axis", 0)],
        "unstack": [("x", a2)],
        "split": [("a", a1), ("indices_or_sections", 2), ("axis", 0)],
        "tile": [("a", a1), ("reps", 2)],
        "repeat": [("array", a1), ("repeats", 2), ("axis", 0)],
        "pad": [("a", a1), ("pad_width", 1), ("mode", "constant"), ("constant_values", 0)],
        "roll": [("a", a1), ("shift", 1), ("axis", 0)],
        "diag": [("a", a1), ("k", 0)],
        "diagonal": [("a", sq), ("offset", 0), ("axis1", 0), ("axis2", 1)],
        "trace": [("a", sq), ("offset", 0), ("axis1", 0), ("axis2", 1), ("dtype", None)],
        "tril": [("x", sq), ("k", 0)],
        "triu": [("x", sq), ("k", 0)],
        "kron": [("a", a1), ("b", a1)],
        "diff": [("a", a1), ("n", 1), ("axis", -1)],
        "outer": [("a", a1), ("b", a1)],
        "inner": [("a", a1), ("b", a1)],
        "bartlett": [("M", 4)],
        "blackman": [("M", 4)],
        "hamming": [("M", 4)],
        "hanning": [("M", 4)],
    }


NAMES = sorted(_samples(mx).keys())


def _pattern(m, name):
    return call_form_pattern(m, getattr(m, name), _samples(m)[name])


@pytest.mark.parametrize("name", NAMES)
def test_call_forms_parse(name):
    assert_call_forms_parse(_pattern(mx, name), len(_samples(mx)[name]))


@needs_oracle
@pytest.mark.parametrize("name", NAMES)
def test_call_forms_match_mlx(name):
    assert _pattern(mx, name) == _pattern(mlx_ref, name)


def test_keyword_only_parameters():
    a = mx.arange(6).reshape(2, 3)
    assert len(mx.unstack(a, axis=1)) == 3
    with pytest.raises(TypeError):
        mx.unstack(a, 1)
    with pytest.raises(TypeError):
        mx.tile(a, reps=2)  # reps is positional-only


# Where MLX's binding declarations (the shared signature list) and the
# installed MLX's docstrings differ, the table follows the list.
FROM_SIGNATURE_LIST = {
    "unstack": "unstack(x: array, /, *, axis: int = 0, stream: StreamOrDevice = None) -> list[array]",
    "bartlett": "bartlett(M: int, *, stream: StreamOrDevice = None) -> array",
    "hanning": "hanning(M: int, *, stream: StreamOrDevice = None) -> array",
}
SHAPE_FUNCTIONS = NAMES + ["broadcast_arrays", "broadcast_shapes", "atleast_1d", "atleast_2d",
                           "atleast_3d", "meshgrid"]


@pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's signature table")
@pytest.mark.parametrize("name", SHAPE_FUNCTIONS)
def test_displayed_signature(name):
    assert_displayed_signature(name, FROM_SIGNATURE_LIST)


# ------------------------------------------------------------ values across dtypes


@pytest.mark.parametrize("name", DTYPES)
def test_reshaping_and_axis_order(name):
    x = sample(name, (2, 3, 4), seed=1)
    a = to_mx(x, name)
    cases = [
        (mx.reshape(a, (4, 6)), x.reshape(4, 6)),
        (mx.reshape(a, [-1]), x.reshape(-1)),
        (mx.reshape(a, (3, -1, 2)), x.reshape(3, -1, 2)),
        (mx.flatten(a), x.reshape(-1)),
        (mx.flatten(a, 1), x.reshape(2, 12)),
        (mx.flatten(a, start_axis=0, end_axis=1), x.reshape(6, 4)),
        (mx.flatten(a, -2, -1), x.reshape(2, 12)),
        (mx.unflatten(a, 2, (2, 2)), x.reshape(2, 3, 2, 2)),
        (mx.unflatten(a, -1, [-1, 2]), x.reshape(2, 3, 2, 2)),
        (mx.expand_dims(a, 0), x[None]),
        (mx.expand_dims(a, (0, 4)), x[None, ..., None]),
        (mx.expand_dims(a, [-1]), x[..., None]),
        (mx.squeeze(mx.expand_dims(a, (0, 2))), x),
        (mx.squeeze(mx.expand_dims(a, (0, 2)), 2), x[None]),
        (mx.squeeze(mx.expand_dims(a, (0, 2)), axis=(0, -3)), x),
        (mx.transpose(a), x.transpose()),
        (mx.transpose(a, (1, 0, 2)), x.transpose(1, 0, 2)),
        (mx.transpose(a, [2, -3, 1]), x.transpose(2, 0, 1)),
        (mx.permute_dims(a, (2, 0, 1)), x.transpose(2, 0, 1)),
        (mx.permute_dims(a), x.transpose()),
        (mx.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2)),
        (mx.swapaxes(a, -1, 1), np.swapaxes(x, -1, 1)),
        (mx.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1)),
        (mx.moveaxis(a, 2, 0), np.moveaxis(x, 2, 0)),
        (mx.broadcast_to(mx.reshape(a, (1, 2, 3, 4)), (3, 2, 3, 4)),
         np.broadcast_to(x, (3, 2, 3, 4))),
        (mx.atleast_1d(a), x),
        (mx.contiguous(mx.transpose(a)), x.transpose()),
        (mx.contiguous(mx.swapaxes(a, 0, 1), True), np.swapaxes(x, 0, 1)),
    ]
    for i, (r, e) in enumerate(cases):
        assert dname(r) == name, i
        assert_values(npv(r), e, name, msg=f"case {i}")


@pytest.mark.parametrize("name", DTYPES)
def test_joining_splitting_tiling(name):
    x = sample(name, (2, 3), seed=2)
    y = sample(name, (2, 3), seed=3)
    a, b = to_mx(x, name), to_mx(y, name)
    cases = [
        (mx.concatenate([a, b]), np.concatenate([x, y])),
        (mx.concatenate((a, b), 1), np.concatenate([x, y], 1)),
        (mx.concatenate([a, b], axis=-1), np.concatenate([x, y], -1)),
        (mx.concatenate([a, b], None), np.concatenate([x.ravel(), y.ravel()])),
        (mx.concat([a, b, a], 0), np.concatenate([x, y, x])),
        (mx.stack([a, b]), np.stack([x, y])),
        (mx.stack([a, b], 2), np.stack([x, y], 2)),
        (mx.stack([a, b], -1), np.stack([x, y], -1)),
        (mx.stack([a], axis=None), np.stack([x])),
        (mx.tile(a, 2), np.tile(x, 2)),
        (mx.tile(a, (2, 1, 3)), np.tile(x, (2, 1, 3))),
        (mx.tile(a, [3]), np.tile(x, [3])),
        (mx.repeat(a, 2), np.repeat(x, 2)),
        (mx.repeat(a, 3, 1), np.repeat(x, 3, 1)),
        (mx.repeat(a, 2, axis=-2), np.repeat(x, 2, -2)),
        (mx.repeat(a, 0, 0), np.repeat(x, 0, 0)),
        (mx.roll(a, 1), np.roll(x, 1)),
        (mx.roll(a, -4), np.roll(x, -4)),
        (mx.roll(a, 1, 1), np.roll(x, 1, 1)),
        (mx.roll(a, (1, 2), (0, 1)), np.roll(x, (1, 2), (0, 1))),
        (mx.roll(a, [1, 2], 1), np.roll(x, 3, 1)),
        (mx.roll(a, 2, (0, 1)), np.roll(x, (2, 2), (0, 1))),
        (mx.roll(a, (1, 2)), np.roll(x, 3)),
        (mx.roll(a, shift=7, axis=-1), np.roll(x, 7, -1)),
    ]
    for i, (r, e) in enumerate(cases):
        assert dname(r) == name, i
        assert_values(npv(r), e, name, msg=f"case {i}")
    parts = mx.split(a, 3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    for p, e in zip(parts, np.split(x, 3, axis=1)):
        assert_values(npv(p), e, name)
    parts = mx.split(mx.flatten(a), [1, 4])
    for p, e in zip(parts, np.split(x.ravel(), [1, 4])):
        assert_values(npv(p), e, name)
    us = mx.unstack(a, axis=1)
    assert isinstance(us, tuple) and len(us) == 3
    for k, p in enumerate(us):
        assert_values(npv(p), x[:, k], name)


@pytest.mark.parametrize("name", DTYPES)
def test_pad_modes(name):
    x = sample(name, (3, 4), seed=4)
    a = to_mx(x, name)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        for width, npw in [(1, 1), ((2,), 2), ((1, 2), (1, 2)), ([(1, 2), (0, 3)], [(1, 2), (0, 3)]),
                           ([(2, 1)], (2, 1)), ([[0, 1], [2, 0]], [(0, 1), (2, 0)])]:
            r = mx.pad(a, width, mode)
            assert dname(r) == name
            assert_values(npv(r), np.pad(x, npw, mode=mode), name, msg=f"{mode} {width}")
    if name != "bool_":
        v = 5 if name != "complex64" else 5 + 0j
        r = mx.pad(a, 1, constant_values=v)
        assert dname(r) == name
        assert_values(npv(r), np.pad(x, 1, constant_values=v), name)


@pytest.mark.parametrize("name", DTYPES)
def test_diagonal_family(name):
    x = sample(name, (4, 5), seed=5)
    a = to_mx(x, name)
    v = sample(name, (3,), seed=6)
    b = to_mx(v, name)
    cases = [
        (mx.diag(a), np.diag(x)),
        (mx.diag(a, 1), np.diag(x, 1)),
        (mx.diag(a, k=-2), np.diag(x, -2)),
        (mx.diag(b), np.diag(v)),
        (mx.diag(b, -1), np.diag(v, -1)),
        (mx.diagonal(a), np.diagonal(x)),
        (mx.diagonal(a, 1, 1, 0), np.diagonal(x, 1, 1, 0)),
        (mx.diagonal(a, offset=-1), np.diagonal(x, -1)),
        (mx.tril(a), np.tril(x)),
        (mx.tril(a, 1), np.tril(x, 1)),
        (mx.triu(a, -1), np.triu(x, -1)),
        (mx.triu(x=a, k=2), np.triu(x, 2)),
    ]
    for i, (r, e) in enumerate(cases):
        assert dname(r) == name, i
        assert_values(npv(r), e, name, msg=f"case {i}")


@pytest.mark.parametrize("name", DTYPES)
def test_trace(name):
    x = sample(name, (3, 4, 2), seed=7, lo=-2, hi=2)
    a = to_mx(x, name)
    r = mx.trace(a, 1, 0, 1)
    # MLX's sum promotion: small ints -> int32, unsigned -> uint32
    promo = {"bool_": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
             "uint16": "uint32"}.get(name, name)
    assert dname(r) == promo
    e = np.trace(x.astype(np.float64) if name not in ("complex64",) else x, 1, 0, 1)
    assert_values(npv(r), e, promo, rtol=0.05 if name in ("float16", "bfloat16") else None)
    r = mx.trace(a, dtype=mx.float32)
    assert dname(r) == "float32"
    assert_values(npv(r), np.trace(x.real.astype(np.float64) if name == "complex64" else x.astype(np.float64)), "float32", rtol=1e-2)


@pytest.mark.parametrize("name", ["int32", "float32", "float16", "complex64", "bool_", "uint8"])
def test_products_and_diff(name):
    x = sample(name, (3,), seed=8)
    y = sample(name, (4,), seed=9)
    a, b = to_mx(x, name), to_mx(y, name)
    cases = [(mx.outer(a, b), np.outer(x, y)), (mx.kron(a, b), np.kron(x, y))]
    inexact = name in ("float32", "float16", "complex64")
    if inexact:  # inner is a matmul: inexact dtypes only
        cases.append((mx.inner(a, a), np.inner(x, x)))
    else:
        with pytest.raises(ValueError, match=r"\[matmul\] Only inexact types"):
            ev(mx.inner(a, a))
    if name != "bool_":
        m = sample(name, (2, 3), seed=10)
        cases.append((mx.kron(to_mx(m, name), a), np.kron(m, x)))
        if inexact:
            cases.append((mx.inner(to_mx(m, name), a), np.inner(m, x)))
    for i, (r, e) in enumerate(cases):
        got = npv(r)
        rn = dname(r)
        assert_values(got, np.asarray(e).astype(got.dtype) if rn != "bfloat16" else e, rn,
                      rtol=1e-2 if name in ("float16",) else None, msg=f"case {i}")
    if name != "bool_":
        m = sample(name, (3, 5), seed=11)
        am = to_mx(m, name)
        for kw, npkw in [({}, {}), ({"n": 2}, {"n": 2}), ({"axis": 0}, {"axis": 0}),
                         ({"n": 0}, {"n": 0}), ({"n": 7}, {"n": 7})]:
            r = mx.diff(am, **kw)
            assert dname(r) == name
            with np.errstate(all="ignore"):
                e = np.diff(m, **npkw)
            assert_values(npv(r), e, name, msg=str(kw))
    else:
        r = mx.diff(a)
        assert dname(r) == "bool_"
        assert_values(npv(r), x[1:] != x[:-1], "bool_")


@pytest.mark.parametrize("fn", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [-3, 0, 1, 2, 7, 16])
def test_windows(fn, m):
    r = getattr(mx, fn)(m)
    assert dname(r) == "float32" and r.shape == (max(m, 0),)
    assert_values(npv(r), getattr(np, fn)(m), "float32", atol=1e-6)


# ------------------------------------------------------------ layouts


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["float32", "int16", "bfloat16", "complex64", "bool_"])
def test_layouts(layout, name):
    x0 = make_layout(layout, lambda shape: sample(name, shape, seed=12))
    a, x = layout_input(layout, x0, name)
    ops = [
        (lambda m, t: m.reshape(t, (-1,)), lambda t: t.reshape(-1)),
        (lambda m, t: m.flatten(t), lambda t: t.reshape(-1)),
        (lambda m, t: m.transpose(t), lambda t: t.T),
        (lambda m, t: m.expand_dims(t, -1), lambda t: t[..., None]),
        (lambda m, t: m.concatenate([t, t], 0 if t.ndim else None),
         lambda t: np.concatenate([t, t], 0) if t.ndim else np.array([t, t])),
        (lambda m, t: m.stack([t, t], -1), lambda t: np.stack([t, t], -1)),
        (lambda m, t: m.tile(t, 2), lambda t: np.tile(t, 2)),
        (lambda m, t: m.repeat(t, 2), lambda t: np.repeat(t, 2)),
        (lambda m, t: m.roll(t, 2), lambda t: np.roll(t, 2)),
        (lambda m, t: m.pad(t, 1, "edge") if t.size else m.pad(t, 1),
         lambda t: np.pad(t, 1, "edge") if t.size else np.pad(t, 1)),
        (lambda m, t: m.contiguous(t), lambda t: t),
        (lambda m, t: m.atleast_3d(t), lambda t: np.atleast_3d(t) if t.ndim != 1 else t[None, :, None]),
        (lambda m, t: m.broadcast_to(t, (2,) + tuple(t.shape)), lambda t: np.broadcast_to(t, (2,) + t.shape)),
    ]
    if x.ndim >= 2:
        ops += [
            (lambda m, t: m.swapaxes(t, 0, -1), lambda t: np.swapaxes(t, 0, -1)),
            (lambda m, t: m.diagonal(t), lambda t: np.diagonal(t)),
            (lambda m, t: m.tril(t, 1), lambda t: np.tril(t, 1)),
            (lambda m, t: m.roll(t, (1, -1), (0, 1)), lambda t: np.roll(t, (1, -1), (0, 1))),
            (lambda m, t: m.split(t, [1, 2], 1)[1], lambda t: np.split(t, [1, 2], 1)[1]),
        ]
    for i, (f, g) in enumerate(ops):
        r = f(mx, a)
        assert dname(r) == name, i
        assert_values(npv(r), g(x), name, msg=f"{layout} op {i}")


def test_native_slices():
    x = sample("float32", (6, 8), seed=13)
    a = mx.array(x)
    s = a[1::2, ::3]
    assert_values(npv(mx.reshape(s, (-1,))), x[1::2, ::3].reshape(-1), "float32")
    assert_values(npv(mx.pad(s, 1, "reflect")), np.pad(x[1::2, ::3], 1, "reflect"), "float32")
    assert_values(npv(mx.concatenate([s, s.T.T], 1)), np.concatenate([x[1::2, ::3]] * 2, 1), "float32")
    assert_values(npv(mx.transpose(a[::-1])), x[::-1].T, "float32")


# ------------------------------------------------------------ 0-d and empty


def test_zero_dim_and_empty():
    s = mx.array(3.5)
    assert npv(mx.reshape(s, (1, 1))).tolist() == [[3.5]]
    assert mx.reshape(mx.zeros((1, 1)), ()).shape == ()
    assert mx.flatten(s).shape == (1,)
    assert mx.expand_dims(s, 0).shape == (1,)
    assert mx.squeeze(s).shape == ()
    assert mx.transpose(s).shape == ()
    assert [t.shape for t in (mx.atleast_1d(s), mx.atleast_2d(s), mx.atleast_3d(s))] == \
        [(1,), (1, 1), (1, 1, 1)]
    assert mx.broadcast_to(s, (2, 3)).shape == (2, 3)
    assert mx.broadcast_to(2, (2,)).tolist() == [2, 2]
    assert mx.concatenate([s, s], None).tolist() == [3.5, 3.5]
    assert mx.stack([s, s]).tolist() == [3.5, 3.5]
    assert mx.tile(s, (2, 2)).shape == (2, 2)
    assert mx.repeat(s, 3).tolist() == [3.5] * 3
    assert mx.roll(s, 1).tolist() == 3.5
    assert mx.pad(s, 2).shape == ()
    e = mx.zeros((0, 3))
    assert mx.reshape(e, (3, 0, 5)).shape == (3, 0, 5)
    assert mx.transpose(e).shape == (3, 0)
    assert mx.concatenate([e, e]).shape == (0, 3)
    assert mx.concatenate([e, mx.ones((2, 3))]).tolist() == [[1.0] * 3] * 2
    assert mx.stack([e, e], 1).shape == (0, 2, 3)
    assert mx.tile(e, (2, 2)).shape == (0, 6)
    assert mx.repeat(e, 4, 1).shape == (0, 12)
    assert mx.pad(e, 1).shape == (2, 5)
    assert mx.roll(e, 3, 1).shape == (0, 3)
    assert [p.shape for p in mx.split(e, 3, 1)] == [(0, 1)] * 3
    assert mx.diff(e, axis=0).shape == (0, 3)
    assert mx.diag(mx.zeros((0,))).shape == (0, 0)
    assert mx.trace(mx.zeros((0, 0))).item() == 0.0
    assert mx.tril(mx.zeros((0, 4))).shape == (0, 4)
    assert mx.unstack(e, axis=1)[0].shape == (0,)
    assert mx.unstack(e) == ()
    with pytest.raises(ValueError, match=r"\[kron\] Input arrays cannot be empty"):
        mx.kron(e, mx.ones((2, 2)))
    assert mx.outer(mx.zeros((0,)), mx.ones(3)).shape == (0, 3)
    assert mx.inner(mx.zeros((0,)), mx.zeros((0,))).item() == 0.0


# ------------------------------------------------------------ list-shaped calls


def test_broadcast_arrays_shapes_atleast():
    a = mx.zeros((3, 1))
    b = mx.ones((4,))
    out = mx.broadcast_arrays(a, b)
    assert isinstance(out, list) and [o.shape for o in out] == [(3, 4), (3, 4)]
    assert mx.broadcast_arrays() == []
    assert [o.shape for o in mx.broadcast_arrays(b)] == [(4,)]
    assert mx.broadcast_shapes((1, 2), [3, 1]) == (3, 2)
    assert mx.broadcast_shapes((5, 1, 4), (3, 1), (4,)) == (5, 3, 4)
    assert mx.broadcast_shapes(()) == ()
    assert mx.broadcast_shapes((2, 3)) == (2, 3)
    assert mx.broadcast_shapes((0,), (1,)) == (0,)
    assert mx.broadcast_shapes(np.array([1, 2]), (3, 1)) == (3, 2)
    with pytest.raises(ValueError, match=r"\[broadcast_shapes\] Shapes \(2,3\) and \(4\) cannot"):
        mx.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match="Must provide at least one shape"):
        mx.broadcast_shapes()
    r = mx.atleast_2d(b, a, mx.array(1))
    assert isinstance(r, list) and [t.shape for t in r] == [(1, 4), (3, 1), (1, 1)]
    assert mx.atleast_1d() == []
    assert isinstance(mx.atleast_3d(b), mx.array) and mx.atleast_3d(b).shape == (1, 4, 1)


def test_join_arrays_from_an_array():
    # an array is a sequence of its rows, as in MLX
    a = mx.arange(6).reshape(2, 3)
    assert mx.concatenate(a).tolist() == [0, 1, 2, 3, 4, 5]
    assert mx.stack(a, 1).tolist() == [[0, 3], [1, 4], [2, 5]]


def test_meshgrid():
    x = np.arange(3, dtype=np.float32)
    y = np.arange(4, dtype=np.int32)
    out = mx.meshgrid(mx.array(x), mx.array(y))
    assert isinstance(out, tuple)
    for o, e in zip(out, np.meshgrid(x, y)):
        assert_values(npv(o), e, dname(o))
    for o, e in zip(mx.meshgrid(mx.array(x), mx.array(y), indexing="ij"),
                    np.meshgrid(x, y, indexing="ij")):
        assert_values(npv(o), e, dname(o))
    for o, e in zip(mx.meshgrid(mx.array(x), mx.array(y), sparse=True),
                    np.meshgrid(x, y, sparse=True)):
        assert o.shape == e.shape
    z = np.arange(2, dtype=np.float32)
    for o, e in zip(mx.meshgrid(mx.array(x), mx.array(y), mx.array(z)), np.meshgrid(x, y, z)):
        assert_values(npv(o), e, dname(o))
    assert mx.meshgrid() == ()
    with pytest.raises(ValueError, match="Invalid indexing value"):
        mx.meshgrid(mx.array(x), indexing="xx")


def test_split_forms():
    a = mx.arange(10)
    assert [p.tolist() for p in mx.split(a, [2, 5])] == [[0, 1], [2, 3, 4], list(range(5, 10))]
    assert [p.tolist() for p in mx.split(a, (3,))] == [[0, 1, 2], list(range(3, 10))]
    assert [p.tolist() for p in mx.split(a, np.array([4]))] == [[0, 1, 2, 3], list(range(4, 10))]
    assert [p.shape for p in mx.split(a, [])] == [(10,)]
    # decreasing indices: MLX's parts run from each index to the next one's
    # start, clamped (unlike NumPy's)
    assert [p.tolist() for p in mx.split(a, [8, 2])] == [list(range(8)), [], list(range(2, 10))]
    many = mx.split(mx.arange(200), list(range(1, 200)))  # more parts than dimensions
    assert len(many) == 200 and many[-1].tolist() == [199]
    many = mx.arange(200).split(list(range(1, 200)))  # the method too
    assert len(many) == 200 and many[0].tolist() == [0]
    assert [p.tolist() for p in mx.split(a, mx.array([3]))] == [[0, 1, 2], list(range(3, 10))]
    assert [p.shape for p in mx.arange(6).reshape(2, 3).split(3, axis=1)] == [(2, 1)] * 3
    with pytest.raises(ValueError):
        mx.split(a, 3)
    with pytest.raises(ValueError):
        mx.split(a, 0)


def test_as_strided_and_view():
    x = np.arange(12, dtype=np.float32)
    a = mx.array(x)
    r = mx.as_strided(a, (3, 3), (3, 1), 1)
    assert_values(npv(r), np.lib.stride_tricks.as_strided(x[1:], (3, 3), (12, 4)), "float32")
    r = mx.as_strided(a, (4, 2), (1, 4))
    assert_values(npv(r), np.lib.stride_tricks.as_strided(x, (4, 2), (4, 16)), "float32")
    assert mx.as_strided(a).shape == (12,)
    assert npv(mx.as_strided(a, (2, 2))).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert npv(mx.as_strided(a, (6,), strides=(2,))).tolist() == x[::2].tolist()
    v = mx.view(a, mx.int32)
    assert dname(v) == "int32" and npv(v).tolist() == x.view(np.int32).tolist()
    assert mx.view(a, mx.uint8).shape == (48,)
    assert mx.view(a, mx.float16).shape == (24,)
    assert dname(mx.view(1.0, mx.int32)) == "int32"
    assert mx.view(1.0, mx.int32).item() == np.float32(1.0).view(np.int32)
    with pytest.raises(ValueError):
        mx.view(mx.zeros((3,)), mx.float64)


def test_dynamic_slice_and_update():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    a = mx.array(x)
    r = mx.slice(a, mx.array([1]), [0], (2, 5))
    assert_values(npv(r), x[1:3], "float32")
    r = mx.slice(a, mx.array([1, 2]), (0, 1), [3, 2])
    assert_values(npv(r), x[1:4, 2:4], "float32")
    u = mx.zeros((2, 2))
    r = mx.slice_update(a, u, mx.array([2, 3]), [0, 1])
    e = x.copy()
    e[2:4, 3:5] = 0
    assert_values(npv(r), e, "float32")
    r = mx.slice_update(a, mx.ones((1, 5)), start_indices=mx.array([0]), axes=(0,))
    e = x.copy()
    e[0] = 1
    assert_values(npv(r), e, "float32")


@cmlx_only  # MLX reads past the array; cmlx clamps the start so the window fits
def test_dynamic_slice_start_is_clamped():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert npv(mx.slice(mx.array(x), mx.array([5]), [0], [1, 3])).tolist() == [x[1].tolist()]
    r = mx.slice_update(mx.array(x), mx.zeros((1, 2)), mx.array([7, 9]), [0, 1])
    e = x.copy()
    e[1, 1:] = 0
    assert npv(r).tolist() == e.tolist()


def test_pad_forms_and_values():
    a = mx.array([[1, 2], [3, 4]], dtype=mx.int32)
    x = np.array([[1, 2], [3, 4]], dtype=np.int32)
    r = mx.pad(a, 1, constant_values=2.7)  # cast to a's dtype
    assert dname(r) == "int32"
    assert npv(r).tolist() == np.pad(x, 1, constant_values=2).tolist()
    r = mx.pad(a, (0, 1), constant_values=mx.array(9, mx.int8))
    assert dname(r) == "int32" and npv(r).tolist() == np.pad(x, (0, 1), constant_values=9).tolist()
    r = mx.pad(a, [(0, 0), (1, 0)], "constant", -1)
    assert npv(r).tolist() == np.pad(x, [(0, 0), (1, 0)], constant_values=-1).tolist()
    r = mx.pad(a, ((1, 2),), mode="reflect")
    assert npv(r).tolist() == np.pad(x, (1, 2), mode="reflect").tolist()
    assert mx.pad(mx.array(1.0), []).shape == ()
    with pytest.raises(ValueError, match="Invalid number of padding sizes"):
        mx.pad(a, [(1, 1), (1, 1), (1, 1)])
    with pytest.raises(ValueError, match="Invalid number of padding sizes"):
        mx.pad(a, [])
    with pytest.raises(ValueError, match=r"Invalid padding mode \(wrap\)"):
        mx.pad(a, 1, "wrap")
    with pytest.raises(ValueError, match="must be non-negative"):
        mx.pad(a, -1)
    for bad in [1.5, (1, 2, 3), [(1,)], "x", None, [(1, 2), 3]]:
        with pytest.raises(TypeError):
            mx.pad(a, bad)
    with pytest.raises(TypeError):
        mx.pad(a, 1, mode=None)
    with pytest.raises(TypeError):
        mx.pad(a, 1, constant_values=None)
    with pytest.raises(ValueError):
        mx.pad(a, 1, constant_values=[1, 2])


def test_trace_forms():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.array(x)
    assert_values(npv(mx.trace(a, 0, 1, 2)), np.trace(x, 0, 1, 2), "float32")
    assert_values(npv(mx.trace(a, -1, 2, 0)), np.trace(x, -1, 2, 0), "float32")
    assert_values(npv(mx.trace(a, offset=1, axis1=-1, axis2=-2)), np.trace(x, 1, -1, -2), "float32")
    r = mx.trace(mx.ones((3, 3), dtype=mx.int8))
    assert dname(r) == "int32" and r.item() == 3
    r = mx.trace(mx.array(x[0]), dtype=mx.int16)
    assert dname(r) == "int32" and r.item() == int(np.trace(x[0]))


# ------------------------------------------------------------ errors


ERROR_CASES = [
    # (label, call, expected exception)
    ("reshape bad size", lambda m: m.reshape(m.zeros((2, 3)), (4, -1)), ValueError),
    ("reshape two -1", lambda m: m.reshape(m.zeros((2, 3)), (-1, -1)), ValueError),
    ("reshape int shape", lambda m: m.reshape(m.zeros((2, 3)), 6), TypeError),
    ("reshape float dim", lambda m: m.reshape(m.zeros((2, 3)), (2.0, 3)), TypeError),
    ("reshape scalar a", lambda m: m.reshape(1.0, (1,)), TypeError),
    ("reshape list a", lambda m: m.reshape([1, 2], (2,)), TypeError),
    ("reshape overflow", lambda m: m.reshape(m.zeros((2, 3)), (2 ** 40,)), OverflowError),
    ("flatten bad", lambda m: m.flatten(m.zeros((2, 3)), 3), ValueError),
    ("unflatten int", lambda m: m.unflatten(m.zeros((4,)), 0, 2), TypeError),
    ("unflatten bad", lambda m: m.unflatten(m.zeros((4,)), 0, (3, -1)), ValueError),
    ("squeeze non-1", lambda m: m.squeeze(m.zeros((2, 3)), 0), ValueError),
    ("squeeze axis", lambda m: m.squeeze(m.zeros((2, 3)), 5), IndexError),
    ("squeeze float", lambda m: m.squeeze(m.zeros((1, 3)), 0.0), TypeError),
    ("expand axis", lambda m: m.expand_dims(m.zeros((2, 3)), 5), IndexError),
    ("expand dup", lambda m: m.expand_dims(m.zeros((2, 3)), [0, 0]), ValueError),
    ("expand None", lambda m: m.expand_dims(m.zeros((2, 3)), None), TypeError),
    ("transpose int", lambda m: m.transpose(m.zeros((2, 3)), 0), TypeError),
    ("transpose count", lambda m: m.transpose(m.zeros((2, 3)), [0]), ValueError),
    ("transpose repeat", lambda m: m.transpose(m.zeros((2, 3)), [0, 0]), ValueError),
    ("transpose range", lambda m: m.transpose(m.zeros((2, 3)), [0, 5]), IndexError),
    ("swapaxes range", lambda m: m.swapaxes(m.zeros((2, 3)), 0, 3), IndexError),
    ("moveaxis range", lambda m: m.moveaxis(m.zeros((2, 3)), -3, 0), IndexError),
    ("broadcast_to bad", lambda m: m.broadcast_to(m.zeros((2, 3)), (3, 3)), ValueError),
    ("broadcast_to int", lambda m: m.broadcast_to(m.zeros((4,)), 4), TypeError),
    ("broadcast_to list", lambda m: m.broadcast_to([1.0, 2.0], (2, 2)), ValueError),
    ("broadcast_shapes array", lambda m: m.broadcast_shapes((2,), m.array([3, 1])), ValueError),
    ("as_strided neg offset", lambda m: m.as_strided(m.zeros((4,)), (2,), (1,), -1), TypeError),
    ("view bad size", lambda m: m.view(m.zeros((3,)), m.float64), ValueError),
    ("view list", lambda m: m.view([1.0], m.int32), ValueError),
    ("slice int axes", lambda m: m.slice(m.zeros((2, 3)), m.array([0]), 0, [1, 3]), TypeError),
    ("slice list start", lambda m: m.slice(m.zeros((2, 3)), [0], [0], [1, 3]), TypeError),
    ("slice_update scalar", lambda m: m.slice_update(m.zeros((2, 3)), 1.0, m.array([0]), [0]), TypeError),
    ("concatenate empty", lambda m: m.concatenate([]), ValueError),
    ("concatenate scalar", lambda m: m.concatenate([m.zeros(2), 1.0]), TypeError),
    ("concatenate numpy", lambda m: m.concatenate([m.zeros(2), np.ones(2)]), TypeError),
    ("concatenate ndim", lambda m: m.concatenate([m.zeros((2, 3)), m.zeros(3)]), ValueError),
    ("concatenate shape", lambda m: m.concatenate([m.zeros((2, 3)), m.zeros((2, 4))]), ValueError),
    ("concatenate axis", lambda m: m.concatenate([m.zeros((2, 3))] * 2, 2), IndexError),
    ("concatenate not list", lambda m: m.concatenate(3), TypeError),
    ("stack empty", lambda m: m.stack([]), ValueError),
    ("stack shapes", lambda m: m.stack([m.zeros((2, 3)), m.zeros(3)]), ValueError),
    ("stack axis", lambda m: m.stack([m.zeros(3)] * 2, 3), IndexError),
    ("unstack axis", lambda m: m.unstack(m.zeros((2, 3)), axis=2), IndexError),
    ("split unequal", lambda m: m.split(m.zeros(4), 3), ValueError),
    ("split zero", lambda m: m.split(m.zeros(4), 0), ValueError),
    ("split float", lambda m: m.split(m.zeros(4), [1.0]), TypeError),
    ("split str", lambda m: m.split(m.zeros(4), "a"), TypeError),
    ("split axis", lambda m: m.split(m.zeros(4), 2, 1), IndexError),
    ("tile float", lambda m: m.tile(m.zeros(4), 2.0), TypeError),
    ("repeat negative", lambda m: m.repeat(m.zeros(4), -1), ValueError),
    ("repeat list", lambda m: m.repeat(m.zeros(4), [1, 2]), TypeError),
    ("repeat axis", lambda m: m.repeat(m.zeros(4), 2, 1), IndexError),
    ("roll short shift", lambda m: m.roll(m.zeros((2, 3)), (1,), (0, 1)), ValueError),
    ("roll axis", lambda m: m.roll(m.zeros((2, 3)), 1, 5), IndexError),
    ("roll axes", lambda m: m.roll(m.zeros((2, 3)), 1, [0, 5]), IndexError),
    ("roll float", lambda m: m.roll(m.zeros((2, 3)), 1.0), TypeError),
    ("diag 3d", lambda m: m.diag(m.zeros((2, 2, 2))), ValueError),
    ("diagonal same axis", lambda m: m.diagonal(m.zeros((2, 3)), 0, 0, 0), ValueError),
    ("diagonal 1d", lambda m: m.diagonal(m.zeros(3)), ValueError),
    ("trace 1d", lambda m: m.trace(m.zeros(3)), ValueError),
    ("tril 1d", lambda m: m.tril(m.zeros(3)), ValueError),
    ("tril float k", lambda m: m.tril(m.zeros((2, 2)), 1.0), TypeError),
    ("kron scalar", lambda m: m.kron(m.zeros(2), 2), TypeError),
    ("outer scalar", lambda m: m.outer(2, m.zeros(2)), TypeError),
    ("inner mismatch", lambda m: m.inner(m.zeros((2, 3)), m.zeros(2)), ValueError),
    ("inner scalar", lambda m: m.inner(m.zeros(2), 2.0), TypeError),
    ("inner ints", lambda m: m.inner(m.zeros((2, 3), m.int8), m.ones((3,), m.uint16)), ValueError),
    ("diff negative", lambda m: m.diff(m.zeros(4), -1), ValueError),
    ("diff 0-d", lambda m: m.diff(m.array(1.0)), IndexError),
    ("diff axis", lambda m: m.diff(m.zeros(4), 1, 1), IndexError),
    ("meshgrid sparse None", lambda m: m.meshgrid(m.zeros(2), sparse=None), TypeError),
    ("meshgrid indexing None", lambda m: m.meshgrid(m.zeros(2), indexing=None), TypeError),
    ("meshgrid bad", lambda m: m.meshgrid(m.zeros(2), indexing="foo"), ValueError),
    ("window float", lambda m: m.hanning(5.0), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    label, fn, exc = ERROR_CASES[i]
    sub, ref = both(lambda m: fn(m))
    assert isinstance(sub, Raised), f"{label}: no error, got {sub}"
    assert sub.type is exc, f"{label}: {sub!r}, expected {exc.__name__}"
    if ref is not None:
        assert_same_as_oracle(sub, ref, msg=label)


# MLX leaks C++'s std::bad_cast (a RuntimeError) for these; cmlx raises the
# TypeError nanobind would for a parameter of the wrong type.
@cmlx_only
@pytest.mark.parametrize("call_", [
    lambda m: m.broadcast_arrays(1.0, m.zeros(2)),
    lambda m: m.broadcast_arrays([m.zeros(2)]),
    lambda m: m.atleast_1d(1.0),
    lambda m: m.atleast_2d([1, 2]),
    lambda m: m.meshgrid([1, 2], m.zeros(2)),
    lambda m: m.meshgrid(m.zeros(2), True),
])
def test_bad_cast_cases_are_type_errors(call_):
    with pytest.raises(TypeError):
        call_(mx)


@cmlx_only
def test_broadcast_shapes_non_shapes_are_value_errors():
    for bad in [(2, 3), ((1, 2.0),), ("ab",)]:
        with pytest.raises(ValueError, match="Expects a sequence of shapes"):
            mx.broadcast_shapes(*bad)


def test_error_messages():
    with pytest.raises(ValueError, match=r"\[reshape\] Cannot reshape array of size 6 into shape \(4,1\)"):
        mx.reshape(mx.zeros((2, 3)), (4, -1))
    with pytest.raises(ValueError, match=r"\[concatenate\] No arrays provided for concatenation"):
        mx.concatenate([])
    with pytest.raises(ValueError, match=r"\[stack\] No arrays provided for stacking"):
        mx.stack([])
    with pytest.raises(TypeError, match=r"^concatenate\(\): incompatible function arguments"):
        mx.concatenate([mx.zeros(2), 1.0])
    with pytest.raises(TypeError, match=r"1\. transpose\(a: array, /, axes: Sequence\[int\] \| None"):
        mx.transpose(mx.zeros((2, 3)), 0)


# ------------------------------------------------------------ dtypes against MLX


def _oracle_cases():
    x = sample("int8", (2, 3), seed=14)
    return [
        ("concatenate promotes", lambda m, a: m.concatenate([a, m.ones((1, 3))]), [A(x, "int8")]),
        ("concatenate int/uint", lambda m, a: m.concatenate([a, m.ones((1, 3), m.uint8)]), [A(x, "int8")]),
        ("stack promotes", lambda m, a: m.stack([a, m.ones((2, 3), m.float16)]), [A(x, "int8")]),
        ("kron dtypes", lambda m, a: m.kron(a, m.ones((2,), m.float16)), [A(x, "int8")]),
        ("outer dtypes", lambda m, a: m.outer(a, m.ones((2,), m.int32)), [A(x, "int8")]),
        ("inner dtypes", lambda m, a: m.inner(a, m.ones((3,), m.float16)), [A(x, "int8")]),
        ("trace int8", lambda m, a: m.trace(a), [A(x, "int8")]),
        ("trace dtype", lambda m, a: m.trace(a, dtype=m.float16), [A(x, "int8")]),
        ("trace bool", lambda m, a: m.trace(a), [A(x > 0, "bool_")]),
        ("diff bool", lambda m, a: m.diff(a), [A(x > 0, "bool_")]),
        ("diff uint8", lambda m, a: m.diff(a), [A(x.astype(np.uint8), "uint8")]),
        ("pad float value int", lambda m, a: m.pad(a, 1, constant_values=2.5), [A(x, "int8")]),
        ("pad edge", lambda m, a: m.pad(a, ((1, 0), (0, 2)), "edge"), [A(x, "int8")]),
        ("pad symmetric", lambda m, a: m.pad(a, [(2, 2)], "symmetric"), [A(x, "int8")]),
        ("roll neg", lambda m, a: m.roll(a, -7, 1), [A(x, "int8")]),
        ("tile long reps", lambda m, a: m.tile(a, (2, 1, 1, 2)), [A(x, "int8")]),
        ("repeat None", lambda m, a: m.repeat(a, 2, None), [A(x, "int8")]),
        ("windows", lambda m: [m.bartlett(5), m.blackman(5), m.hamming(5), m.hanning(5)], []),
        ("window 1", lambda m: [m.bartlett(1), m.blackman(1), m.hamming(1), m.hanning(1)], []),
        ("meshgrid dtypes", lambda m, a: m.meshgrid(m.flatten(a), m.arange(2)), [A(x, "int8")]),
        ("as_strided", lambda m, a: m.as_strided(a, (2, 2), (3, 1), 1), [A(x, "int8")]),
        ("view bool", lambda m, a: m.view(a, m.bool_), [A(x, "int8")]),
        ("view bf16", lambda m, a: m.view(a, m.bfloat16), [A(x.astype(np.float32), "float32")]),
        ("unflatten", lambda m, a: m.unflatten(a, 1, [3, -1]), [A(x, "int8")]),
        ("contiguous", lambda m, a: m.contiguous(m.transpose(a), True), [A(x, "int8")]),
        ("squeeze all", lambda m, a: m.squeeze(m.reshape(a, (1, 2, 1, 3))), [A(x, "int8")]),
        ("split list", lambda m, a: m.split(a, [1], 1), [A(x, "int8")]),
        ("unstack", lambda m, a: m.unstack(a, axis=-1), [A(x, "int8")]),
        ("diag k", lambda m, a: m.diag(m.flatten(a), 2), [A(x, "int8")]),
        ("tril k", lambda m, a: m.tril(a, -1), [A(x, "int8")]),
        ("atleast", lambda m, a: m.atleast_3d(a, m.flatten(a)), [A(x, "int8")]),
        ("broadcast_arrays", lambda m, a: m.broadcast_arrays(a, m.zeros((4, 1, 1))), [A(x, "int8")]),
    ]


@needs_oracle
@pytest.mark.parametrize("i", range(len(_oracle_cases())))
def test_same_as_mlx(i):
    label, fn, args = _oracle_cases()[i]
    sub, ref = both(fn, *args)
    assert_same_as_oracle(sub, ref, msg=label)


def test_overlapping_as_strided_view_feeds_kernels_correctly():
    # (3,3) with element strides (2,2) spans 9 slots of a 10-element buffer
    # but overlaps itself: kernels must not treat it as one dense run.
    base = np.arange(10, dtype=np.float32)
    expect = np.lib.stride_tricks.as_strided(base, (3, 3), (8, 8))
    v = mx.as_strided(mx.array(base), (3, 3), (2, 2))
    np.testing.assert_allclose(np.array(v + 1), expect + 1)
    np.testing.assert_allclose(np.array(mx.exp(v)), np.exp(expect), rtol=1e-6)
    np.testing.assert_allclose(np.array(mx.sum(v, axis=0)), expect.sum(axis=0))
