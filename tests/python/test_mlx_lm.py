"""mlx-lm through `python -m cmlx.run` (skipped where mlx-lm is not
installed; it is not a requirement): examples/mlx_lm_tiny_llama.py builds a
tiny Llama folder, loads it with mlx_lm.load, generates with the KV cache and
checks each token against a full forward pass, then LoRA-fine-tunes it with
mlx-lm's trainer (the example asserts the loss falls and the adapters
load); with real MLX installed the tokens before fine-tuning must be the
ones MLX generates from the same folder.  Also the single-process
mx.distributed group that mlx-lm calls."""

import os
import subprocess
import sys

import pytest

import cmlx.core as cx
from conftest import mlx_ref

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "mlx_lm_tiny_llama.py")


def run(args, tmp_path, extra=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run(
        [sys.executable, *args, SCRIPT, str(tmp_path), *extra],
        capture_output=True, text=True, env=env, timeout=300, cwd=str(tmp_path.parent),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def tokens(stdout):
    return [line for line in stdout.splitlines() if line.startswith("tokens ")][-1]


def test_mlx_lm_tiny_llama_generates(tmp_path):
    pytest.importorskip("mlx_lm")
    pytest.importorskip("tokenizers")
    out = run(["-m", "cmlx.run"], tmp_path / "a")
    assert "mlx is cmlx.core" in out and "after LoRA:" in out
    assert len(tokens(out).split()) == 17  # "tokens" and 16 ids
    if mlx_ref is None:  # no MLX, or a sanitizer run (MLX is not built for it)
        return
    ref = run([], tmp_path / "b", ["--no-lora"])
    assert "mlx is mlx.core" in ref
    assert tokens(out) == tokens(ref)


def test_single_process_distributed():
    d = cx.distributed
    g = d.init()
    assert g.rank() == 0 and g.size() == 1
    x = cx.array([1.0, 2.0, 3.0])
    for name in ("all_sum", "all_max", "all_min", "all_gather"):
        y = getattr(d, name)(x)
        assert y is not x and y.tolist() == [1.0, 2.0, 3.0], name
    assert d.all_sum(x, group=g).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError):
        g.split(0)
    with pytest.raises(ValueError):
        d.send(x, 0)
