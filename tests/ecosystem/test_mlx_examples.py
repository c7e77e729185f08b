"""mlx-examples programs on cmlx against real MLX (cmlx issue 21, item 4).

Each test runs one example's own ``main`` twice, in its own interpreter per
side (mlx_examples_driver.py): on real MLX and on cmlx standing in for
``mlx`` (CMLX_AS_MLX=1), with tiny settings and small synthetic data in
place of the data set it would download (a loader replaced inside the
driver; the example's code is not changed or copied).  It compares the
trained model's parameters and the numbers the program printed (losses,
accuracies, perplexities; timings removed).

The examples come from a checkout of ml-explore/mlx-examples: the directory
in CMLX_MLX_EXAMPLES, else ../shared/mlx-examples beside the repository,
else /tmp/mlx-examples; without one every test skips (CI cannot reach
GitHub).  Tested at mlx-examples 7ddca42 (2025-11-20).

Covered: mnist, transformer_lm (with --checkpoint: mx.checkpoint inside
mx.compile), gcn, normalizing_flow, cvae and cifar (through mlx.data),
speechcommands (mlx.data's MFSC features), lora (its command line, on its
own wikisql data, with a tiny random Llama and a byte-level tokenizer made
in the driver: training, validation, test loss and generation), bert (a
tiny random Hugging Face BERT made with transformers, through the example's
convert.py and model.run: hidden states and pooled output).

Not covered, and why:
  t5: T5.from_pretrained always loads the "t5-base" tokenizer from the hub.
  llms/*, clip, llava, encodec, musicgen, segment_anything,
  stable_diffusion, flux: each program starts from pretrained weights
  (a Hugging Face download or a convert.py of them), and several are far
  over 30 s on 2 cores even when tiny.  (mlx-vlm's LLaVA and mlx-whisper
  stand in for llava and whisper in test_mlx_packages.py.)
  whisper: covered as the mlx-whisper package (test_mlx_packages.py).
  wwdc25: notebooks and slides, no offline program.
"""

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sides import cmlx_pkg_dir, have, side_env  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DRIVER = os.path.join(HERE, "mlx_examples_driver.py")
SIDE_TIMEOUT_S = 300

# Parameters after training: |cmlx - mlx| <= ATOL * max(1, max|mlx|),
# elementwise.  float32 reductions summed in another order differ by ~1e-7
# relative per operation; 10-30 optimizer steps on a shallow network carry
# that to a few 1e-6 (measured: <= 2.3e-6 for mnist, transformer_lm, gcn,
# speechcommands, lora, bert; 7.8e-5 for normalizing_flow, whose affine
# couplings exponentiate).  1e-4 leaves room and still fails any real arithmetic
# error, which moves parameters by the learning rate (1e-3..1e-2).
ATOL = 1e-4

# {example: (fraction, reason)}: the fraction of parameter elements allowed
# past ATOL.  Adam's first steps move a weight by about lr * sqrt(10)
# whatever its gradient's size, so a gradient at rounding level (a channel
# that barely reaches the loss) takes either sign and the weight lands
# 6e-3 from MLX's.  Measured on cifar's one step: 3.3e-5 of 271k elements
# (9 weights).  An arithmetic error in any layer moves most elements.
SIGN_FLIPS = {
    "cifar": (1e-3, "Adam's first step on gradients at rounding level"),
}

# {example: (regex, reason)}: parameters not compared, whose true gradient
# is exactly zero, so their value is rounding noise times Adam's gain.
NOISE = {
    "cvae": (
        re.compile(r"(conv\d?|conv)\.bias$|running_mean$"),
        "a convolution's bias feeding BatchNorm has zero true gradient (the "
        "normalisation removes it); AdamW turns its rounding-level gradient "
        "into steps of lr either way, and BatchNorm's running_mean follows "
        "that bias",
    ),
}

EXAMPLES = ["mnist", "transformer_lm", "gcn", "normalizing_flow", "cvae", "cifar",
            "speechcommands", "lora", "bert"]


def _examples_dir():
    for d in (os.environ.get("CMLX_MLX_EXAMPLES"),
              os.path.join(os.path.dirname(ROOT), "shared", "mlx-examples"),
              "/tmp/mlx-examples"):
        if d and os.path.isfile(os.path.join(d, "mnist", "main.py")):
            return d
    return None








@pytest.fixture(scope="module")
def setup():
    d = _examples_dir()
    if d is None:
        pytest.skip("no mlx-examples checkout (set CMLX_MLX_EXAMPLES to one)")
    if not have("mlx"):
        pytest.skip("real MLX is not installed (the reference)")
    pkg = cmlx_pkg_dir()
    if pkg is None:
        pytest.skip("cmlx is not importable (PYTHONPATH=build/pkg)")
    return d, pkg


def _run(side, name, d, pkg, out):
    path = os.path.join(out, f"{name}_{side}.npz")
    r = subprocess.run(
        [sys.executable, DRIVER, "--side", side, "--example", name, "--examples", d,
         "--out", path],
        env=side_env(side, pkg, MPLBACKEND="Agg", HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=SIDE_TIMEOUT_S,
    )
    if r.returncode != 0:
        return None, (r.stdout + r.stderr)[-4000:]
    res = dict(np.load(path))
    want = "cmlx" if side == "cmlx" else "mlx"
    assert os.sep + want + os.sep in str(res["impl"]), f"the {side} side ran {res['impl']}"
    return res, None


def _needs(name):
    if name in ("cvae", "cifar", "speechcommands") and importlib.util.find_spec("mlx.data") is None:
        pytest.skip("mlx-data is not installed")
    if name == "normalizing_flow":
        for m in ("sklearn", "matplotlib", "tqdm"):
            if importlib.util.find_spec(m) is None:
                pytest.skip(f"{m} is not installed")
    if name == "gcn" and importlib.util.find_spec("scipy") is None:
        pytest.skip("scipy is not installed")
    if name in ("lora", "bert"):
        for m in ("transformers", "tokenizers") + (("torch",) if name == "bert" else ()):
            if importlib.util.find_spec(m) is None:
                pytest.skip(f"{m} is not installed")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_mlx(setup, name, tmp_path):
    d, pkg = setup
    _needs(name)
    ref, err = _run("mlx", name, d, pkg, str(tmp_path))
    if ref is None:
        pytest.skip(f"the example fails on real MLX: {err.strip().splitlines()[-1]}")
    got, err = _run("cmlx", name, d, pkg, str(tmp_path))
    assert got is not None, f"cmlx raised:\n{err}"

    problems = []
    # The printed numbers: the same count, each within rounding at its last
    # printed digit (1.5 units: both sides round, from values a few ulps
    # apart that may straddle a rounding boundary).
    pr, pg = ref["printed"], got["printed"]
    if pr.shape != pg.shape:
        problems.append(f"printed {pg.size} numbers, MLX {pr.size}:\n{got['printed_text']}"
                        f"\nMLX:\n{ref['printed_text']}")
    else:
        bad = np.abs(pr - pg) > 1.5 * ref["printed_unit"] + 1e-6 * np.abs(pr)
        if bad.any():
            i = int(np.argmax(bad))
            problems.append(f"printed number {i}: cmlx {pg[i]}, MLX {pr[i]}:\n"
                            f"{got['printed_text']}\nMLX:\n{ref['printed_text']}")

    keys = sorted(k for k in ref if k.startswith("param:"))
    assert keys, "no parameters saved"
    skip_re = NOISE.get(name, (None, ""))[0]
    allowed = SIGN_FLIPS.get(name, (0.0, ""))[0]
    n_all = n_bad = 0
    worst = (0.0, "")
    for k in keys:
        if k not in got:
            problems.append(f"{k[6:]}: missing on cmlx")
            continue
        r, g = ref[k], got[k]
        if r.shape != g.shape:
            problems.append(f"{k[6:]}: shape {g.shape}, MLX {r.shape}")
            continue
        if skip_re is not None and skip_re.search(k[6:]):
            continue
        scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
        diff = np.abs(g - r)
        if not np.isfinite(g).all():
            problems.append(f"{k[6:]}: non-finite values on cmlx")
        n_all += r.size
        n_bad += int(np.sum(diff > ATOL * scale))
        if r.size and float(diff.max()) / scale > worst[0]:
            worst = (float(diff.max()) / scale, k[6:])
    # What the program computed beside training (bert's embeddings): a
    # forward pass, so every element within ATOL.
    for k in sorted(x for x in ref if x.startswith("output:")):
        r, g = ref[k], got.get(k)
        scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
        if g is None or g.shape != r.shape:
            problems.append(f"{k[7:]}: {None if g is None else g.shape}, MLX {r.shape}")
        elif not np.allclose(g, r, rtol=0, atol=ATOL * scale):
            problems.append(f"{k[7:]}: max |diff| {float(np.abs(g - r).max()):.3g}")
    if n_bad > allowed * n_all:
        problems.append(f"{n_bad} of {n_all} parameter elements differ from MLX's by more "
                        f"than {ATOL} (relative to max(1, max|p|)); worst {worst[0]:.3g} "
                        f"in {worst[1]}")
    assert not problems, "\n".join(problems)
