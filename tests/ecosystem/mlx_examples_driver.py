"""One side (real MLX or cmlx) of one mlx-examples program, tiny and offline.

Run by tests/ecosystem/test_mlx_examples.py in its own interpreter, once per
side (cmlx stands in for ``mlx`` through CMLX_AS_MLX=1):

    python mlx_examples_driver.py --side mlx --example mnist \
        --examples /path/to/mlx-examples --out D/mlx/mnist.npz

The example's own code runs unchanged: its ``main`` is called with tiny
settings.  What would download a data set is replaced, inside this process
only, by a loader of small synthetic data drawn from a fixed NumPy seed (the
same on both sides).  The model class (or factory) is wrapped so that the
model ``main`` trained is kept; the side saves its parameters after
training, and the numbers ``main`` printed (losses, accuracies; timings
dropped), into the npz file: ``param:NAME`` arrays and ``printed`` (the
numbers, in order).  The printed text goes to ``printed_text``.
"""

import argparse
import contextlib
import importlib.util
import json
import os
import re
import sys
import tempfile
from types import SimpleNamespace

import numpy as np

# Printed fields that measure time, not the computation: removed before the
# numbers are read.
TIMING = re.compile(
    r"(Time[: ]*[-+.\deE]+ *\(?m?s\)?|It/sec [-+.\deE]+|Val took [-+.\deE]+s"
    r"|Throughput:? *[-+.\deE]+ *[\w/]*|Tokens/sec [-+.\deE]+)"
)
NUMBER = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+")


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def keep_models(owner, attr, kept):
    """Replaces owner.attr (a model class or a function returning a model)
    by a wrapper that appends each model it makes to ``kept``."""
    make = getattr(owner, attr)

    def wrapped(*a, **k):
        m = make(*a, **k)
        kept.append(m)
        return m

    setattr(owner, attr, wrapped)


def seed_all(seed=0):
    import mlx.core as mx

    np.random.seed(seed)
    mx.random.seed(seed)


def deterministic_mlx_data(seed=0):
    """mlx.data's shuffles, flips and crops from a fixed seed, and no
    prefetch: prefetch threads draw from the shared random state in the
    order they run, which changed the batches from one run to the next."""
    import mlx.data as dx
    import mlx.data.core as dxc

    dx.Stream.prefetch = lambda self, *a, **k: self
    dxc.set_state(seed)


def fake_image_buffer(n, h, w, c, classes, rng):
    """An mlx.data buffer of n random uint8 images with labels, the layout
    mlx.data's MNIST and CIFAR loaders give."""
    import mlx.data as dx

    images = rng.integers(0, 256, size=(n, h, w, c), dtype=np.uint8)
    labels = rng.integers(0, classes, size=(n,)).astype(np.int64)
    return dx.buffer_from_vector(
        [{"image": images[i], "label": np.array(labels[i])} for i in range(n)]
    )


# --- the examples -----------------------------------------------------------


def run_mnist(d, kept):
    """MLP on MNIST (10 epochs fixed in main; 2 batches of 256 each)."""
    rng = np.random.default_rng(1)
    mnist = load_module(os.path.join(d, "mnist.py"), "mnist")

    def synthetic(*_a, **_k):
        x = rng.random((512 + 128, 784), dtype=np.float32)
        # Labels that depend on the images, so that training has a signal.
        y = (x[:, :10].argmax(axis=1)).astype(np.uint32)
        return x[:512], y[:512], x[512:], y[512:]

    mnist.mnist = synthetic
    main = load_module(os.path.join(d, "main.py"), "mnist_main")
    keep_models(main, "MLP", kept)
    seed_all()
    main.main(SimpleNamespace(dataset="mnist", gpu=False))


def run_transformer_lm(d, kept):
    """A 2-block decoder LM with gradient checkpointing, 20 AdamW steps."""
    rng = np.random.default_rng(2)
    datasets = load_module(os.path.join(d, "datasets.py"), "datasets")

    def synthetic(_name):
        vocab = [f"w{i}" for i in range(64)]
        # A repetitive token stream (learnable) with some noise.
        base = np.tile(np.arange(64), 40)
        noise = rng.integers(0, 64, size=base.shape)
        stream = np.where(rng.random(base.shape) < 0.2, noise, base).astype(np.uint32)
        return vocab, stream[:2000], stream[2000:2300], stream[2300:]

    datasets.load_dataset = synthetic
    main = load_module(os.path.join(d, "main.py"), "tlm_main")
    keep_models(main, "TransformerLM", kept)
    seed_all()
    main.main(
        SimpleNamespace(
            batch_size=4, context_size=16, steps_per_eval=10, steps_per_report=5,
            dataset="ptb", num_blocks=2, dim=32, num_heads=4, checkpoint=True,
            num_iters=20, learning_rate=3e-3, weight_decay=1e-5, lr_warmup=5,
            eval_test=True, gpu=False,
        )
    )


def run_gcn(d, kept):
    """A 2-layer GCN with dropout (the RNG state is compiled in) on a random
    1500-node graph (main's masks need 1500 nodes), 20 Adam steps."""
    import mlx.core as mx

    rng = np.random.default_rng(3)
    sys.path.insert(0, d)
    datasets = load_module(os.path.join(d, "datasets.py"), "datasets")
    import scipy.sparse as sparse

    def synthetic(_config):
        n, f, classes = 1500, 32, 7
        labels = rng.integers(0, classes, size=n)
        feats = (rng.random((n, f)) < 0.1).astype(np.float32)
        feats[np.arange(n), labels] = 1.0  # a feature that tells the class
        src = rng.integers(0, n, size=6000)
        dst = rng.integers(0, n, size=6000)
        adj = sparse.coo_matrix((np.ones(6000), (src, dst)), shape=(n, n), dtype=np.float32)
        adj = adj + adj.T.multiply(adj.T > adj)
        adj = datasets.normalize_adjacency(adj)
        return (mx.array(feats), mx.array(labels, mx.int32),
                mx.array(adj.toarray().astype(np.float32)))

    main = load_module(os.path.join(d, "main.py"), "gcn_main")
    main.load_data = synthetic
    keep_models(main, "GCN", kept)
    seed_all()
    main.main(
        SimpleNamespace(
            hidden_dim=16, dropout=0.5, nb_layers=2, nb_classes=7, bias=True,
            lr=0.01, weight_decay=5e-4, patience=20, epochs=20,
        )
    )


def run_normalizing_flow(d, kept):
    """RealNVP on two moons (sklearn, from NumPy's seed), 30 Adam steps, then
    main's own sampling and plot (matplotlib's Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    sys.path.insert(0, d)
    main = load_module(os.path.join(d, "main.py"), "nf_main")
    keep_models(main, "RealNVP", kept)
    make_moons = main.get_moons_dataset
    # main asks for 100k points; 4k keep the plot cheap.
    main.get_moons_dataset = lambda n_samples, noise: make_moons(4000, noise)
    seed_all()
    main.main(
        SimpleNamespace(
            n_steps=30, n_batch=64, n_transforms=2, d_params=2, d_hidden=32,
            n_layers=2, learning_rate=3e-3, noise=0.06, cpu=True,
        )
    )


def run_cvae(d, kept):
    """The convolutional VAE on 16 random 'MNIST' images through mlx.data
    (shuffle, resize, batch): 2 AdamW steps (main divides by the last batch
    index, so one batch would not do), then main's reconstructions, samples
    and save_weights."""
    import mlx.data.datasets as dxd

    rng = np.random.default_rng(4)
    dxd.load_mnist = lambda root=None, train=True: fake_image_buffer(
        16 if train else 8, 28, 28, 1, 10, rng
    )
    deterministic_mlx_data()
    sys.path.insert(0, d)
    load_module(os.path.join(d, "dataset.py"), "dataset")
    vae = load_module(os.path.join(d, "vae.py"), "vae")
    keep_models(vae, "CVAE", kept)
    main = load_module(os.path.join(d, "main.py"), "cvae_main")
    seed_all()
    main.main(
        SimpleNamespace(
            batch_size=8, max_filters=16, epochs=1, lr=1e-3, latent_dims=4,
            save_dir=os.path.join(os.getcwd(), "cvae_out"), cpu=True, seed=0,
        )
    )


def run_cifar(d, kept):
    """ResNet-20 on 8 random 32x32 'CIFAR' images through mlx.data
    (shuffle, flips, padding, random crops): one Adam step (more steps
    through its 19 BatchNorms turn rounding into chaos, see the test), and
    the test epoch on 16 images."""
    import mlx.data.datasets as dxd

    rng = np.random.default_rng(5)
    dxd.load_cifar10 = lambda root=None, train=True: fake_image_buffer(
        8 if train else 16, 32, 32, 3, 10, rng
    )
    deterministic_mlx_data()
    sys.path.insert(0, d)
    resnet = load_module(os.path.join(d, "resnet.py"), "resnet")
    keep_models(resnet, "resnet20", kept)
    load_module(os.path.join(d, "dataset.py"), "dataset")
    main = load_module(os.path.join(d, "main.py"), "cifar_main")
    main.main(SimpleNamespace(arch="resnet20", batch_size=8, epochs=1, lr=1e-3,
                              seed=0, cpu=True))


def run_speechcommands(d, kept):
    """The keyword transformer (kwt1) on 32 random one-second clips through
    mlx.data's MFSC features, 1 epoch of SGD with momentum, validation and
    test."""
    import mlx.data as dx
    import mlx.data.datasets as dxd

    rng = np.random.default_rng(6)

    def synthetic(split="train", root=None):
        n = 32 if split == "train" else 16
        audio = (rng.standard_normal((n, 16000, 1)) * 0.1).astype(np.float32)
        labels = rng.integers(0, 35, size=(n,)).astype(np.int64)
        return dx.buffer_from_vector(
            [{"audio": audio[i], "label": np.array(labels[i])} for i in range(n)]
        )

    dxd.load_speechcommands = synthetic
    deterministic_mlx_data()
    sys.path.insert(0, d)
    kwt = load_module(os.path.join(d, "kwt.py"), "kwt")
    keep_models(kwt, "kwt1", kept)
    main = load_module(os.path.join(d, "main.py"), "sc_main")
    main.main(SimpleNamespace(arch="kwt1", batch_size=16, epochs=1, lr=1e-3,
                              seed=0, cpu=True))


def lora_model_dir(d, seed=0):
    """A tiny random Llama as lora's utils.load reads it: config.json,
    weights in safetensors, and a byte-level tokenizer (258 tokens) saved
    by transformers.  Made once by the MLX side; the cmlx side loads it."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from tokenizers import Tokenizer, decoders, models as tmodels, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.getcwd(), "..", "lora_model")
    if os.path.exists(os.path.join(path, "config.json")):
        return path
    os.makedirs(path, exist_ok=True)
    vocab = {"<s>": 0, "</s>": 1}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    tok = Tokenizer(tmodels.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>",
                            eos_token="</s>").save_pretrained(path)
    config = dict(model_type="llama", hidden_size=32, num_hidden_layers=2,
                  intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
                  rms_norm_eps=1e-5, vocab_size=len(vocab))
    models = load_module(os.path.join(d, "models.py"), "lora_models_init")
    mx.random.seed(seed)
    model = models.Model(models.ModelArgs.from_dict(config))
    mx.save_safetensors(os.path.join(path, "weights.safetensors"),
                        dict(tree_flatten(model.parameters())))
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)
    return path


def run_lora(d, kept):
    """LoRA fine-tuning of a tiny random Llama on the example's own wikisql
    data (data/*.jsonl, in the checkout): 10 Adam steps on the last layer's
    adapters, validation, test loss, then 12 greedy tokens from a prompt.
    lora.py has no main function: it runs as __main__ with its command line."""
    import runpy

    path = lora_model_dir(d)
    utils = load_module(os.path.join(d, "utils.py"), "utils")
    load = utils.load

    def load_and_keep(*a, **k):  # returns (model, tokenizer, config)
        r = load(*a, **k)
        kept.append(r[0])
        return r

    utils.load = load_and_keep
    seed_all()
    adapters = os.path.join(os.getcwd(), "adapters.npz")
    sys.argv = ["lora.py", "--model", path, "--train", "--data", os.path.join(d, "data"),
                "--lora-layers", "1", "--batch-size", "2", "--iters", "10",
                "--val-batches", "2", "--learning-rate", "1e-3", "--steps-per-report", "5",
                "--steps-per-eval", "10", "--adapter-file", adapters, "--save-every", "100",
                "--test", "--test-batches", "2", "--max-tokens", "12", "--temp", "0",
                "--prompt", "table: 1-10015132-11\ncolumns: Player, No.\nQ: Who is No. 3?\nA: "]
    runpy.run_path(os.path.join(d, "lora.py"), run_name="__main__")


def run_bert(d, kept):
    """bert: a tiny random BERT made with transformers (torch) and saved as
    a Hugging Face directory with a WordPiece tokenizer (MLX side, once);
    the example's convert.py turns it into its npz, and model.run (what
    its command line calls) embeds a padded batch of two sentences."""
    path = os.path.join(os.getcwd(), "..", "bert_model")
    npz = os.path.join(path, "bert.npz")
    convert = load_module(os.path.join(d, "convert.py"), "bert_convert")
    if not os.path.exists(npz):
        import torch
        from transformers import BertConfig, BertModel, BertTokenizerFast

        os.makedirs(path, exist_ok=True)
        words = ("this is an example of bert working in mlx the a small test "
                 "sentence with words").split()
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + [
            "##" + c for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
        with open(os.path.join(path, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
        BertTokenizerFast(os.path.join(path, "vocab.txt")).save_pretrained(path)
        torch.manual_seed(0)
        BertModel(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=4, intermediate_size=64,
                             max_position_embeddings=64)).save_pretrained(path)
        convert.convert(path, npz)
    model = load_module(os.path.join(d, "model.py"), "bert_model_py")
    load = model.load_model

    def load_and_keep(*a, **k):
        m, tok = load(*a, **k)
        kept.append(m)
        return m, tok

    model.load_model = load_and_keep
    y, pooled = model.run(path, npz, ["This is an example of BERT working in MLX",
                                      "a small test"])
    return {"hidden": y, "pooled": pooled}


EXAMPLES = {
    "mnist": run_mnist,
    "transformer_lm": run_transformer_lm,
    "gcn": run_gcn,
    "normalizing_flow": run_normalizing_flow,
    "cvae": run_cvae,
    "cifar": run_cifar,
    "speechcommands": run_speechcommands,
    "lora": run_lora,
    "bert": run_bert,
}


@contextlib.contextmanager
def captured_stdout():
    """What the example prints, caught at file descriptor 1: lora.py
    replaces sys.stdout by a new file on that descriptor."""
    sys.stdout.flush()
    saved = os.dup(1)
    tmp = tempfile.TemporaryFile(mode="w+b")
    os.dup2(tmp.fileno(), 1)
    res = SimpleNamespace(text="")
    stdout = sys.stdout
    try:
        yield res
    finally:
        try:
            sys.stdout.flush()
        except ValueError:
            pass
        sys.stdout = stdout
        stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        tmp.seek(0)
        res.text = tmp.read().decode("utf-8", "replace")
        tmp.close()


def printed_numbers(text):
    """The numbers printed, in order, and each one's last printed digit
    (0.01 for "2.57"): two sides agree to within rounding at that digit."""
    nums, units = [], []
    for line in text.splitlines():
        # "\r" progress lines: only what was last drawn counts.
        line = TIMING.sub("", line.split("\r")[-1])
        for x in NUMBER.findall(line):
            mant = x.lower().split("e")[0]
            exp = int(x.lower().split("e")[1]) if "e" in x.lower() else 0
            decimals = len(mant.split(".")[1]) if "." in mant else 0
            nums.append(float(x))
            units.append(10.0 ** (exp - decimals))
    return np.array(nums, dtype=np.float64), np.array(units, dtype=np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mlx", "cmlx"), required=True)
    ap.add_argument("--example", choices=sorted(EXAMPLES), required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    import mlx.core as mx
    from mlx.utils import tree_flatten

    mx.set_default_device(mx.cpu)
    if a.side == "mlx" and os.environ.get("CMLX_EXAMPLES_MLX_COMPILE") != "1":
        # Real MLX's CPU compile builds each fused kernel with the system C++
        # compiler: a minute or more per example on a cold cache (gcn 80 s,
        # normalizing_flow 100 s on 2 busy cores).  The reference runs
        # uncompiled (the same arithmetic, in float32); cmlx still compiles.
        mx.disable_compile()
    d = os.path.join(a.examples, a.example)
    work = os.path.join(os.path.dirname(os.path.abspath(a.out)), f"work_{a.example}")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)  # outputs the example writes (plots, weights) land here
    sys.path.insert(0, d)
    kept = []
    with captured_stdout() as cap:
        outputs = EXAMPLES[a.example](d, kept) or {}
    text = cap.text
    sys.stdout.write(text)
    assert kept, "the example built no model through the wrapped constructor"
    nums, units = printed_numbers(text)
    out = {"printed": nums, "printed_unit": units, "printed_text": np.array(text),
           "impl": np.array(mx.__file__)}
    for k, v in tree_flatten(kept[-1].parameters()):
        out[f"param:{k}"] = np.array(v.astype(mx.float32))
    for k, v in outputs.items():  # what the program computed, beside training
        out[f"output:{k}"] = np.array(v.astype(mx.float32))
    np.savez(a.out, **out)


if __name__ == "__main__":
    main()
