"""One side (real MLX or cmlx) of the mlx-whisper / mlx-vlm / mlx-embeddings
comparison (cmlx issue 21, item 5).

Run by tests/ecosystem/test_mlx_packages.py in its own interpreter, once per
side and package (cmlx stands in for ``mlx`` through CMLX_AS_MLX=1):

    python mlx_packages_driver.py --side mlx --package whisper --dir D

Each case builds a tiny model from a small config with a fixed seed on the
MLX side and saves it as a model directory (config.json + safetensors,
D/models/CASE); both sides then load that directory through the package's
own loader and run its public API, so the sides differ in compute only.
Results go to D/SIDE/CASE.npz (floats as float32/float64, tokens as int64)
and D/SIDE/PACKAGE.json maps each case to "ok" or the error's traceback.
"""

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np


def np32(a):
    import mlx.core as mx

    if isinstance(a, mx.array):
        if mx.issubdtype(a.dtype, mx.floating):
            a = a.astype(mx.float32)
        return np.array(a)
    return np.asarray(a)


def save_model(d, params, config, weights_name):
    import mlx.core as mx
    from mlx.utils import tree_flatten

    d.mkdir(parents=True, exist_ok=True)
    flat = dict(tree_flatten(params))
    mx.save_safetensors(str(d / weights_name), flat)
    with open(d / "config.json", "w") as f:
        json.dump(config, f)


def spread(model, scale=0.1):
    """Parameters that start constant (norm weights at one, biases at zero)
    get small random values about that constant, so that every parameter
    takes part in the comparison."""
    import mlx.core as mx
    from mlx.utils import tree_flatten, tree_unflatten

    out = []
    for k, p in tree_flatten(model.parameters()):
        if p.size > 1 and mx.issubdtype(p.dtype, mx.floating):
            c = p.reshape(-1)[0]
            if mx.all(p == c).item():
                p = p + mx.random.normal(p.shape, dtype=p.dtype) * scale
        out.append((k, p))
    model.update(tree_unflatten(out))


def waveform(seconds=4.0, seed=0):
    """A chirp with noise at 16 kHz: a signal with structure in time and
    frequency for the spectrogram and the encoder."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    x = 0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t) + 0.05 * rng.standard_normal(t.size)
    return x.astype(np.float32)


# --- mlx-whisper --------------------------------------------------------------

WHISPER_DIMS = dict(n_mels=80, n_audio_ctx=1500, n_audio_state=32, n_audio_head=2,
                    n_audio_layer=2, n_vocab=51865, n_text_ctx=448, n_text_state=32,
                    n_text_head=2, n_text_layer=2)


def whisper_model_dir(side, root):
    import mlx.core as mx
    from mlx_whisper import whisper

    d = root / "whisper_tiny"
    if side == "mlx":
        mx.random.seed(0)
        m = whisper.Whisper(whisper.ModelDimensions(**WHISPER_DIMS), mx.float32)
        spread(m)
        save_model(d, m.parameters(), WHISPER_DIMS, "weights.safetensors")
    return d


def case_whisper_mel(side, root, out):
    """log_mel_spectrogram (80 and 128 bands, with and without padding) of
    a waveform given as NumPy and as an mx.array."""
    import mlx.core as mx
    from mlx_whisper import audio

    x = waveform(3.0)
    out["mel80"] = np32(audio.log_mel_spectrogram(x))
    out["mel128_pad"] = np32(audio.log_mel_spectrogram(mx.array(x), n_mels=128, padding=4000))
    out["pad_or_trim"] = np32(audio.pad_or_trim(mx.array(x), 50000))


def case_whisper_decode(side, root, out):
    """A tiny random Whisper loaded by load_models.load_model: the encoder's
    features, the decoder's logits for a prompt, and decoding.decode greedy
    with and without timestamps (tokens, log-probabilities)."""
    import mlx.core as mx
    from mlx_whisper import audio, decoding, load_models

    m = load_models.load_model(str(whisper_model_dir(side, root)))
    mel = audio.log_mel_spectrogram(waveform(), padding=audio.N_SAMPLES)
    mel = audio.pad_or_trim(mel, audio.N_FRAMES, axis=-2)
    feats = m.encoder(mel[None])
    out["encoder"] = np32(feats)
    out["logits"] = np32(m.decoder(mx.array([[50258, 50259, 50359, 1000, 2000]]), feats)[0])
    for tag, opts in (("notime", dict(without_timestamps=True)), ("time", {})):
        r = decoding.decode(m, mel, decoding.DecodingOptions(
            fp16=False, language="en", sample_len=32, **opts))
        out[f"tokens_{tag}"] = np.array(r.tokens, dtype=np.int64)
        out[f"avg_logprob_{tag}"] = np.array(r.avg_logprob, dtype=np.float64)
        out[f"no_speech_{tag}"] = np.array(r.no_speech_prob, dtype=np.float64)
    # Sampling at temperature 0.8 (best of 2): mx.random.categorical from
    # a fixed seed must draw the same tokens.
    mx.random.seed(7)
    r = decoding.decode(m, mel, decoding.DecodingOptions(
        fp16=False, language="en", sample_len=24, temperature=0.8, best_of=2,
        without_timestamps=True))
    out["tokens_sampled"] = np.array(r.tokens, dtype=np.int64)
    out["avg_logprob_sampled"] = np.array(r.avg_logprob, dtype=np.float64)


def case_whisper_transcribe(side, root, out):
    """mlx_whisper.transcribe on a 4 s waveform, greedy (temperature 0),
    with word timestamps (cross-attention DTW); 40 tokens per window keep
    a random model's hundreds of empty timestamp segments down to ~50."""
    import mlx_whisper

    d = whisper_model_dir(side, root)
    r = mlx_whisper.transcribe(waveform(), path_or_hf_repo=str(d), temperature=0.0,
                               fp16=False, language="en", word_timestamps=True,
                               condition_on_previous_text=False, sample_len=40)
    out["text"] = np.array(r["text"])
    toks = [t for s in r["segments"] for t in s["tokens"]]
    out["tokens"] = np.array(toks, dtype=np.int64)
    out["seg_bounds"] = np.array([[s["start"], s["end"]] for s in r["segments"]],
                                 dtype=np.float64).reshape(-1, 2)
    words = [w for s in r["segments"] for w in s.get("words", [])]
    out["word_times"] = np.array([[w["start"], w["end"]] for w in words],
                                 dtype=np.float64).reshape(-1, 2)


# --- mlx-vlm --------------------------------------------------------------------

LLAVA = {
    "model_type": "llava", "image_token_index": 63, "vocab_size": 64,
    "vision_feature_layer": -2,
    "text_config": {"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
                    "intermediate_size": 64, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "vocab_size": 64, "rms_norm_eps": 1e-5},
    "vision_config": {"model_type": "clip_vision_model", "num_hidden_layers": 2,
                      "hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4,
                      "image_size": 28, "patch_size": 14, "projection_dim": 32},
}


def vlm_model(side, root, name, cfg):
    import mlx.core as mx
    from mlx_vlm.utils import get_model_and_args, load_model, update_module_configs

    d = root / name
    if side == "mlx":
        arch, _ = get_model_and_args(cfg)
        conf = update_module_configs(arch.ModelConfig.from_dict(cfg), arch, cfg,
                                     ["text", "vision"])
        mx.random.seed(0)
        m = arch.Model(conf)
        spread(m)
        save_model(d, m.parameters(), cfg, "model.safetensors")
    return load_model(d)


def case_vlm_llava(side, root, out):
    """A tiny LLaVA (CLIP vision tower, Llama) through mlx_vlm.utils.load_model:
    the prompt's logits with an image, and 12 greedy tokens from
    mlx_vlm's generate_step with its prompt cache."""
    import mlx.core as mx
    from mlx_vlm.generate.ar import generate_step

    m = vlm_model(side, root, "llava_tiny", LLAVA)
    rng = np.random.default_rng(1)
    pix = mx.array(rng.standard_normal((1, 3, 28, 28)).astype(np.float32))
    ids = mx.array([[1, 5, 63, 63, 63, 63, 7, 9, 11]])
    out["logits"] = np32(m(ids, pix, None).logits)
    toks, lps = [], []
    for tok, lp in generate_step(ids, m, pix, None, max_tokens=12, temperature=0.0):
        toks.append(int(tok))
        lps.append(np32(lp).reshape(-1))
    out["tokens"] = np.array(toks, dtype=np.int64)
    out["steplp"] = np.stack(lps)
    # Sampling (temperature, top-p, top-k) from generate_step's own seed.
    toks = [int(t) for t, _ in generate_step(ids, m, pix, None, max_tokens=12,
                                             temperature=0.9, top_p=0.9, top_k=20, seed=3)]
    out["tokens_sampled"] = np.array(toks, dtype=np.int64)


QWEN2_VL = {
    "model_type": "qwen2_vl", "hidden_size": 32, "num_hidden_layers": 2,
    "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-6, "vocab_size": 64, "rope_theta": 10000.0,
    "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]},
    "image_token_id": 60, "video_token_id": 61, "vision_start_token_id": 58,
    "vision_end_token_id": 59, "eos_token_id": [62],
    "vision_config": {"model_type": "qwen2_vl", "depth": 2, "embed_dim": 16,
                      "hidden_size": 32, "num_heads": 2, "patch_size": 2,
                      "spatial_patch_size": 2, "spatial_merge_size": 2,
                      "temporal_patch_size": 2, "in_channels": 3, "mlp_ratio": 2.0},
}


def case_vlm_qwen2_vl(side, root, out):
    """A tiny Qwen2-VL (patch-merging vision tower with 2-D rotary
    positions, multimodal rotary positions in the LM): logits with an image
    of 4x4 patches (4 tokens after merging) and 12 greedy tokens."""
    import mlx.core as mx
    from mlx_vlm.generate.ar import generate_step

    m = vlm_model(side, root, "qwen2_vl_tiny", QWEN2_VL)
    rng = np.random.default_rng(2)
    # 16 patches of (channels 3 x temporal 2 x 2 x 2) values, as the
    # processor flattens them; grid (t, h, w) = (1, 4, 4).
    pix = mx.array(rng.standard_normal((16, 3 * 2 * 2 * 2)).astype(np.float32))
    grid = mx.array([[1, 4, 4]])
    ids = mx.array([[1, 5, 58, 60, 60, 60, 60, 59, 7, 9, 11]])
    mask = mx.ones(ids.shape)
    out["logits"] = np32(m(ids, pix, mask=mask, image_grid_thw=grid).logits)
    toks, lps = [], []
    for tok, lp in generate_step(ids, m, pix, mask, max_tokens=12, temperature=0.0,
                                 image_grid_thw=grid):
        toks.append(int(tok))
        lps.append(np32(lp).reshape(-1))
    out["tokens"] = np.array(toks, dtype=np.int64)
    out["steplp"] = np.stack(lps)


# --- mlx-embeddings -----------------------------------------------------------

EMBEDDINGS = {
    "bert": dict(model_type="bert", hidden_size=32, num_hidden_layers=2,
                 intermediate_size=64, num_attention_heads=4, max_position_embeddings=64,
                 vocab_size=100),
    "xlm_roberta": dict(model_type="xlm-roberta", hidden_size=32, num_hidden_layers=2,
                        intermediate_size=64, num_attention_heads=4,
                        max_position_embeddings=64, vocab_size=100),
    "modernbert": dict(model_type="modernbert", hidden_size=32, num_hidden_layers=3,
                       intermediate_size=64, num_attention_heads=4,
                       max_position_embeddings=64, vocab_size=100, global_attn_every_n_layers=2,
                       local_attention=4),
    "qwen3": dict(model_type="qwen3", hidden_size=32, num_hidden_layers=2,
                  intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
                  head_dim=8, max_position_embeddings=64, vocab_size=100,
                  rope_theta=10000.0),
}


def embedding_case(name):
    def run(side, root, out):
        import mlx.core as mx
        from mlx_embeddings.utils import _get_classes, load_model

        cfg = EMBEDDINGS[name]
        d = root / f"emb_{name}"
        if side == "mlx":
            model_class, args_class, _, _ = _get_classes(cfg)
            mx.random.seed(0)
            m = model_class(args_class.from_dict(cfg))
            spread(m)
            # modernbert's checkpoint keeps its decoder.weight beside the
            # tied embedding: its sanitize keeps the file's or the tied one
            # by the order mx.load lists the keys, which cmlx matches.
            save_model(d, m.parameters(), cfg, "model.safetensors")
        m = load_model(d)
        ids = mx.array([[2, 15, 27, 33, 41, 8, 3, 1], [2, 54, 11, 3, 1, 1, 1, 1]])
        mask = mx.array([[1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0, 0, 0]])
        o = m(ids, attention_mask=mask)
        out["last_hidden_state"] = np32(o.last_hidden_state)
        out["text_embeds"] = np32(o.text_embeds)
        if getattr(o, "pooler_output", None) is not None:
            out["pooler_output"] = np32(o.pooler_output)

    run.__doc__ = (f"A tiny {name} through mlx_embeddings.utils.load_model: hidden states "
                   "and normalised embeddings of a padded batch of two.")
    return run


PACKAGES = {
    "whisper": {
        "whisper_mel": case_whisper_mel,
        "whisper_decode": case_whisper_decode,
        "whisper_transcribe": case_whisper_transcribe,
    },
    "vlm": {"vlm_llava": case_vlm_llava, "vlm_qwen2_vl": case_vlm_qwen2_vl},
    "embeddings": {f"emb_{n}": embedding_case(n) for n in EMBEDDINGS},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mlx", "cmlx"), required=True)
    ap.add_argument("--package", choices=sorted(PACKAGES), required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()

    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    root = Path(a.dir) / "models"
    sdir = Path(a.dir) / a.side
    sdir.mkdir(parents=True, exist_ok=True)
    status = {"_impl": mx.__file__}
    for case, run in PACKAGES[a.package].items():
        out = {}
        t0 = time.perf_counter()
        try:
            run(a.side, root, out)
            status.setdefault("_seconds", {})[case] = round(time.perf_counter() - t0, 2)
            np.savez(sdir / f"{case}.npz", **out)
            status[case] = "ok"
        except Exception as e:
            status[case] = "".join(traceback.format_exception(e))[-3000:]
        with open(sdir / f"{a.package}.json", "w") as f:
            json.dump(status, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
