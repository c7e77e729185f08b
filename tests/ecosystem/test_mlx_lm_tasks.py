"""mlx-lm's tools on cmlx against real MLX (cmlx issue 21, item 2): one
step of full fine-tuning, of LoRA and of DoRA (mlx_lm.tuner's layers and
default_loss on a tiny llama: the loss, the gradients and the updated
weights), mlx_lm's BatchGenerator (continuous batching of prompts of
different lengths and budgets), and, on a saved model directory with a
word-level tokenizer, mlx_lm.generate, mlx_lm.convert to 4 bits (the
written files bit for bit, and the converted model's generation) and
mlx_lm.server on loopback answering one completion request.  Tokens and
texts must be identical.  Each side runs in its own
interpreter (mlx_lm_tasks_driver.py); skipped where mlx-lm, real MLX or
cmlx is absent."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mlx_lm_tasks_driver import BATCH_MAX_TOKENS, BATCH_MODELS  # noqa: E402
from sides import cmlx_pkg_dir, have, side_env  # noqa: E402

DRIVER = os.path.join(HERE, "mlx_lm_tasks_driver.py")
ATOL, RTOL = 1e-5, 1e-4


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if not have("mlx-lm"):
        pytest.skip("mlx-lm is not installed")
    if not have("mlx"):
        pytest.skip("real MLX is not installed (the reference)")
    pkg = cmlx_pkg_dir()
    if pkg is None:
        pytest.skip("cmlx is not importable (PYTHONPATH=build/pkg)")
    out = str(tmp_path_factory.mktemp("mlx_lm_tasks"))
    status = {}
    for side in ("mlx", "cmlx"):
        r = subprocess.run([sys.executable, DRIVER, "--side", side, "--dir", out],
                           env=side_env(side, pkg), capture_output=True, text=True,
                           timeout=300)
        spath = os.path.join(out, side, "status.json")
        if not os.path.exists(spath):
            pytest.fail(f"{side} side wrote no results (exit {r.returncode}):\n{r.stderr[-3000:]}")
        with open(spath) as f:
            status[side] = json.load(f)
        impl = status[side].pop("_impl", "")
        assert os.sep + side + os.sep in impl, f"the {side} side ran {impl}"
    return out, status


def _load(out, side, task):
    return dict(np.load(os.path.join(out, side, f"{task.replace(':', '_')}.npz")))


def _check(results, task):
    out, status = results
    if status["mlx"].get(task) != "ok":
        pytest.skip(f"no MLX reference: {status['mlx'].get(task)}")
    assert status["cmlx"].get(task) == "ok", status["cmlx"].get(task)
    return _load(out, "mlx", task), _load(out, "cmlx", task)


@pytest.mark.parametrize("task", ["full", "lora", "dora"])
def test_training_step_matches_mlx(results, task):
    ref, got = _check(results, task)
    assert set(got) == set(ref)
    assert int(got["ntoks"]) == int(ref["ntoks"])
    assert np.allclose(got["loss"], ref["loss"], rtol=1e-5, atol=0)
    assert np.allclose(got["loss_after"], ref["loss_after"], rtol=1e-5, atol=0)
    # the step changed the loss (the comparison of the weights is not vacuous)
    assert abs(float(ref["loss_after"]) - float(ref["loss"])) > 1e-3
    bad = []
    for k in sorted(ref):
        if k.startswith(("grad:", "param:")):
            r, g = ref[k], got[k]
            scale = max(1e-30, float(np.abs(r).max())) if r.size else 1.0
            if r.shape != g.shape or not np.allclose(g, r, atol=ATOL * scale, rtol=RTOL):
                bad.append(f"{k}: max |diff| {float(np.abs(g - r).max()):.3g} (max |MLX| {scale:.3g})")
    assert not bad, "\n".join(bad)
    if task != "full":
        # only the adapters (and DoRA's magnitudes) train
        names = [k[6:] for k in ref if k.startswith("param:")]
        assert names and all(".lora_" in n or n.endswith(".m") for n in names), names


@pytest.mark.parametrize("name", BATCH_MODELS)
def test_batch_generator_matches_mlx(results, name):
    ref, got = _check(results, f"batch_generator:{name}")
    assert set(got) == set(ref)
    for k in sorted(ref):
        assert np.array_equal(got[k], ref[k]), (k, got[k], ref[k])
    # every prompt generated up to its own budget
    for i, n in enumerate(BATCH_MAX_TOKENS):
        assert len(ref[f"tokens_{i}"]) == n


def test_generate_matches_mlx(results):
    ref, got = _check(results, "generate")
    assert str(got["text"]) == str(ref["text"])
    assert len(str(ref["text"]).split()) == 16


def test_convert_matches_mlx(results):
    ref, got = _check(results, "convert")
    assert set(got) == set(ref)
    files = [k for k in ref if k.startswith("file:")]
    assert any(str(ref[k.replace("file:", "dtype:")]) == "mlx.core.uint32" for k in files)
    for k in sorted(ref):
        if k.startswith(("file:", "dtype:")) or k == "config":
            g, r = got[k], ref[k]
            assert r.dtype.kind == "U" and str(g).replace("cmlx.", "mlx.") == str(r) \
                or np.array_equal(g, r), k
    assert '"bits": 4' in str(ref["config"]) and '"group_size": 32' in str(ref["config"])
    assert str(got["text"]) == str(ref["text"])


def test_server_matches_mlx(results):
    ref, got = _check(results, "server")
    for k in ("text", "finish_reason", "completion_tokens"):
        assert str(got[k]) == str(ref[k]), k
    assert int(ref["completion_tokens"]) == 12
