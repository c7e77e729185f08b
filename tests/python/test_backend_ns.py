"""mx.metal and mx.cuda: the backend namespaces of MLX's CPU build.

Hard-coded expectations are what MLX 0.32's CPU build (the mlx[cpu] wheel)
does on a machine without Metal or CUDA; with the oracle importable every
check is also made against real MLX.
"""

import importlib
import os
import subprocess
import sys

import pytest

from conftest import SUBJECT_NAME, mlx_ref, mx, needs_oracle

METAL_ALIASES = [
    "clear_cache", "device_info", "get_active_memory", "get_cache_memory", "get_peak_memory",
    "reset_peak_memory", "set_cache_limit", "set_memory_limit", "set_wired_limit",
]
METAL = sorted(METAL_ALIASES + ["is_available", "start_capture", "stop_capture"])
CUDA = ["is_available"]

SIGNATURES = {
    "is_available": "is_available() -> bool",
    "start_capture": "start_capture(path: str) -> None",
    "stop_capture": "stop_capture() -> None",
    "clear_cache": "clear_cache() -> None",
    "device_info": "device_info() -> dict[str, str | int]",
    "get_active_memory": "get_active_memory() -> int",
    "get_cache_memory": "get_cache_memory() -> int",
    "get_peak_memory": "get_peak_memory() -> int",
    "reset_peak_memory": "reset_peak_memory() -> None",
    "set_cache_limit": "set_cache_limit(limit: int) -> int",
    "set_memory_limit": "set_memory_limit(limit: int) -> int",
    "set_wired_limit": "set_wired_limit(limit: int) -> int",
}


def public(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_"))


def signature_error(name, types):
    return (f"{name}(): incompatible function arguments. The following argument types are "
            f"supported:\n    1. {SIGNATURES[name]}\n\nInvoked with types: {types}")


# ---------------------------------------------------------------- the modules

def test_names():
    assert public(mx.metal) == METAL
    assert public(mx.cuda) == CUDA


@needs_oracle
def test_names_match_mlx():
    assert public(mx.metal) == public(mlx_ref.metal)
    assert public(mx.cuda) == public(mlx_ref.cuda)


@pytest.mark.parametrize("ns", ["metal", "cuda"])
def test_importable_as_submodule(ns):
    mod = getattr(mx, ns)
    full = SUBJECT_NAME + "." + ns
    assert mod.__name__ == full
    assert sys.modules[full] is mod
    assert importlib.import_module(full) is mod
    # `from mlx.core import metal` and `import mlx.core.metal as m` forms.
    parent = importlib.import_module(SUBJECT_NAME)
    assert getattr(parent, ns) is mod
    for f in public(mod):
        assert getattr(mod, f).__module__ == full


@pytest.mark.parametrize("name", METAL)
def test_metal_signatures(name):
    f = getattr(mx.metal, name)
    assert f.__name__ == name
    assert f.__doc__.strip().splitlines()[0] == SIGNATURES[name]
    if mlx_ref is not None:
        assert f.__doc__.strip().splitlines()[0] == \
            getattr(mlx_ref.metal, name).__doc__.strip().splitlines()[0]


def test_cuda_signature():
    assert mx.cuda.is_available.__doc__.splitlines()[0] == "is_available() -> bool"


# ---------------------------------------------------------------- values

def test_no_backend():
    assert mx.metal.is_available() is False
    assert mx.cuda.is_available() is False
    # mx.gpu stays unavailable (the namespaces change nothing about it).
    assert mx.is_available(mx.gpu) is False


def test_capture_does_nothing(tmp_path):
    path = str(tmp_path / "trace.gputrace")
    assert mx.metal.start_capture(path) is None
    assert mx.metal.stop_capture() is None
    assert mx.metal.start_capture(path=path) is None
    assert mx.metal.start_capture("") is None
    assert mx.metal.stop_capture() is None
    assert os.listdir(tmp_path) == []


def test_device_info_is_the_gpus():
    assert mx.metal.device_info() == {}
    assert mx.metal.device_info() == mx.device_info(mx.gpu)


def test_memory_aliases_match_mx():
    a = mx.ones((1000,))
    mx.eval(a)
    assert mx.metal.get_active_memory() == mx.get_active_memory()
    assert mx.metal.get_active_memory() >= 4000
    assert mx.metal.get_peak_memory() == mx.get_peak_memory()
    assert mx.metal.reset_peak_memory() is None
    assert mx.metal.get_peak_memory() == mx.get_peak_memory()
    del a
    assert mx.metal.clear_cache() is None
    assert mx.metal.get_cache_memory() == 0 == mx.get_cache_memory()


@pytest.mark.parametrize("name", ["set_cache_limit", "set_memory_limit"])
def test_limit_aliases_set_the_mx_limits(name):
    f, g = getattr(mx.metal, name), getattr(mx, name)
    old = f(1 << 30)
    try:
        assert isinstance(old, int)
        assert f(limit=1 << 31) == 1 << 30
        assert g(1 << 30) == 1 << 31  # one limit behind both names
    finally:
        g(old)


def test_wired_limit_alias():
    assert isinstance(mx.metal.set_wired_limit(0), int)
    assert isinstance(mx.metal.set_wired_limit(limit=0), int)


# ---------------------------------------------------------------- errors

BAD_CALLS = [
    ("is_available", (1,), {}, "int"),
    ("stop_capture", (1,), {}, "int"),
    ("start_capture", (), {}, ""),
    ("start_capture", (1,), {}, "int"),
    ("start_capture", (b"x.gputrace",), {}, "bytes"),
    ("start_capture", ("a", "b"), {}, "str, str"),
    ("get_active_memory", (), {"x": 1}, "kwargs = { x: int }"),
    ("device_info", (None,), {}, "NoneType"),
    ("clear_cache", (1,), {}, "int"),
    ("set_cache_limit", (), {}, ""),
    ("set_cache_limit", (-1,), {}, "int"),
    ("set_memory_limit", (), {"limit": 1.5}, "kwargs = { limit: float }"),
    ("set_wired_limit", ("1",), {}, "str"),
]


@pytest.mark.parametrize("name,args,kwargs,types", BAD_CALLS)
def test_bad_arguments(name, args, kwargs, types):
    with pytest.raises(TypeError) as e:
        getattr(mx.metal, name)(*args, **kwargs)
    assert str(e.value) == signature_error(name, types)
    if mlx_ref is not None:
        with pytest.raises(TypeError) as r:
            getattr(mlx_ref.metal, name)(*args, **kwargs)
        assert str(e.value) == str(r.value)


def test_cuda_bad_arguments():
    with pytest.raises(TypeError) as e:
        mx.cuda.is_available(True)
    assert str(e.value) == signature_error("is_available", "bool")


# ---------------------------------------------------------------- deprecation

DEPRECATION_SCRIPT = """
import importlib, sys
mx = importlib.import_module(sys.argv[1])
for name in sys.argv[2:]:
    f = getattr(mx.metal, name)
    try:
        f("bad")  # a call refused at its arguments prints nothing
    except TypeError:
        pass
    for _ in range(2):
        f(1 << 40) if name.startswith("set_") else f()
    sys.stderr.flush()
    print("--", name, file=sys.stderr, flush=True)
mx.metal.is_available(); mx.metal.start_capture("x"); mx.metal.stop_capture()
mx.cuda.is_available()
"""


def deprecation_output(module):
    """What a fresh process prints to stderr (the line is once per process)."""
    names = METAL_ALIASES
    p = subprocess.run([sys.executable, "-c", DEPRECATION_SCRIPT, module] + names,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return names, p.stderr


def test_deprecation_line_once_per_function():
    names, err = deprecation_output(SUBJECT_NAME)
    expected = "".join(
        f"mx.metal.{n} is deprecated and will be removed in a future version. "
        f"Use mx.{n} instead.\n-- {n}\n" for n in names)
    assert err == expected


@needs_oracle
def test_deprecation_lines_match_mlx():
    assert deprecation_output(SUBJECT_NAME)[1] == deprecation_output("mlx.core")[1]
