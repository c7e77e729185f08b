"""mlx-whisper, mlx-vlm and mlx-embeddings on cmlx against real MLX (cmlx
issue 21, item 5).

For each package the driver (mlx_packages_driver.py) runs once per side in
its own interpreter: real MLX builds tiny randomly initialised models from
small configs with a fixed seed and saves them as model directories; both
sides load them through the package's own loader and run its public API:

  whisper:    log_mel_spectrogram (80/128 bands, padding), pad_or_trim;
              load_models.load_model, the encoder, the decoder's logits,
              decoding.decode greedy with and without timestamps and
              sampled (temperature 0.8, best of 2);
              transcribe with word timestamps.
  vlm:        a LLaVA (CLIP vision tower + Llama) and a Qwen2-VL
              (patch-merging vision tower, multimodal rotary positions)
              through mlx_vlm.utils.load_model: logits with an image, 12
              greedy tokens from generate_step, 12 sampled (temperature,
              top-p, top-k, seeded).
  embeddings: bert, xlm-roberta, modernbert, qwen3 (last-token pooling) through
              mlx_embeddings.utils.load_model: hidden states, embeddings,
              pooled output of a padded batch.

Tokens and text must be identical; floats within TOL.  Skipped where a
package, real MLX or cmlx is absent (tests/ecosystem/requirements.txt pins
the versions).  Needs no GPU and no network.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sides import cmlx_pkg_dir, have, side_env  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "mlx_packages_driver.py")
SIDE_TIMEOUT_S = 300

# Floats: |cmlx - mlx| <= TOL * max(1, max|mlx|).  These are float32
# forward passes of 2-layer models (no training): measured differences are
# at most 5e-6 (spectrogram, whisper's encoder and 51865-way logits), from
# summation order in matmuls, FFTs and reductions.  1e-4 leaves room for
# other BLAS builds and still fails any wrong operation.
TOL = 1e-4

PACKAGES = {
    "whisper": ("mlx-whisper", ["whisper_mel", "whisper_decode", "whisper_transcribe"]),
    "vlm": ("mlx-vlm", ["vlm_llava", "vlm_qwen2_vl"]),
    "embeddings": ("mlx-embeddings", ["emb_bert", "emb_xlm_roberta", "emb_modernbert",
                                      "emb_qwen3"]),
}








_RESULTS = {}


def _results(package, tmp_path_factory):
    """Runs both sides of one package once; the tests of its cases share
    the results."""
    if package in _RESULTS:
        return _RESULTS[package]
    dist = PACKAGES[package][0]
    if not have(dist):
        pytest.skip(f"{dist} is not installed (tests/ecosystem/requirements.txt)")
    if not have("mlx"):
        pytest.skip("real MLX is not installed (the reference)")
    pkg = cmlx_pkg_dir()
    if pkg is None:
        pytest.skip("cmlx is not importable (PYTHONPATH=build/pkg)")
    out = str(tmp_path_factory.mktemp(f"pkg_{package}"))
    status = {}
    for side in ("mlx", "cmlx"):
        r = subprocess.run(
            [sys.executable, DRIVER, "--side", side, "--package", package, "--dir", out],
            env=side_env(side, pkg, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=SIDE_TIMEOUT_S,
        )
        spath = os.path.join(out, side, f"{package}.json")
        if not os.path.exists(spath):
            raise AssertionError(f"the {side} side wrote no results:\n{(r.stdout + r.stderr)[-4000:]}")
        with open(spath) as f:
            st = json.load(f)
        want = "cmlx" if side == "cmlx" else "mlx"
        assert os.sep + want + os.sep in st.pop("_impl"), f"the {side} side ran another library"
        st.pop("_seconds", None)
        if r.returncode != 0:  # died inside a case: name it
            for case in PACKAGES[package][1]:
                st.setdefault(case, f"the process died (rc {r.returncode}):\n"
                                    f"{(r.stdout + r.stderr)[-3000:]}")
        status[side] = st
    _RESULTS[package] = (out, status)
    return _RESULTS[package]


def _compare(ref, got):
    bad = []
    for k in sorted(ref):
        if k not in got:
            bad.append(f"{k}: missing on cmlx")
            continue
        r, g = ref[k], got[k]
        if r.dtype.kind in "US":
            if str(r) != str(g):
                bad.append(f"{k}: cmlx {str(g)[:200]!r}, MLX {str(r)[:200]!r}")
        elif r.shape != g.shape:
            bad.append(f"{k}: shape {g.shape}, MLX {r.shape}" +
                       (f": cmlx {g.tolist()[:40]}, MLX {r.tolist()[:40]}"
                        if r.dtype.kind == "i" else ""))
        elif r.dtype.kind in "iub":
            if not np.array_equal(r, g):
                i = int(np.argmax(r.reshape(-1) != g.reshape(-1)))
                bad.append(f"{k}: first difference at {i}: cmlx {g.reshape(-1)[i]}, MLX "
                           f"{r.reshape(-1)[i]} (cmlx {g.tolist()[:40]}, MLX {r.tolist()[:40]})")
        else:
            finite = np.isfinite(r)
            scale = max(1.0, float(np.abs(r[finite]).max()) if finite.any() else 1.0)
            if not np.allclose(g, r, rtol=0, atol=TOL * scale, equal_nan=True):
                with np.errstate(invalid="ignore"):
                    err = float(np.nanmax(np.abs(g - r))) if r.size else 0.0
                bad.append(f"{k}: max |diff| {err:.3g} (MLX max |x| {scale:.3g})")
    return bad


def _cases():
    for package, (_, cases) in PACKAGES.items():
        for case in cases:
            yield pytest.param(package, case, id=case)


@pytest.mark.parametrize("package,case", list(_cases()))
def test_package_matches_mlx(package, case, tmp_path_factory):
    out, status = _results(package, tmp_path_factory)
    rs, gs = status["mlx"].get(case), status["cmlx"].get(case)
    if rs != "ok":
        pytest.skip(f"no MLX reference: {str(rs).strip().splitlines()[-1]}")
    assert gs == "ok", f"cmlx raised:\n{gs}"
    ref = dict(np.load(os.path.join(out, "mlx", f"{case}.npz")))
    got = dict(np.load(os.path.join(out, "cmlx", f"{case}.npz")))
    problems = _compare(ref, got)
    assert not problems, "\n".join(problems)
