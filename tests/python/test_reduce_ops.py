"""Reductions of cmlx.core as Python functions and array methods: sum, prod,
max, min, mean, var, std, all, any, argmax, argmin, logsumexp, median,
count_nonzero, softmax, and the comparisons isclose, allclose and
array_equal.

Values are checked against NumPy across dtypes, axis forms (None, int,
negative, list, tuple, empty), keepdims, 0-d/empty and non-contiguous
inputs; accepted call forms, result dtypes and error types against real MLX
where it is importable."""

import numpy as np
import pytest

from conftest import (A, DTYPES, INTS, LAYOUTS, Raised, SUBJECT_IS_MLX, assert_call_forms_parse,
                      assert_displayed_signature, assert_same_as_oracle, assert_values, both,
                      call_form_pattern, dname, ev, layout_input, make_layout, mlx_ref, mx,
                      needs_oracle, npv, sample, to_mx)


# ------------------------------------------------------------ call forms


def _samples(m):
    a2 = m.arange(6, dtype=m.float32).reshape(2, 3)
    R = [("a", a2), ("axis", 0), ("keepdims", False)]
    s = {n: R for n in "sum prod max min mean all any logsumexp median argmax argmin".split()}
    s["var"] = R + [("ddof", 1)]
    s["std"] = R + [("ddof", 1)]
    s["count_nonzero"] = [("a", a2), ("axis", 0)]
    s["softmax"] = [("a", a2), ("axis", 0)]
    s["isclose"] = [("a", a2), ("b", a2), ("rtol", 1e-5), ("atol", 1e-8)]
    s["allclose"] = [("a", a2), ("b", a2), ("rtol", 1e-5), ("atol", 1e-8)]
    s["array_equal"] = [("a", a2), ("b", a2)]
    return s


NAMES = sorted(_samples(mx).keys())
KW_ONLY = {"count_nonzero": [("keepdims", True)], "softmax": [("precise", True)],
           "isclose": [("equal_nan", False)], "allclose": [("equal_nan", False)],
           "array_equal": [("equal_nan", True)], "var": [("correction", 1)],
           "std": [("correction", 1)]}


def _pattern(m, name):
    return call_form_pattern(m, getattr(m, name), _samples(m)[name], KW_ONLY.get(name, []))


@pytest.mark.parametrize("name", NAMES)
def test_call_forms_parse(name):
    assert_call_forms_parse(_pattern(mx, name), len(_samples(mx)[name]), len(KW_ONLY.get(name, [])))


@needs_oracle
@pytest.mark.parametrize("name", NAMES)
def test_call_forms_match_mlx(name):
    assert _pattern(mx, name) == _pattern(mlx_ref, name)


@pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's signature table")
@pytest.mark.parametrize("name", NAMES)
def test_displayed_signature(name):
    assert_displayed_signature(name)


# ------------------------------------------------------------ values


def _sum_dtype(name):
    return {"bool_": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
            "uint16": "uint32"}.get(name, name)


def _float_dtype(name):
    return name if name in ("float16", "bfloat16", "float32", "float64", "complex64") else "float32"


def _ref(x, name):
    """x widened for a float64/complex128 NumPy reference."""
    return x.astype(np.complex128 if name == "complex64" else np.float64)


AXES = [None, 0, 1, -1, -2, (0, 2), [2, 0], (), [0, 1, 2], (-1, -3)]


def _np_axis(ax):
    return tuple(ax) if isinstance(ax, (list, tuple)) else ax


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_prod_max_min_all_any(name, keepdims):
    x = sample(name, (3, 4, 2), lo=-2, hi=2, seed=1)
    a = to_mx(x, name)
    for ax in AXES:
        nax = _np_axis(ax)
        label = f"{name} axis={ax} keepdims={keepdims}"
        r = mx.sum(a, ax, keepdims)
        sd = _sum_dtype(name) if ax != () else name
        assert dname(r) == sd, label
        if sd in INTS:
            e = np.sum(x.astype(np.int64), axis=nax, keepdims=keepdims)
        else:
            e = np.sum(_ref(x, name), axis=nax, keepdims=keepdims)
        tol = {"float16": 2e-2, "bfloat16": 5e-2}.get(sd)
        assert_values(npv(r), e, sd, rtol=tol, atol=tol, msg="sum " + label)
        r = mx.prod(a, axis=ax, keepdims=keepdims)
        assert dname(r) == sd, label
        if sd in INTS:
            e = np.prod(x.astype(np.int64), axis=nax, keepdims=keepdims)
        else:
            e = np.prod(_ref(x, name), axis=nax, keepdims=keepdims)
        tol = {"float16": 2e-2, "bfloat16": 1e-1}.get(sd)
        assert_values(npv(r), e, sd, rtol=tol, atol=tol, msg="prod " + label)
        if name != "complex64":
            for f, nf in [(mx.max, np.max), (mx.min, np.min)]:
                r = f(a, ax, keepdims=keepdims)
                assert dname(r) == name, label
                assert_values(npv(r), nf(x, axis=nax, keepdims=keepdims), name, msg=label)
        for f, nf in [(mx.all, np.all), (mx.any, np.any)]:
            r = f(a, ax, keepdims)
            assert dname(r) == "bool_", label
            assert_values(npv(r), nf(x != 0, axis=nax, keepdims=keepdims), "bool_", msg=label)


@pytest.mark.parametrize("name", DTYPES)
def test_mean_var_std_logsumexp_median(name):
    x = sample(name, (4, 3, 5), lo=-2, hi=2, seed=2)
    a = to_mx(x, name)
    fd = _float_dtype(name)
    tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(fd)
    xr = _ref(x, name)
    for ax in [None, 1, -1, (0, 2), [1]]:
        nax = _np_axis(ax)
        for kd in (False, True):
            label = f"{name} axis={ax} keepdims={kd}"
            r = mx.mean(a, ax, kd)
            assert dname(r) == fd, label
            assert_values(npv(r), np.mean(xr, axis=nax, keepdims=kd), fd, rtol=tol, atol=tol,
                          msg="mean " + label)
            if name == "complex64":
                continue
            vd = fd
            for ddof in (0, 1):
                r = mx.var(a, ax, kd, ddof)
                assert dname(r) == vd, label
                assert_values(npv(r), np.var(xr, axis=nax, keepdims=kd, ddof=ddof), vd,
                              rtol=tol, atol=tol, msg="var " + label)
                r = mx.std(a, axis=ax, keepdims=kd, ddof=ddof)
                assert_values(npv(r), np.std(xr, axis=nax, keepdims=kd, ddof=ddof), vd,
                              rtol=tol, atol=tol, msg="std " + label)
            r = mx.median(a, ax, kd)
            assert dname(r) == fd, label
            assert_values(npv(r), np.median(xr, axis=nax, keepdims=kd), fd, rtol=tol, atol=tol,
                          msg="median " + label)
            if SUBJECT_IS_MLX and (name == "bool_" or name.startswith("uint")):
                # MLX subtracts the max in the input dtype off the last axis
                # (unsigned wraps to inf); cmlx computes it in float
                continue
            r = mx.logsumexp(a, ax, kd)
            assert dname(r) == fd, label
            e = np.log(np.sum(np.exp(xr), axis=nax, keepdims=kd))
            assert_values(npv(r), e, fd, rtol=tol, atol=tol, msg="logsumexp " + label)


@pytest.mark.parametrize("name", [n for n in DTYPES if n != "complex64"])
def test_argmax_argmin(name):
    x = sample(name, (4, 5), lo=-50, hi=50, seed=3)
    a = to_mx(x, name)
    for ax in [None, 0, 1, -1, -2]:
        for kd in (False, True):
            for f, nf in [(mx.argmax, np.argmax), (mx.argmin, np.argmin)]:
                r = f(a, ax, kd)
                assert dname(r) == "uint32"
                e = nf(x, axis=ax, keepdims=kd) if ax is not None else \
                    np.reshape(nf(x), (1, 1) if kd else ())
                assert_values(npv(r), e, "uint32", msg=f"{name} {ax} {kd}")


@pytest.mark.parametrize("name", DTYPES)
def test_count_nonzero(name):
    x = sample(name, (3, 4), lo=-1, hi=1, seed=4)
    a = to_mx(x, name)
    for ax in [None, 0, -1, (0, 1), []]:
        for kd in (False, True):
            r = mx.count_nonzero(a, ax, keepdims=kd)
            assert dname(r) == "int32"
            nax = _np_axis(ax)
            e = np.count_nonzero(x, axis=nax, keepdims=kd) if nax != () else (x != 0).astype(np.int32)
            assert_values(npv(r), e, "int32", msg=f"{ax} {kd}")


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
def test_softmax(name):
    x = sample(name, (3, 4, 2), lo=-4, hi=4, seed=5)
    a = to_mx(x, name)
    fd = _float_dtype(name)
    xr = x.astype(np.float64)
    tol = {"float16": 5e-3, "bfloat16": 3e-2}.get(fd)
    for ax in [None, 0, -1, (0, 2), [1, 2]]:
        nax = _np_axis(ax)
        for precise in (False, True):
            r = mx.softmax(a, ax, precise=precise)
            assert dname(r) == fd and r.shape == x.shape
            ex = np.exp(xr - np.max(xr, axis=nax, keepdims=True))
            e = ex / np.sum(ex, axis=nax, keepdims=True)
            assert_values(npv(r), e, fd, rtol=tol, atol=tol, msg=f"{ax} {precise}")


def test_softmax_of_integers():
    # MLX: the last axis alone goes through the float kernel; other axes
    # compute in the input dtype (an integer result)
    x = np.array([[1, 0, 2], [3, 1, 0]], dtype=np.int32)
    a = mx.array(x)
    r = mx.softmax(a, -1)
    assert dname(r) == "float32"
    ex = np.exp(x - x.max(-1, keepdims=True))
    assert_values(npv(r), ex / ex.sum(-1, keepdims=True), "float32")
    assert dname(mx.softmax(mx.array([True, False]))) == "float32"
    assert dname(mx.softmax(a, 0)) == "int32" and dname(mx.softmax(a)) == "int32"


def test_var_std_ddof_and_correction():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.array(x)
    assert np.isclose(mx.var(a, ddof=1).item(), np.var(x, ddof=1))
    assert np.isclose(mx.var(a, correction=1).item(), np.var(x, ddof=1))
    assert np.isclose(mx.std(a, 0, False, 2).tolist()[0], np.std(x, 0, ddof=2)[0])
    assert np.isclose(mx.var(a, ddof=1, correction=0).item(), np.var(x))  # correction wins
    assert np.isclose(a.var(correction=1).item(), np.var(x, ddof=1))
    r = mx.var(a, axis=1, ddof=4)  # n - ddof == 0: inf/nan as MLX
    assert r.shape == (3,)
    r = mx.var(mx.array([1.0, 2.0]), ddof=5)
    assert not np.isfinite(r.item())


def test_isclose_allclose_array_equal():
    x = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, -np.inf, 0.0], dtype=np.float32)
    y = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 1e-9], dtype=np.float32)
    a, b = mx.array(x), mx.array(y)
    for kw in [{}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3}]:
        r = mx.isclose(a, b, **kw)
        assert dname(r) == "bool_"
        assert npv(r).tolist() == np.isclose(x, y, **kw).tolist(), kw
        r = mx.allclose(mx.array(x[:2]), mx.array(y[:2]), **kw)
        assert r.shape == () and r.item() == np.allclose(x[:2], y[:2], **kw)
    assert mx.isclose(a, b, 1.0, 1.0).tolist() == np.isclose(x, y, 1.0, 1.0).tolist()
    assert mx.allclose(a, b).item() is False
    assert mx.isclose(mx.array([[1.0], [2.0]]), mx.array([1.0, 2.0])).shape == (2, 2)
    r = mx.isclose(mx.array([1, 2]), mx.array([1, 3]))
    assert r.tolist() == [True, False]
    assert mx.array_equal(a, a).item() is False  # NaN
    assert mx.array_equal(a, a, equal_nan=True).item() is True
    assert mx.array_equal(mx.array([1, 2]), mx.array([1.0, 2.0])).item() is True
    assert mx.array_equal(mx.array([1, 2]), mx.array([1, 2, 3])).item() is False
    assert mx.array_equal(1, 1).item() is True
    assert mx.array_equal(mx.array([2, 2]), 2).item() is False  # shapes differ
    assert mx.array_equal(mx.array(2.5), 2.5).item() is True


def test_isclose_equal_nan():
    x = np.array([1.0, np.nan, np.inf, np.nan], dtype=np.float32)
    y = np.array([1.0, np.nan, np.inf, 0.0], dtype=np.float32)
    a, b = mx.array(x), mx.array(y)
    r = mx.isclose(a, b, equal_nan=True)
    assert npv(r).tolist() == np.isclose(x, y, equal_nan=True).tolist()
    assert mx.allclose(a, a, equal_nan=True).item() is True
    assert mx.allclose(a, b, equal_nan=True).item() is False


# ------------------------------------------------------------ layouts


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["float32", "int16", "uint8", "bfloat16", "bool_"])
def test_layouts(layout, name):
    if SUBJECT_IS_MLX and layout.startswith("empty"):
        pytest.skip("MLX's full reductions of some empty arrays read garbage")
    x0 = make_layout(layout, lambda shape: sample(name, shape, lo=-3, hi=3, seed=6))
    a, x = layout_input(layout, x0, name)
    sd = _sum_dtype(name)
    xi = x.astype(np.int64) if sd in INTS else x.astype(np.float64)
    axes = [None] + list(range(x.ndim)) + ([(0, 1)] if x.ndim == 2 else [])
    tol = 0.05 if name == "bfloat16" else (1e-4 if name == "float32" else None)
    for ax in axes:
        assert_values(npv(mx.sum(a, ax)), np.sum(xi, axis=ax), sd, rtol=tol, atol=tol,
                      msg=f"{layout} sum {ax}")
        assert_values(npv(mx.any(a, ax)), np.any(x != 0, axis=ax), "bool_")
        assert_values(npv(mx.all(a, ax, True)), np.all(x != 0, axis=ax, keepdims=True), "bool_")
        if x.size:
            assert_values(npv(mx.max(a, ax)), np.max(x, axis=ax), name, msg=f"{layout} max {ax}")
            assert_values(npv(mx.min(a, ax)), np.min(x, axis=ax), name)
            fd = _float_dtype(name)
            assert_values(npv(mx.mean(a, ax)), np.mean(x.astype(np.float64), axis=ax), fd,
                          rtol=tol, atol=tol, msg=f"{layout} mean {ax}")
        if x.size and (ax is None or isinstance(ax, int)):
            assert_values(npv(mx.argmax(a, ax)), np.argmax(x, axis=ax), "uint32")


# ------------------------------------------------------------ 0-d and empty


def test_zero_dim_and_empty():
    s = mx.array(2.5)
    assert mx.sum(s).item() == 2.5 and mx.sum(s).shape == ()
    assert mx.sum(s, keepdims=True).shape == ()
    assert mx.max(s, ()).item() == 2.5
    assert mx.argmax(s).item() == 0
    assert mx.mean(s).item() == 2.5
    assert mx.var(s).item() == 0.0
    e = mx.zeros((0, 3))
    assert mx.sum(e).item() == 0.0
    assert mx.sum(e, 0).tolist() == [0.0, 0.0, 0.0]
    assert mx.sum(e, 1).shape == (0,)
    assert mx.prod(e).item() == 1.0
    assert mx.all(e).item() is True and mx.any(e).item() is False
    assert mx.count_nonzero(e).item() == 0
    assert np.isnan(mx.mean(e).item())
    assert mx.max(e, 1).shape == (0,)
    with pytest.raises(ValueError):
        ev(mx.max(e))
    with pytest.raises(ValueError):
        ev(mx.argmax(e))
    with pytest.raises(ValueError):
        ev(mx.logsumexp(e))
    x = mx.array([[1, 2], [3, 4]])
    r = mx.sum(x, [])
    assert r.tolist() == [[1, 2], [3, 4]] and dname(r) == "int32"
    assert dname(mx.all(x, [])) == "bool_"


# ------------------------------------------------------------ errors


ERROR_CASES = [
    ("sum axis", lambda m: m.sum(m.zeros((2, 3)), 2), IndexError),
    ("sum neg axis", lambda m: m.sum(m.zeros((2, 3)), -3), IndexError),
    ("sum dup", lambda m: m.sum(m.zeros((2, 3)), [0, 0]), ValueError),
    ("sum dup neg", lambda m: m.sum(m.zeros((2, 3)), [0, -2]), ValueError),
    ("sum float axis", lambda m: m.sum(m.zeros((2, 3)), 0.0), TypeError),
    ("sum keepdims int", lambda m: m.sum(m.zeros((2, 3)), keepdims=1), TypeError),
    ("sum scalar", lambda m: m.sum(1.0), TypeError),
    ("sum list", lambda m: m.sum([1, 2]), TypeError),
    ("sum numpy", lambda m: m.sum(np.ones(3)), TypeError),
    ("prod axis", lambda m: m.prod(m.zeros((2, 3)), (0, 5)), IndexError),
    ("max empty", lambda m: m.max(m.zeros((0,))), ValueError),
    ("min axis", lambda m: m.min(m.zeros((2, 3)), 9), IndexError),
    ("all axis", lambda m: m.all(m.zeros((2, 3)), 3), IndexError),
    ("argmax list", lambda m: m.argmax(m.zeros((2, 3)), [0]), TypeError),
    ("argmax axis", lambda m: m.argmax(m.zeros((2, 3)), 3), IndexError),
    ("argmin empty", lambda m: m.argmin(m.zeros((0, 2))), ValueError),
    ("mean axis", lambda m: m.mean(m.zeros((2, 3)), 3), IndexError),
    ("var axis", lambda m: m.var(m.zeros((2, 3)), 3), IndexError),
    ("std ddof float", lambda m: m.std(m.zeros((2, 3)), ddof=1.0), TypeError),
    ("median axis", lambda m: m.median(m.zeros((2, 3)), 3), IndexError),
    ("median dup", lambda m: m.median(m.zeros((2, 3)), [1, 1]), ValueError),
    ("logsumexp axis", lambda m: m.logsumexp(m.zeros((2, 3)), 3), IndexError),
    ("softmax axis", lambda m: m.softmax(m.zeros((2, 3)), 3), IndexError),
    ("softmax scalar", lambda m: m.softmax(1.0), TypeError),
    ("softmax precise pos", lambda m: m.softmax(m.zeros(2), 0, True), TypeError),
    ("count_nonzero axis", lambda m: m.count_nonzero(m.zeros((2, 3)), axis=3), IndexError),
    ("count_nonzero keepdims pos", lambda m: m.count_nonzero(m.zeros((2, 3)), 0, True), TypeError),
    ("isclose scalar", lambda m: m.isclose(m.zeros(2), 1.0), TypeError),
    ("isclose list", lambda m: m.isclose(m.zeros(2), [1.0]), TypeError),
    ("isclose shapes", lambda m: m.isclose(m.zeros(2), m.zeros(3)), ValueError),
    ("allclose int", lambda m: m.allclose(m.zeros(2), 2), TypeError),
    ("allclose equal_nan pos", lambda m: m.allclose(m.zeros(2), m.zeros(2), 1e-5, 1e-8, True), TypeError),
    ("array_equal list", lambda m: m.array_equal(m.zeros(2), [1.0]), ValueError),
    ("array_equal equal_nan pos", lambda m: m.array_equal(m.zeros(2), m.zeros(2), True), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    label, fn, exc = ERROR_CASES[i]
    sub, ref = both(lambda m: fn(m))
    assert isinstance(sub, Raised), f"{label}: no error, got {sub}"
    assert sub.type is exc, f"{label}: {sub!r}, expected {exc.__name__}"
    if ref is not None:
        assert_same_as_oracle(sub, ref, msg=label)


def test_error_messages():
    a = mx.zeros((2, 3))
    with pytest.raises(IndexError, match="Invalid axis 2 for array with 2 dimensions"):
        mx.sum(a, 2)
    with pytest.raises(ValueError, match="Duplicate axes detected in reduction"):
        mx.sum(a, (1, -1))
    with pytest.raises(IndexError, match=r"\[mean\] axis 3 is out of bounds"):
        mx.mean(a, 3)
    with pytest.raises(TypeError, match=r"^sum\(\): incompatible function arguments"):
        mx.sum(a, 0.5)


# ------------------------------------------------------------ methods


def test_methods_match_functions():
    x = sample("float32", (3, 4), seed=7)
    a = mx.array(x)
    for name in ["sum", "prod", "max", "min", "mean", "all", "any", "logsumexp"]:
        m, f = getattr(a, name), getattr(mx, name)
        for args, kw in [((), {}), ((0,), {}), ((1, True), {}), (((0, 1),), {}),
                         ((), {"axis": [-1], "keepdims": True})]:
            assert_values(npv(m(*args, **kw)), npv(f(a, *args, **kw)), dname(f(a, *args, **kw)),
                          msg=f"{name} {args} {kw}")
    for name in ["argmax", "argmin"]:
        assert npv(getattr(a, name)(1)).tolist() == npv(getattr(mx, name)(a, 1)).tolist()
        assert getattr(a, name)(keepdims=True).shape == (1, 1)
    assert np.isclose(a.var(0, False, 1).tolist()[0], mx.var(a, 0, ddof=1).tolist()[0])
    assert np.isclose(a.std(ddof=1).item(), mx.std(a, ddof=1).item())
    with pytest.raises(TypeError):
        a.argmax([0])


# ------------------------------------------------------------ dtypes against MLX


def _oracle_cases():
    xs = {n: sample(n, (3, 4), lo=-3, hi=3, seed=8) for n in DTYPES}
    cases = []
    for n in DTYPES:
        for op in ["sum", "prod", "mean", "logsumexp", "all", "any", "count_nonzero"]:
            cases.append((f"{op} {n}", lambda m, a, op=op: getattr(m, op)(a, 1), [A(xs[n], n)]))
        if n != "complex64":
            for op in ["max", "argmin", "var", "std", "median", "softmax"]:
                cases.append((f"{op} {n}", lambda m, a, op=op: getattr(m, op)(a, -1),
                              [A(xs[n], n)]))
    cases += [
        ("var complex", lambda m, a: m.var(a), [A(xs["complex64"], "complex64")]),
        ("isclose mixed", lambda m, a: m.isclose(a, m.ones((3, 4), m.float16)), [A(xs["int8"], "int8")]),
        ("array_equal mixed", lambda m, a: m.array_equal(a, a.astype(m.float32)), [A(xs["int8"], "int8")]),
        ("max nan", lambda m: m.max(m.array([1.0, float("nan"), 3.0])), []),
        ("argmax nan", lambda m: m.argmax(m.array([1.0, float("nan"), 3.0])), []),
        ("logsumexp inf", lambda m: m.logsumexp(m.array([float("inf"), 1.0])), []),
        ("logsumexp -inf", lambda m: m.logsumexp(m.array([-float("inf")] * 2)), []),
        ("median even", lambda m: m.median(m.array([4, 1, 3, 2])), []),
        ("median nan", lambda m: m.median(m.array([1.0, float("nan"), 3.0])), []),
        ("sum uint32 wrap", lambda m: m.sum(m.array([2 ** 32 - 1, 2], m.uint32)), []),
        ("sum int8 no wrap", lambda m: m.sum(m.array([100, 100], m.int8)), []),
        ("mean empty", lambda m: m.mean(m.zeros((0,))), []),
        ("softmax -inf", lambda m: m.softmax(m.array([-float("inf"), 0.0])), []),
        ("softmax int axis 0", lambda m, a: m.softmax(a, 0), [A(xs["int32"], "int32")]),
        ("softmax int8 all", lambda m, a: m.softmax(a), [A(xs["int8"], "int8")]),
        ("softmax bool", lambda m, a: m.softmax(a, (0, 1), precise=True), [A(xs["bool_"], "bool_")]),
    ]
    return cases


@needs_oracle
@pytest.mark.parametrize("i", range(len(_oracle_cases())))
def test_same_as_mlx(i):
    label, fn, args = _oracle_cases()[i]
    sub, ref = both(fn, *args)
    assert_same_as_oracle(sub, ref, msg=label, rtol=5e-2 if "16" in label else None,
                          atol=5e-2 if "16" in label else None)
