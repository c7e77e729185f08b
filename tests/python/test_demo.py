"""examples/demo.py: the CNN trains, its weights round-trip through
.safetensors, and the loss curve is a valid PNG (short runs only)."""

import importlib.util
import os
import struct
import zlib

import numpy as np
import pytest

pytest.importorskip("sklearn")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def demo():
    path = os.path.join(ROOT, "examples", "demo.py")
    spec = importlib.util.spec_from_file_location("cmlx_demo", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def trained(demo):
    return demo.train(epochs=2, seed=3, log=lambda *a: None, show_bar=False)


def read_png(path):
    """Parses a PNG, checking signature and every CRC; returns (IHDR fields, pixel bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, kind
        chunks.append((kind, body))
        pos += 12 + n
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    w, h, depth, color = struct.unpack(">IIBB", chunks[0][1][:10])
    pixels = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    return (w, h, depth, color), pixels


def test_loss_decreases_and_accuracy_rises(trained):
    _, _, losses, history = trained
    assert len(losses) == 2 * 23 and all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    assert history[1][1] < history[0][1]  # epoch mean loss
    assert history[-1][3] > 0.85  # test accuracy after two epochs


def test_safetensors_round_trip(demo, trained, tmp_path):
    import cmlx.core as mx
    from cmlx.utils import tree_flatten

    model, (_, _, x_test, y_test), _, _ = trained
    path = str(tmp_path / "w.safetensors")
    model.save_weights(path)
    fresh = demo.DigitsCNN()
    before = demo.predict(fresh, x_test)
    fresh.load_weights(path)
    after = demo.predict(fresh, x_test)
    expect = demo.predict(model, x_test)
    assert mx.array_equal(after, expect).item()
    assert not mx.array_equal(before, expect).item()  # the load changed something
    loaded = mx.load(path)
    assert sorted(loaded) == sorted(k for k, _ in tree_flatten(model.parameters()))
    assert loaded["conv1.weight"].shape == (32, 3, 3, 1)


@pytest.mark.parametrize("use_matplotlib", [False, True])
def test_loss_curve_png(demo, trained, tmp_path, use_matplotlib):
    if use_matplotlib:
        pytest.importorskip("matplotlib")
    _, _, losses, history = trained
    path = str(tmp_path / "curve.png")
    demo.plot_losses(path, losses, history, use_matplotlib=use_matplotlib)
    (w, h, depth, color), pixels = read_png(path)
    assert w > 100 and h > 100 and depth == 8
    if not use_matplotlib:  # ours: RGB, one filter byte per row, not all white
        assert color == 2 and len(pixels) == h * (1 + 3 * w)
        assert pixels.count(b"\xff") < len(pixels) * 0.99


def test_main_end_to_end(demo, tmp_path, capsys):
    demo.main(["--epochs", "2", "--out", str(tmp_path), "--min-accuracy", "0.8"])
    out = capsys.readouterr().out
    assert "predictions identical: True" in out
    assert os.path.getsize(tmp_path / "digits_cnn.safetensors") > 100_000
    read_png(str(tmp_path / "loss_curve.png"))
    with pytest.raises(SystemExit):
        demo.main(["--epochs", "1", "--out", str(tmp_path), "--min-accuracy", "1.01"])
