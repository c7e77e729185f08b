"""Helpers for Python trees: nested lists, tuples and dicts.

The functions mirror ``mlx.utils`` (MLX 0.32): ``tree_map``,
``tree_map_with_path``, ``tree_flatten``, ``tree_unflatten``, ``tree_reduce``
and ``tree_merge``.  Lists and tuples keep their type (namedtuples included);
dicts, subclasses too, come back as plain dicts.  Anything else is a leaf
unless ``is_leaf`` says where to stop earlier.
"""

from itertools import zip_longest
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__all__ = [
    "tree_map",
    "tree_map_with_path",
    "tree_flatten",
    "tree_unflatten",
    "tree_reduce",
    "tree_merge",
]


def _is_stop(tree, is_leaf):
    return is_leaf is not None and is_leaf(tree)


def _rebuild(like, children):
    """A list/tuple of like's type holding children (namedtuples take them
    as positional fields)."""
    kind = type(like)
    if hasattr(like, "_fields"):
        return kind(*children)
    return kind(children)


def tree_map(fn: Callable, tree: Any, *rest: Any, is_leaf: Optional[Callable] = None) -> Any:
    """Applies ``fn`` to the leaves of the Python tree ``tree`` and returns a
    new tree with the results.

    Each tree in ``rest`` must contain ``tree`` (it may be larger): its
    matching nodes are passed to ``fn`` as extra positional arguments, as in
    :func:`itertools.starmap`.  ``is_leaf`` decides what counts as a leaf, as
    in :func:`tree_flatten`.

    .. code-block:: python

        tree_map(lambda x: x * x, {"w": mx.array([1, 2]), "b": [mx.array(3)]})
    """
    if not _is_stop(tree, is_leaf):
        if isinstance(tree, (list, tuple)):
            return _rebuild(
                tree,
                [tree_map(fn, child, *(r[i] for r in rest), is_leaf=is_leaf) for i, child in enumerate(tree)],
            )
        if isinstance(tree, dict):
            return {k: tree_map(fn, child, *(r[k] for r in rest), is_leaf=is_leaf) for k, child in tree.items()}
    return fn(tree, *rest)


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def tree_map_with_path(
    fn: Callable,
    tree: Any,
    *rest: Any,
    is_leaf: Optional[Callable] = None,
    path: Optional[Any] = None,
) -> Any:
    """Like :func:`tree_map`, but ``fn`` receives the leaf's path (keys joined
    with dots, e.g. ``"model.0.w"``) before the leaves.  ``path`` is a prefix
    for every path (a leaf at the root gets ``path`` itself)."""
    if not _is_stop(tree, is_leaf):
        if isinstance(tree, (list, tuple)):
            return _rebuild(
                tree,
                [
                    tree_map_with_path(fn, child, *(r[i] for r in rest), is_leaf=is_leaf, path=_join(path, i))
                    for i, child in enumerate(tree)
                ],
            )
        if isinstance(tree, dict):
            return {
                k: tree_map_with_path(fn, child, *(r[k] for r in rest), is_leaf=is_leaf, path=_join(path, k))
                for k, child in tree.items()
            }
    return fn(path, tree, *rest)


def _flatten_into(tree, key, is_leaf, add):
    if not _is_stop(tree, is_leaf):
        if isinstance(tree, (list, tuple)):
            for i, child in enumerate(tree):
                _flatten_into(child, f"{key}.{i}", is_leaf, add)
            return
        if isinstance(tree, dict):
            for k, child in tree.items():
                _flatten_into(child, f"{key}.{k}", is_leaf, add)
            return
    add(key[1:], tree)


def tree_flatten(
    tree: Any,
    prefix: str = "",
    is_leaf: Optional[Callable] = None,
    destination: Optional[Union[List[Tuple[str, Any]], Dict[str, Any]]] = None,
) -> Union[List[Tuple[str, Any]], Dict[str, Any]]:
    """Flattens a Python tree to a list of ``(key, value)`` tuples.

    Keys join the path with dots: ``tree_flatten([[[0]]])`` is
    ``[("0.0.0", 0)]`` and ``tree_flatten({"a": {"b": 1}})`` is
    ``[("a.b", 1)]``.  Empty containers contribute nothing.

    Args:
        tree: the tree to flatten.
        prefix: a prefix for the keys; its first character is dropped
            (``prefix=".hello"`` gives keys ``"hello.0..."``).
        is_leaf: optional predicate marking leaves.
        destination: a list to append the pairs to or a dict to store them
            in (returned); a new list when ``None``.
    """
    if destination is None:
        destination = []
    if isinstance(destination, list):
        add = lambda k, v: destination.append((k, v))  # noqa: E731
    elif isinstance(destination, dict):
        add = destination.__setitem__
    else:
        raise ValueError("Destination should be either a list or a dictionary or None")
    _flatten_into(tree, prefix, is_leaf, add)
    return destination


def _unflatten(items):
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]
    children = {}
    for key, value in items:
        head, _, tail = key.partition(".")
        children.setdefault(head, []).append((tail, value))
    # Integer keys make a list (gaps filled with empty dicts), others a dict;
    # so do keys such as "01" and "1" that name the same index.
    try:
        indices = sorted((int(k), k) for k in children)
    except ValueError:
        indices = None
    if indices is not None and len({i for i, _ in indices}) != len(indices):
        indices = None
    if indices is None:
        return {k: _unflatten(v) for k, v in children.items()}
    out = []
    for i, k in indices:
        while len(out) < i:
            out.append({})
        out.append(_unflatten(children[k]))
    return out


def tree_unflatten(tree: Union[List[Tuple[str, Any]], Dict[str, Any]]) -> Any:
    """Recreate a Python tree from its flat representation (a list of
    ``(key, value)`` pairs or a dict, as :func:`tree_flatten` makes).

    ``tree_unflatten([("hello.world", 42)])`` is ``{"hello": {"world": 42}}``;
    keys that are all integers at one level make a list.
    """
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    return _unflatten(items)


def tree_reduce(fn, tree, initializer=None, is_leaf=None):
    """Reduces the leaves of a Python tree with ``fn(accumulator, leaf)``.

    Without an ``initializer`` the first leaf starts the accumulation.

    >>> tree_reduce(lambda acc, x: acc + x, {"a": [1, 2, 3], "b": [4, 5]}, 0)
    15
    """
    if not _is_stop(tree, is_leaf):
        if isinstance(tree, (list, tuple)):
            children = tree
        elif isinstance(tree, dict):
            children = tree.values()
        else:
            children = None
        if children is not None:
            acc = initializer
            for child in children:
                acc = tree_reduce(fn, child, acc, is_leaf)
            return acc
    return tree if initializer is None else fn(initializer, tree)


def _is_empty(tree):
    return isinstance(tree, (dict, list, tuple)) and len(tree) == 0


def tree_merge(tree_a, tree_b, merge_fn=None):
    """Merge two Python trees into one holding the values of both, like a
    deep ``dict.update``.  ``None`` and empty containers are empty subtrees;
    two leaves at the same place are combined with ``merge_fn(a, b)`` or
    raise a ``ValueError`` without one."""
    if _is_empty(tree_a) and _is_empty(tree_b):
        if type(tree_a) is not type(tree_b):
            raise ValueError(f"Cannot merge {type(tree_a).__name__} with {type(tree_b).__name__}")
        return type(tree_a)()
    a = None if _is_empty(tree_a) else tree_a
    b = None if _is_empty(tree_b) else tree_b
    if a is None and b is not None:
        return b
    if b is None and a is not None:
        return a
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _rebuild(a, [tree_merge(x, y, merge_fn) for x, y in zip_longest(a, b)])
    if isinstance(a, dict) and isinstance(b, dict):
        keys = list(a) + [k for k in b if k not in a]
        return {k: tree_merge(a.get(k), b.get(k), merge_fn) for k in keys}
    if merge_fn is None:
        raise ValueError("Trees contain elements at the same locations but no merge function was provided")
    return merge_fn(a, b)
