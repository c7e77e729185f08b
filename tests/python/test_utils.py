"""cmlx.utils: the tree helpers of mlx.utils (MLX 0.32).

Each check has a fixed expectation and, where real MLX is importable, is
run through mlx.utils as well: results (or exception type and message)
must agree.
"""

import importlib
from collections import namedtuple

import numpy as np
import pytest

from conftest import SUBJECT_NAME, mlx_ref, mx

utils = importlib.import_module(SUBJECT_NAME.split(".")[0] + ".utils")
ref_utils = importlib.import_module("mlx.utils") if mlx_ref is not None else None

NT = namedtuple("NT", "x y")


class D(dict):
    pass


def tree():
    return {"a": [1, (2, 3)], "b": {"c": 4, "d": None}, "e": NT(5, 6), "f": D(g=7), "h": [], "i": {}, "j": ()}


def outcome(fn, mod):
    try:
        return ("ok", fn(mod))
    except Exception as e:  # compared by type and message
        return ("raise", type(e), str(e))


def check(fn, expected):
    got = outcome(fn, utils)
    assert got == expected, got
    if ref_utils is not None and ref_utils is not utils:
        assert outcome(fn, ref_utils) == expected


FLAT = [("a.0", 1), ("a.1.0", 2), ("a.1.1", 3), ("b.c", 4), ("b.d", None), ("e.0", 5), ("e.1", 6), ("f.g", 7)]


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda u: u.tree_flatten(tree()), FLAT),
        (lambda u: u.tree_flatten(tree(), prefix=".p"), [("p." + k, v) for k, v in FLAT]),
        (lambda u: u.tree_flatten(tree(), prefix="p"), [("." + k, v) for k, v in FLAT]),
        (lambda u: u.tree_flatten([[[0]]]), [("0.0.0", 0)]),
        (lambda u: u.tree_flatten([[[0]]], prefix=".hello"), [("hello.0.0.0", 0)]),
        (lambda u: u.tree_flatten(5), [("", 5)]),
        (lambda u: u.tree_flatten([]), []),
        (lambda u: u.tree_flatten({"a": {"b": 1}}, destination={}), {"a.b": 1}),
        (lambda u: u.tree_flatten({"a": 1}, destination=[("z", 0)]), [("z", 0), ("a", 1)]),
        (lambda u: u.tree_flatten(tree(), is_leaf=lambda x: isinstance(x, tuple)),
         [("a.0", 1), ("a.1", (2, 3)), ("b.c", 4), ("b.d", None), ("e", NT(5, 6)), ("f.g", 7), ("j", ())]),
        (lambda u: u.tree_flatten({1: 2, (1, 2): 3}), [("1", 2), ("(1, 2)", 3)]),
    ],
)
def test_tree_flatten(fn, expected):
    check(fn, ("ok", expected))


def test_tree_flatten_errors_and_arrays():
    check(lambda u: u.tree_flatten({"a": 1}, destination=set()),
          ("raise", ValueError, "Destination should be either a list or a dictionary or None"))
    a = mx.ones(2)
    assert utils.tree_flatten({"w": [a]})[0][1] is a


@pytest.mark.parametrize(
    "flat, expected",
    [
        ([("hello.world", 42)], {"hello": {"world": 42}}),
        ({"hello.world": 42}, {"hello": {"world": 42}}),
        ([("0", 1), ("1", 2)], [1, 2]),
        ([("a.0", 1), ("a.1", 2), ("b.0.c", 3)], {"a": [1, 2], "b": [{"c": 3}]}),
        ([("a.1", 1), ("a.0", 2)], {"a": [2, 1]}),
        ([("a.0", 1), ("a.2", 2)], {"a": [1, {}, 2]}),
        ([("a.0", 1), ("a.x", 2)], {"a": {"0": 1, "x": 2}}),
        ([("", 1)], 1),
        ([], []),
        ({}, []),
        ([("a", 1), ("a.b", 2)], {"a": {"": 1, "b": 2}}),
        ([("10", 1), ("2", 2)], [{}, {}, 2, {}, {}, {}, {}, {}, {}, {}, 1]),
        ([("01", 1)], [{}, 1]),
    ],
)
def test_tree_unflatten(flat, expected):
    check(lambda u: u.tree_unflatten(flat), ("ok", expected))


def test_flatten_unflatten_round_trip():
    t = {"layers": [{"w": 1, "b": 2}, {"w": 3, "b": 4}], "head": {"out": 5}}
    assert utils.tree_unflatten(utils.tree_flatten(t)) == t


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda u: u.tree_map(lambda x: None if x is None else x * 10, tree()),
         {"a": [10, (20, 30)], "b": {"c": 40, "d": None}, "e": NT(50, 60), "f": {"g": 70}, "h": [], "i": {},
          "j": ()}),
        (lambda u: u.tree_map(lambda x, y: (x, y), {"a": 1, "b": [2, 3]}, {"a": 10, "b": [20, 30], "c": 5}),
         {"a": (1, 10), "b": [(2, 20), (3, 30)]}),
        (lambda u: u.tree_map(lambda x, y: (x, y), [1, 2], (3, 4)), [(1, 3), (2, 4)]),
        (lambda u: u.tree_map(lambda x, y: y, [1, 2], [3, 4, 5]), [3, 4]),
        (lambda u: u.tree_map(lambda x: x, None), None),
        (lambda u: u.tree_map(lambda x: len(x), {"a": [1, 2], "b": ([3],)}, is_leaf=lambda x: isinstance(x, list)),
         {"a": 2, "b": (1,)}),
        (lambda u: u.tree_map_with_path(lambda p, x: p, tree()),
         {"a": ["a.0", ("a.1.0", "a.1.1")], "b": {"c": "b.c", "d": "b.d"}, "e": NT("e.0", "e.1"),
          "f": {"g": "f.g"}, "h": [], "i": {}, "j": ()}),
        (lambda u: u.tree_map_with_path(lambda p, x: p, {"a": [1]}, path="root"), {"a": ["root.a.0"]}),
        (lambda u: u.tree_map_with_path(lambda p, x: p, 5), None),
        (lambda u: u.tree_map_with_path(lambda p, x: p, [5], path=""), ["0"]),
        (lambda u: u.tree_map_with_path(lambda p, x, y: (p, x, y), {"a": 1}, {"a": 2}), {"a": ("a", 1, 2)}),
        (lambda u: u.tree_map_with_path(lambda p, x: p, {"a": [1, {"b": 2}]},
                                        is_leaf=lambda x: isinstance(x, dict) and "b" in x),
         {"a": ["a.0", "a.1"]}),
    ],
)
def test_tree_map(fn, expected):
    check(fn, ("ok", expected))


@pytest.mark.parametrize(
    "fn, exc",
    [
        (lambda u: u.tree_map(lambda x, y: x, {"a": 1, "b": [2, 3]}, {"a": 10}), KeyError),
        (lambda u: u.tree_map(lambda x, y: x, {"a": 1, "b": [2, 3]}, {"a": 10, "b": [1]}), IndexError),
        (lambda u: u.tree_map(lambda x, y: x, {"a": 1, "b": [2, 3]}, {"a": 10, "b": 5}), TypeError),
    ],
)
def test_tree_map_mismatched_trees(fn, exc):
    with pytest.raises(exc):
        fn(utils)


def test_tree_map_arrays():
    params = {"w": mx.array([1.0, 2.0]), "b": [mx.array(3.0)]}
    sq = utils.tree_map(lambda x: x * x, params)
    np.testing.assert_array_equal(np.array(sq["w"]), [1.0, 4.0])
    assert sq["b"][0].item() == 9.0


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, {"a": [1, 2, 3], "b": [4, 5]}, 0), 15),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, {"a": [1, 2, 3], "b": [4, 5]}), 15),
        (lambda u: u.tree_reduce(lambda acc, x: acc + [x], {"a": [1, 2, 3], "b": (4, 5)}, []), [1, 2, 3, 4, 5]),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, []), None),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, [], 7), 7),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, 5), 5),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, 5, 1), 6),
        (lambda u: u.tree_reduce(lambda acc, x: acc + x, {"a": None, "b": 3}), 3),
        (lambda u: u.tree_reduce(lambda acc, x: acc + len(x), {"a": [1, 2], "b": [3]}, 0,
                                 is_leaf=lambda x: isinstance(x, list)), 3),
    ],
)
def test_tree_reduce(fn, expected):
    check(fn, ("ok", expected))


SAME = "Trees contain elements at the same locations but no merge function was provided"


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda u: u.tree_merge({"a": 1}, {"a": 2}, merge_fn=lambda a, b: a + b), ("ok", {"a": 3})),
        (lambda u: u.tree_merge([1, None, 3], [None, 2, None]), ("ok", [1, 2, 3])),
        (lambda u: u.tree_merge([1], [None, 3]), ("ok", [1, 3])),
        (lambda u: u.tree_merge({"a": []}, {"a": {"b": 1}}), ("ok", {"a": {"b": 1}})),
        (lambda u: u.tree_merge({"a": {}}, {"a": [1]}), ("ok", {"a": [1]})),
        (lambda u: u.tree_merge((1, None), (None, 2)), ("ok", (1, 2))),
        (lambda u: u.tree_merge(NT(1, None), NT(None, 2)), ("ok", NT(1, 2))),
        (lambda u: u.tree_merge((1,), [None, 2]), ("ok", (1, 2))),
        (lambda u: u.tree_merge(None, 5), ("ok", 5)),
        (lambda u: u.tree_merge(0, None), ("ok", 0)),
        (lambda u: u.tree_merge({}, {}), ("ok", {})),
        (lambda u: u.tree_merge([], []), ("ok", [])),
        (lambda u: u.tree_merge({}, [1]), ("ok", [1])),
        (lambda u: u.tree_merge([], 5), ("ok", 5)),
        (lambda u: u.tree_merge(1, 2, merge_fn=max), ("ok", 2)),
        (lambda u: u.tree_merge({"a": 1}, {"a": 2}), ("raise", ValueError, SAME)),
        (lambda u: u.tree_merge([1, 2], [3]), ("raise", ValueError, SAME)),
        (lambda u: u.tree_merge(None, None), ("raise", ValueError, SAME)),
        (lambda u: u.tree_merge(None, []), ("raise", ValueError, SAME)),
        (lambda u: u.tree_merge({"a": [1]}, {"a": {"b": 1}}), ("raise", ValueError, SAME)),
        (lambda u: u.tree_merge({}, []), ("raise", ValueError, "Cannot merge dict with list")),
        (lambda u: u.tree_merge((), []), ("raise", ValueError, "Cannot merge tuple with list")),
    ],
)
def test_tree_merge(fn, expected):
    check(fn, expected)


def test_tree_merge_dicts():
    # MLX's key order comes from a set; compare as dicts
    for u in [utils] + ([ref_utils] if ref_utils is not None else []):
        r = u.tree_merge({"a": 1, "b": {"c": 2}}, {"b": {"d": 3}, "e": 4})
        assert r == {"a": 1, "b": {"c": 2, "d": 3}, "e": 4}
        assert type(u.tree_merge(D(a=1), D(b=2))) is dict


def test_utils_signatures_match_mlx():
    import inspect

    for name in ("tree_flatten", "tree_unflatten", "tree_map", "tree_map_with_path", "tree_reduce", "tree_merge"):
        fn = getattr(utils, name)
        if ref_utils is not None:
            ours = [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
            theirs = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(ref_utils, name)).parameters.values()]
            assert ours == theirs, name
