#!/usr/bin/env python3
"""mlx-lm, unedited, on cmlx: a tiny Llama built from a local folder.

Written for MLX (it imports mlx.core and mlx_lm); run it on cmlx with

    python -m cmlx.run examples/mlx_lm_tiny_llama.py [FOLDER] [--no-lora]

(or on MLX itself with plain `python`). It writes a model folder (config.json,
random weights in model.safetensors, a character-level tokenizer.json made
with the `tokenizers` package), loads it with mlx_lm.load, generates text
greedily through mlx-lm's KV cache, and checks that every generated token is
the argmax of a full forward pass over the sequence so far (no cache). Then
it LoRA-fine-tunes the model with mlx-lm's tuner (linear_to_lora_layers and
tuner.trainer.train) on one sentence, checks that the loss falls and the
adapter file loads, and generates again (LoRA's random initialisation makes
this part differ from MLX's run). Before that it prints the generated token
ids on one line, so two runs can be compared.
Needs `pip install mlx-lm` (not one of cmlx's requirements).
"""

import json
import os
import sys
import tempfile

import mlx.core as mx
import numpy as np
from mlx.utils import tree_flatten

CONFIG = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-5,
    "vocab_size": 64,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "max_position_embeddings": 256,
}
ALPHABET = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?'0123456789"[:60]


def write_tokenizer(folder):
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    vocab.update({c: i + 4 for i, c in enumerate(ALPHABET)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.decoder = decoders.Fuse()
    tok.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>",
                   "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}, f)


def write_model_folder(folder, seed=0):
    from mlx_lm.models import llama

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    rng = np.random.default_rng(seed)
    model = llama.Model(llama.ModelArgs.from_dict(CONFIG))
    weights = {
        k: mx.array((rng.standard_normal(v.shape) * (0.3 if v.ndim > 1 else 0.05) + (v.ndim == 1))
                    .astype(np.float32))
        for k, v in tree_flatten(model.parameters())
    }  # fmt: skip
    mx.save_safetensors(os.path.join(folder, "model.safetensors"), weights)
    write_tokenizer(folder)


def main(folder=None, lora=True):
    from mlx_lm import generate, load
    from mlx_lm.generate import generate_step
    from mlx_lm.models.cache import make_prompt_cache

    folder = folder or tempfile.mkdtemp(prefix="tiny_llama_")
    write_model_folder(folder)
    model, tokenizer = load(folder)
    prompt = tokenizer.encode("Hello world", add_special_tokens=False)
    print(f"mlx is {mx.__name__}; prompt ids {prompt}")

    cache = make_prompt_cache(model)
    tokens = []
    for tok, _ in generate_step(mx.array(prompt), model, max_tokens=16, prompt_cache=cache):
        tokens.append(int(tok))
    # the cache holds the prompt and the generated tokens (generate_step
    # computes one step ahead, so the last one may be in it already)
    assert cache[0].offset - len(prompt) in (len(tokens) - 1, len(tokens)), cache[0].offset

    seq = list(prompt)
    for t in tokens:  # the same tokens without a cache
        logits = model(mx.array([seq]))[0, -1]
        assert int(mx.argmax(logits)) == t, (seq, t)
        seq.append(t)

    text = generate(model, tokenizer, prompt="Hello world", max_tokens=16, verbose=False)
    print(f"generated: {text!r}")
    print("tokens", " ".join(map(str, tokens)))
    if lora:
        lora_finetune(model, tokenizer, folder)


def lora_finetune(model, tokenizer, folder, sentence="Hello world, this is cmlx."):
    import mlx.optimizers as optim
    from mlx_lm.generate import generate_step
    from mlx_lm.tuner.callbacks import TrainingCallback
    from mlx_lm.tuner.trainer import TrainingArgs, train
    from mlx_lm.tuner.utils import linear_to_lora_layers

    class Losses(TrainingCallback):
        def __init__(self):
            self.losses = []

        def on_train_loss_report(self, info):
            self.losses.append(info["train_loss"])

    mx.random.seed(0)
    model.freeze()
    linear_to_lora_layers(model, 2, {"rank": 4, "scale": 10.0, "dropout": 0.0})
    trainable = tree_flatten(model.trainable_parameters())
    assert trainable and all("lora" in k for k, _ in trainable), [k for k, _ in trainable]
    data = [(tokenizer.encode(sentence, add_special_tokens=False), 0)] * 8
    adapters = os.path.join(folder, "adapters.safetensors")
    args = TrainingArgs(batch_size=4, iters=60, steps_per_report=10, steps_per_eval=10**6,
                        steps_per_save=10**6, adapter_file=adapters)  # fmt: skip
    report = Losses()
    train(model, optim.Adam(learning_rate=3e-2), data, None, args, training_callback=report)
    print("LoRA train losses", " ".join(f"{v:.3f}" for v in report.losses))
    assert report.losses[-1] < 0.6 * report.losses[0], report.losses
    saved = mx.load(adapters)
    assert sorted(saved) == sorted(k for k, _ in trainable)
    prompt = tokenizer.encode("Hello", add_special_tokens=False)
    out = [int(t) for t, _ in generate_step(mx.array(prompt), model, max_tokens=12)]
    print(f"after LoRA: {tokenizer.decode(prompt + out)!r}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-lora"]
    main(args[0] if args else None, lora="--no-lora" not in sys.argv[1:])
