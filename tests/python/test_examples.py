"""The Python programs in examples/ (short runs): the transformer language
model trains, and decoding through its key/value cache gives the same logits
as running the whole sequence at once."""

import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_example(name):
    spec = importlib.util.spec_from_file_location(
        "cmlx_example_" + name, os.path.join(ROOT, "examples", name + ".py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def lm():
    return load_example("transformer_lm")


def test_corpus_and_vocab(lm):
    text = lm.stdlib_text()
    assert len(text) > 20_000
    vocab = lm.Vocab(text)
    assert vocab.decode(vocab.encode(text[:500])) == text[:500]


def test_lm_trains(lm):
    model, vocab, losses = lm.train(
        steps=30, seq=32, batch=8, dims=32, layers=1, log=lambda *a: None
    )
    assert all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.5
    out = lm.generate(model, vocab, "Return ", length=20)
    assert len(out) == 20 and all(c in vocab.chars for c in out)


def test_kv_cache_matches_full_forward(lm):
    import cmlx.core as mx

    mx.random.seed(1)
    model = lm.CharLM(50, dims=32, heads=4, layers=2)
    model.eval()
    ids = mx.random.randint(0, 50, (1, 12))
    full, _ = model(ids)
    logits, caches = model(ids[:, :5])
    steps = [logits]
    for t in range(5, 12):
        logits, caches = model(ids[:, t : t + 1], caches)
        steps.append(logits)
    inc = mx.concatenate(steps, axis=1)
    np.testing.assert_allclose(np.array(inc), np.array(full), rtol=1e-4, atol=1e-4)
    assert caches[0][0].shape == (1, 4, 12, 8)
