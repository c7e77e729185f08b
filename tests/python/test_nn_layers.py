"""cmlx.nn layers and activations against real MLX on the same weights and
inputs (and against NumPy formulas where the oracle is absent).  Layers that
call ``mx.fast`` / ``mx.linalg`` run on the stand-ins of
``nn_support.reference_ops`` until those namespaces are built; layers that
need conv, quantization or compile are skipped until those ops exist."""

import math

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from nn_support import assert_close, nn, ref_nn, reference_ops, same_weights, utils

RNG = np.random.default_rng(7)


def dname(a):
    return str(a.dtype).split(".")[-1]


def data(*shape, scale=1.0):
    return (RNG.normal(size=shape) * scale).astype(np.float32)


def compare(make, *inputs, rtol=1e-5, atol=1e-6, call=None, train=True, seed=None):
    """Builds the layer with both libraries, copies MLX's weights into ours,
    runs both on ``inputs`` (NumPy arrays) and compares."""
    ref = make(ref_nn)
    ours = same_weights(ref, make(nn))
    if not train:
        ref.eval()
        ours.eval()
    call = call or (lambda m, *xs: m(*xs))
    if seed is not None:
        mx.random.seed(seed)
    with reference_ops():
        out = call(ours, *(None if x is None else mx.array(x) for x in inputs))
    if seed is not None:
        mlx_ref.random.seed(seed)
    expect = call(ref, *(None if x is None else mlx_ref.array(x) for x in inputs))
    if isinstance(expect, tuple):
        for a, b in zip(out, expect):
            assert_close(a, b, rtol, atol)
    else:
        assert out.shape == expect.shape
        assert dname(out) == dname(expect)
        assert_close(out, expect, rtol, atol)
    return ours, ref


ACTIVATIONS = [
    "sigmoid", "relu", "relu2", "relu6", "leaky_relu", "log_softmax", "elu", "softmax",
    "softplus", "softsign", "softshrink", "celu", "silu", "log_sigmoid", "gelu",
    "gelu_approx", "gelu_fast_approx", "glu", "step", "selu", "mish", "hardswish",
    "hard_tanh", "hard_shrink", "softmin", "tanh",
]  # fmt: skip

CLASSES = [
    "Sigmoid", "ReLU", "ReLU2", "ReLU6", "LeakyReLU", "LogSoftmax", "ELU", "Softmax",
    "Softplus", "Softsign", "Softshrink", "CELU", "SiLU", "LogSigmoid", "GELU", "GLU",
    "Step", "SELU", "Mish", "Hardswish", "HardTanh", "HardShrink", "Softmin", "Tanh", "PReLU",
]  # fmt: skip


@needs_oracle
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_activation_functions(name, dtype):
    x = data(4, 6, scale=3.0)
    x[0, :3] = [0.0, 0.5, -0.5]
    ours = getattr(nn, name)(mx.array(x).astype(getattr(mx, dtype)))
    ref = getattr(ref_nn, name)(mlx_ref.array(x).astype(getattr(mlx_ref, dtype)))
    assert ours.shape == ref.shape and dname(ours) == dname(ref)
    tol = 1e-5 if dtype == "float32" else 2e-3
    assert_close(ours.astype(mx.float32), ref.astype(mlx_ref.float32), tol, tol)


@needs_oracle
@pytest.mark.parametrize("name", CLASSES)
def test_activation_classes(name):
    compare(lambda lib: getattr(lib, name)(), data(3, 8, scale=2.0))


@needs_oracle
@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.LeakyReLU(0.2),
        lambda lib: lib.ELU(0.5),
        lambda lib: lib.CELU(1.5),
        lambda lib: lib.GELU("tanh"),
        lambda lib: lib.GELU("fast"),
        lambda lib: lib.Softshrink(1.0),
        lambda lib: lib.HardShrink(0.2),
        lambda lib: lib.Step(0.3),
        lambda lib: lib.GLU(0),
        lambda lib: lib.PReLU(8, 0.1),
    ],
)
def test_activation_arguments(make):
    compare(make, data(4, 8, scale=2.0))


def test_activation_formulas():
    x = np.linspace(-4, 4, 17).astype(np.float32)
    a = mx.array(x)
    np.testing.assert_allclose(np.array(nn.relu6(a)), np.clip(x, 0, 6))
    np.testing.assert_allclose(np.array(nn.softplus(a)), np.log1p(np.exp(x)), rtol=1e-5)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(np.array(nn.gelu(a)), x * (1 + erf(x / np.sqrt(2))) / 2, atol=1e-6)
    np.testing.assert_allclose(np.array(nn.hardswish(a)), x * np.clip(x + 3, 0, 6) / 6, atol=1e-6)
    np.testing.assert_allclose(np.array(nn.mish(a)), x * np.tanh(np.log1p(np.exp(x))), atol=1e-6)
    assert np.array(nn.step(a)).dtype == np.int32
    with pytest.raises(ValueError, match="The approximation should be in"):
        nn.GELU("bad")


@needs_oracle
@pytest.mark.parametrize("bias", [True, False])
def test_linear_bilinear_identity(bias):
    compare(lambda lib: lib.Linear(5, 3, bias=bias), data(2, 4, 5))
    compare(lambda lib: lib.Bilinear(5, 4, 3, bias=bias), data(2, 3, 5), data(2, 3, 4))
    compare(lambda lib: lib.Identity(1, k=2), data(2, 3))
    lin = nn.Linear(5, 3, bias=bias)
    assert lin.weight.shape == (3, 5)
    assert ("bias" in lin) == bias
    assert float(np.abs(np.array(lin.weight)).max()) <= 1 / math.sqrt(5)
    assert repr(lin) == f"Linear(input_dims=5, output_dims=3, bias={bias})"


@needs_oracle
def test_sequential_and_embedding():
    compare(lambda lib: lib.Sequential(lib.Linear(4, 6), lib.ReLU(), lib.Linear(6, 2)), data(3, 4))
    ref = ref_nn.Embedding(10, 4)
    ours = same_weights(ref, nn.Embedding(10, 4))
    ids = np.array([[1, 9], [0, 3]])
    assert_close(ours(mx.array(ids)), ref(mlx_ref.array(ids)))
    x = data(2, 4)
    assert_close(ours.as_linear(mx.array(x)), ref.as_linear(mlx_ref.array(x)))
    assert nn.Embedding(7, 3).weight.shape == (7, 3)


@needs_oracle
@pytest.mark.parametrize("shape", [(4, 5, 6), (2, 3, 4, 6), (8, 6)])
def test_batch_norm(shape):
    def make(lib):
        return lib.BatchNorm(6, momentum=0.2)

    ours, ref = compare(make, data(*shape))
    assert_close(ours.running_mean, ref.running_mean)
    assert_close(ours.running_var, ref.running_var)
    assert "running_mean" not in ours.trainable_parameters()
    ours.eval()
    ref.eval()
    x = data(*shape)
    assert_close(ours(mx.array(x)), ref(mlx_ref.array(x)))
    compare(lambda lib: lib.BatchNorm(6, affine=False, track_running_stats=False), data(*shape))
    with pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm(6)(mx.zeros((1, 6)))
    with pytest.raises(ValueError, match="Expected input tensor to have 2, 3 or 4"):
        nn.BatchNorm(6)(mx.zeros((6,)))


@needs_oracle
@pytest.mark.parametrize("pytorch_compatible", [False, True])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm(pytorch_compatible, affine):
    compare(
        lambda lib: lib.GroupNorm(2, 6, affine=affine, pytorch_compatible=pytorch_compatible),
        data(2, 4, 3, 6),
    )


@needs_oracle
def test_norm_layers():
    compare(lambda lib: lib.LayerNorm(6), data(3, 6))
    compare(lambda lib: lib.LayerNorm(6, affine=False), data(3, 6))
    compare(lambda lib: lib.LayerNorm(6, bias=False), data(3, 6))
    compare(lambda lib: lib.RMSNorm(6, eps=1e-3), data(2, 3, 6))
    compare(lambda lib: lib.InstanceNorm(6), data(2, 4, 5, 6))
    compare(lambda lib: lib.InstanceNorm(6, affine=True), data(2, 4, 6))
    for cls in ("LayerNorm", "RMSNorm", "InstanceNorm", "BatchNorm"):
        with pytest.raises(ValueError, match=f"\\[{cls}\\] 'eps' must be positive"):
            getattr(nn, cls)(4, eps=0.0)
    with pytest.raises(ValueError, match="evenly divisible"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        nn.InstanceNorm(4)(mx.zeros((2, 4)))


@needs_oracle
def test_dropout():
    compare(lambda lib: lib.Dropout(0.3), data(50, 20), seed=3)
    compare(lambda lib: lib.Dropout2d(0.5), data(2, 4, 4, 8), seed=4)
    compare(lambda lib: lib.Dropout3d(0.5), data(2, 3, 4, 4, 8), seed=5)
    compare(lambda lib: lib.Dropout(0.3), data(5, 6), train=False)
    y = np.array(nn.Dropout2d(0.5)(mx.ones((2, 4, 4, 8))))
    # whole channels dropped: every spatial position agrees
    assert np.all(y == y[:, :1, :1, :])
    assert set(np.unique(y)) <= {0.0, 2.0}
    with pytest.raises(ValueError, match=r"not in \[0, 1\)"):
        nn.Dropout(1.0)
    with pytest.raises(ValueError, match="Expected 3 or 4 dimensions"):
        nn.Dropout2d()(mx.zeros((2, 2)))


@needs_oracle
@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda lib: lib.MaxPool1d(2), (2, 8, 3)),
        (lambda lib: lib.AvgPool1d(3, stride=2, padding=1), (2, 9, 3)),
        (lambda lib: lib.MaxPool2d((2, 3), stride=(1, 2)), (2, 6, 7, 3)),
        (lambda lib: lib.AvgPool2d(2), (1, 4, 6, 2)),
        (lambda lib: lib.MaxPool2d(3, padding=1), (1, 5, 5, 2)),
        (lambda lib: lib.AvgPool3d(2, stride=1), (1, 3, 4, 4, 2)),
        (lambda lib: lib.MaxPool3d((1, 2, 2)), (1, 2, 4, 4, 2)),
    ],
)
def test_pooling(make, shape):
    ours, ref = compare(make, data(*shape))
    assert repr(ours) == repr(ref)


def test_pooling_errors():
    with pytest.raises(ValueError, match="must be an integer or a tuple containing 2 integers"):
        nn.MaxPool2d((2, 2, 2))
    with pytest.raises(ValueError, match="'kernel_size' must be positive"):
        nn.AvgPool1d(0)
    with pytest.raises(ValueError, match="'padding' must be non-negative"):
        nn.AvgPool1d(2, padding=-1)
    with pytest.raises(ValueError, match="at least 1 spatial dimension"):
        nn.MaxPool1d(2)(mx.zeros((2, 2)))


@needs_oracle
@pytest.mark.parametrize("bias", [True, False])
def test_rnn_gru_lstm(bias):
    x = data(2, 5, 3)
    compare(lambda lib: lib.RNN(3, 4, bias=bias), x)
    compare(lambda lib: lib.RNN(3, 4, nonlinearity=lib.relu), x)
    compare(lambda lib: lib.GRU(3, 4, bias=bias), x)
    compare(lambda lib: lib.LSTM(3, 4, bias=bias), x)
    h = data(2, 4)
    compare(lambda lib: lib.GRU(3, 4, bias=bias), x, h)
    compare(lambda lib: lib.LSTM(3, 4, bias=bias), x, h, h)
    compare(lambda lib: lib.RNN(3, 4), x[0], h[0])
    with pytest.raises(ValueError, match="Nonlinearity must be callable"):
        nn.RNN(3, 4, nonlinearity="tanh")


@needs_oracle
def test_positional_encodings():
    compare(lambda lib: lib.SinusoidalPositionalEncoding(8), data(3, 5))
    compare(
        lambda lib: lib.SinusoidalPositionalEncoding(6, cos_first=True, full_turns=True, scale=1),
        data(4),
    )
    compare(lambda lib: lib.SinusoidalPositionalEncoding(2), data(4))
    compare(lambda lib: lib.ALiBi(), data(2, 4, 3, 3))
    compare(lambda lib: lib.ALiBi(), data(1, 6, 2, 5), call=lambda m, s: m(s, offset=3))
    slope = nn.ALiBi.create_alibi_slope(8, mx.float32)
    np.testing.assert_allclose(np.array(slope).ravel(), [2.0 ** -(i + 1) for i in range(8)])
    compare(lambda lib: lib.RoPE(8), data(2, 3, 5, 8))
    compare(lambda lib: lib.RoPE(4, traditional=True, base=100.0), data(1, 2, 6, 8))
    compare(lambda lib: lib.RoPE(8, scale=0.5), data(1, 6, 8), call=lambda m, x: m(x, offset=2))
    with pytest.raises(ValueError, match="dims must be positive and even"):
        nn.SinusoidalPositionalEncoding(3)


@needs_oracle
def test_attention_and_transformer():
    q, kv = data(2, 5, 8), data(2, 7, 8)
    mask = np.array(nn.MultiHeadAttention.create_additive_causal_mask(5))
    assert mask[0, 1] == np.finfo(np.float32).min and mask[1, 0] == 0
    compare(lambda lib: lib.MultiHeadAttention(8, 2), q, kv, kv)
    compare(
        lambda lib: lib.MultiHeadAttention(8, 4, value_dims=12, value_output_dims=6, bias=True),
        q,
        kv,
        kv,
    )
    compare(lambda lib: lib.MultiHeadAttention(8, 2), q, q, q, mask, atol=1e-5)
    compare(lambda lib: lib.TransformerEncoderLayer(8, 2, 16), q, mask, atol=1e-5)
    compare(lambda lib: lib.TransformerEncoderLayer(8, 2, norm_first=False), q, mask, atol=1e-5)
    compare(lambda lib: lib.TransformerEncoder(2, 8, 2, checkpoint=True), q, mask, atol=1e-5)
    compare(lambda lib: lib.TransformerDecoderLayer(8, 2), q, kv, mask, None, atol=1e-5)
    compare(
        lambda lib: lib.TransformerDecoder(2, 8, 2, norm_first=False), q, kv, mask, None, atol=1e-5
    )
    compare(lambda lib: lib.Transformer(8, 2, 1, 2, 16), kv, q, None, mask, None, atol=1e-5)
    # the stacks take their masks by keyword too
    enc = nn.TransformerEncoder(1, 8, 2)
    dec = nn.TransformerDecoder(1, 8, 2)
    with reference_ops():
        mem = enc(mx.array(kv), mask=None)
        out = dec(mx.array(q), memory=mem, x_mask=mx.array(mask), memory_mask=None)
    assert out.shape == (2, 5, 8)
    t = nn.Transformer(dims=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                       custom_encoder=nn.Identity())  # fmt: skip
    assert isinstance(t.encoder, nn.Identity)
    with pytest.raises(ValueError, match="divisible by the number of heads"):
        nn.MultiHeadAttention(6, 4)


@needs_oracle
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("scale", [2, 1.5, (2, 0.5), 0.75])
@pytest.mark.parametrize("align_corners", [False, True])
def test_upsample(mode, scale, align_corners):
    if mode == "nearest" and align_corners:
        pytest.skip("align_corners does not apply to nearest")
    compare(lambda lib: lib.Upsample(scale, mode, align_corners), data(2, 4, 5, 3), atol=1e-5)


@needs_oracle
@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scale", [0.5, 0.4, 2])
def test_upsample_antialias(mode, scale):
    compare(lambda lib: lib.Upsample(scale, mode, antialias=True), data(1, 10, 3), atol=1e-5)
    compare(
        lambda lib: lib.Upsample((scale, 1.0), mode, antialias=True), data(1, 6, 4, 2), atol=1e-5
    )


def test_upsample_errors():
    with pytest.raises(ValueError, match="unsupported upsampling algorithm"):
        nn.Upsample(2, "area")
    with pytest.raises(ValueError, match="Antialiasing is not supported for nearest"):
        nn.Upsample(2, antialias=True)
    with pytest.raises(ValueError, match="align_corners=True is not supported"):
        nn.Upsample(2, "linear", align_corners=True, antialias=True)
    with pytest.raises(ValueError, match="at least 1 spatial dimension"):
        nn.Upsample(2)(mx.zeros((2, 3)))
    with pytest.raises(ValueError, match="One scale per spatial dimension"):
        nn.Upsample((2, 2))(mx.zeros((1, 2, 3)))
    y = nn.Upsample(2)(mx.array(np.arange(6, dtype=np.float32).reshape(1, 3, 2)))
    assert np.array_equal(np.array(y)[0, :, 0], [0, 0, 2, 2, 4, 4])


def test_conv_layer_shapes_and_repr():
    # construction needs no conv op; the call needs mx.conv*
    c = nn.Conv2d(4, 8, (3, 2), stride=2, groups=2)
    assert c.weight.shape == (8, 3, 2, 2) and c.bias.shape == (8,)
    assert repr(c) == (
        "Conv2d(4, 8, kernel_size=(3, 2), stride=(2, 2), padding=(0, 0), dilation=1, "
        "groups=2, bias=True)"
    )
    assert nn.Conv1d(3, 5, 4).weight.shape == (5, 4, 3)
    assert nn.Conv3d(3, 5, 2, bias=False).weight.shape == (5, 2, 2, 2, 3)
    t = nn.ConvTranspose2d(3, 6, 3, output_padding=1)
    assert t.weight.shape == (6, 3, 3, 3) and t.output_padding == (1, 1)
    assert nn.ConvTranspose1d(3, 6, 5).weight.shape == (6, 5, 3)
    assert nn.ConvTranspose3d(3, 6, (1, 2, 3)).weight.shape == (6, 1, 2, 3, 3)
    with pytest.raises(ValueError, match="must be divisible by the number of groups"):
        nn.Conv1d(3, 6, 2, groups=2)


@needs_oracle
def test_conv_reprs_match_mlx():
    for name, args, kw in [
        ("Conv1d", (3, 6, 2), {"stride": 2, "groups": 3}),
        ("Conv2d", (4, 8, 3), {"padding": 1, "dilation": 2}),
        ("Conv3d", (2, 3, 2), {}),
        ("ConvTranspose1d", (3, 6, 2), {"output_padding": 1}),
        ("ConvTranspose2d", (4, 8, 3), {"padding": 1}),
        ("ConvTranspose3d", (2, 3, 2), {"bias": False}),
    ]:
        ours, ref = getattr(nn, name)(*args, **kw), getattr(ref_nn, name)(*args, **kw)
        assert repr(ours) == repr(ref)
        assert [(k, v.shape) for k, v in utils.tree_flatten(ours.parameters())] == [
            (k, v.shape) for k, v in utils.tree_flatten(ref.parameters())
        ]


@needs_oracle
@pytest.mark.skipif(not hasattr(mx, "conv2d"), reason="waits for mx.conv*")
def test_conv_layers():
    compare(lambda lib: lib.Conv1d(4, 6, 3, stride=2, padding=1), data(2, 9, 4), atol=1e-5)
    compare(lambda lib: lib.Conv2d(4, 6, 3, groups=2), data(2, 6, 6, 4), atol=1e-5)
    compare(lambda lib: lib.Conv3d(2, 3, 2), data(1, 4, 4, 4, 2), atol=1e-5)
    compare(lambda lib: lib.ConvTranspose2d(4, 3, 3, stride=2), data(1, 4, 4, 4), atol=1e-5)


@needs_oracle
@pytest.mark.skipif(not hasattr(mx, "quantize"), reason="waits for mx.quantize")
def test_quantized_layers():
    ref = ref_nn.Linear(128, 32)
    ours = same_weights(ref, nn.Linear(128, 32))
    x = data(3, 128)
    assert_close(ours.to_quantized()(mx.array(x)), ref.to_quantized()(mlx_ref.array(x)), 1e-4, 1e-4)
    m = nn.Sequential(nn.Embedding(5, 64), nn.Linear(64, 64))
    nn.quantize(m, group_size=32, bits=8)
    assert isinstance(m.layers[0], nn.QuantizedEmbedding)
    assert isinstance(m.layers[1], nn.QuantizedLinear)


def test_quantize_predicate_errors():
    class NoQuant(nn.Module):
        pass

    m = nn.Sequential(NoQuant())
    with pytest.raises(ValueError, match="Unable to quantize model"):
        nn.quantize(m, class_predicate=lambda p, mod: True)
    nn.quantize(m)  # nothing to quantize
    assert isinstance(m.layers[0], NoQuant)
    with pytest.raises(ValueError, match="Invalid quantization mode 'bad'"):
        nn.QuantizedLinear(64, 64, mode="bad")
    with pytest.raises(ValueError, match="Quantized input is not supported"):
        nn.Embedding(4, 64).to_quantized(quantize_input=True)
    with pytest.raises(ValueError, match="Quantized activations are only supported"):
        nn.Linear(64, 64).to_quantized(quantize_input=True)


@needs_oracle
def test_sharded_linear_single_process():
    ref = ref_nn.Linear(6, 4)
    lin = same_weights(ref, nn.Linear(6, 4))
    x = mx.array(data(3, 6))
    for cls in (nn.AllToShardedLinear, nn.ShardedToAllLinear):
        s = cls.from_linear(lin)
        assert s.weight.shape == (4, 6)
        assert_close(s(x), lin(x))
    assert nn.layers.distributed.fully_shard(lin) is lin
    assert (
        repr(nn.AllToShardedLinear(6, 4))
        == "AllToShardedLinear(input_dims=6, output_dims=4, bias=True)"
    )
