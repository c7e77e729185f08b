"""cmlx.nn.Module: the container, filters, updates, freezing, modes, dtype
and weights I/O, checked against fixed expectations and, with the oracle,
against mlx.nn.Module on the same model."""

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from nn_support import nn, ref_nn, ref_utils, same_weights, utils


def build(lib):
    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.Linear(3, 4)
            self.extra = {"scale": lib.Linear(4, 2, bias=False), "w": lib.Identity()}
            self.layers = [lib.ReLU(), lib.Linear(2, 2)]
            self.count = 3
            self._hidden = None

        def __call__(self, x):
            y = self.lin(x)
            y = self.extra["scale"](y)
            for layer in self.layers:
                y = layer(y)
            return y

    return Block()


def keys(tree, flatten):
    return [k for k, _ in flatten(tree)]


def test_parameters_and_children_structure():
    m = build(nn)
    assert keys(m.parameters(), utils.tree_flatten) == [
        "lin.weight",
        "lin.bias",
        "extra.scale.weight",
        "layers.1.weight",
        "layers.1.bias",
    ]
    assert m.parameters()["lin"]["weight"].shape == (4, 3)
    assert m.parameters()["layers"][0] == {}
    ch = m.children()
    assert set(ch) == {"lin", "extra", "layers"}
    assert isinstance(ch["extra"]["scale"], nn.Linear)
    leaves = utils.tree_flatten(m.leaf_modules(), is_leaf=nn.Module.is_module)
    assert [k for k, _ in leaves] == ["lin", "extra.scale", "extra.w", "layers.0", "layers.1"]
    names = [k for k, _ in m.named_modules()]
    assert names[0] == "" and len(m.modules()) == 6
    assert set(names) == {"", "lin", "extra.scale", "extra.w", "layers.0", "layers.1"}


@needs_oracle
def test_structure_matches_mlx():
    ours, ref = build(nn), build(ref_nn)
    assert keys(ours.parameters(), utils.tree_flatten) == keys(
        ref.parameters(), ref_utils.tree_flatten
    )
    assert [k for k, _ in ours.named_modules()] == [k for k, _ in ref.named_modules()]
    ours.freeze(keys="bias")
    ref.freeze(keys="bias")
    assert keys(ours.trainable_parameters(), utils.tree_flatten) == keys(
        ref.trainable_parameters(), ref_utils.tree_flatten
    )
    assert repr(ours) == repr(ref)


def test_attributes_and_deletion():
    m = build(nn)
    assert m.count == 3 and "count" not in m
    m.val = None
    assert m.val is None
    m.val = mx.array([1.0])
    assert "val" in m and m.val.item() == 1.0
    m.val = 5
    assert "val" not in m and m.val == 5
    lin = nn.Linear(2, 2)
    del lin.bias
    assert "bias" not in lin.parameters()
    assert lin(mx.zeros((1, 2))).shape == (1, 2)
    with pytest.raises(AttributeError):
        lin.nope
    assert lin.state is lin


def test_update_strict_and_errors():
    lin = nn.Linear(2, 3)
    lin.update({"weight": mx.ones((3, 2))})
    assert np.array(lin.weight).sum() == 6
    with pytest.raises(ValueError, match='Module does not have parameter named "nope"'):
        lin.update({"nope": mx.zeros(1)})
    with pytest.raises(ValueError, match="Received invalid type: int"):
        lin.update({"weight": 3})
    lin.update({"nope": mx.zeros(1)}, strict=False)
    seq = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="List index 1 is out of bounds"):
        seq.update({"layers": [{}, {}]})
    seq.update_modules({"layers": [nn.ReLU()]})
    assert isinstance(seq.layers[0], nn.ReLU)
    with pytest.raises(ValueError, match='Module does not have sub-module named "x"'):
        seq.update_modules({"x": nn.ReLU()})
    seq.update_modules({})


def test_apply_set_dtype_and_filter_and_map():
    m = nn.Sequential(nn.Linear(2, 2), nn.Embedding(3, 2))
    m.layers[1].ids = mx.array([1, 2])
    m.set_dtype(mx.float16)
    dtypes = {k: v.dtype for k, v in utils.tree_flatten(m.parameters())}
    assert dtypes["layers.0.weight"] == mx.float16
    assert dtypes["layers.1.ids"] == mx.int32
    m.set_dtype(mx.float32, predicate=None)
    assert m.layers[1].ids.dtype == mx.float32
    m.apply(lambda x: x * 0)
    assert all(np.all(np.array(v) == 0) for _, v in utils.tree_flatten(m.parameters()))
    shapes = m.filter_and_map(nn.Module.valid_parameter_filter, map_fn=lambda x: x.shape)
    assert shapes["layers"][0]["weight"] == (2, 2)


def test_freeze_unfreeze():
    m = build(nn)
    m.freeze()
    assert utils.tree_flatten(m.trainable_parameters()) == []
    m.unfreeze(keys=["bias"])
    assert keys(m.trainable_parameters(), utils.tree_flatten) == ["lin.bias", "layers.1.bias"]
    m.unfreeze()
    m.freeze(recurse=False)  # no own arrays: nothing changes
    assert len(utils.tree_flatten(m.trainable_parameters())) == 5
    m.lin.freeze(keys="weight", strict=True)
    assert "weight" not in m.lin.trainable_parameters()
    with pytest.raises(KeyError, match="Module doesn't contain member nope"):
        m.freeze(keys="nope", strict=True)
    with pytest.raises(KeyError):
        m.lin.freeze(keys="nope", recurse=False, strict=True)
    m.freeze(keys="bias", strict=True)  # exists somewhere: fine
    bn = nn.BatchNorm(3)
    bn.unfreeze()
    assert set(bn.trainable_parameters()) == {"weight", "bias"}


def test_train_eval():
    m = nn.Sequential(nn.Dropout(0.5), nn.Linear(2, 2))
    assert m.training and m.layers[0].training
    m.eval()
    assert not m.training and not m.layers[1].training
    x = mx.ones((4, 2))
    assert np.array_equal(np.array(m.layers[0](x)), np.ones((4, 2)))
    assert m.train() is m and m.layers[0].training


def test_load_weights_list_and_errors():
    lin = nn.Linear(2, 2)
    w = mx.ones((2, 2))
    with pytest.raises(ValueError, match="Missing 1 parameters"):
        lin.load_weights([("weight", w)])
    with pytest.raises(ValueError, match="Received 1 parameters not in model"):
        lin.load_weights([("weight", w), ("bias", mx.zeros(2)), ("x", w)])
    with pytest.raises(ValueError, match=r"Expected shape \(2, 2\) but received shape \(3,\)"):
        lin.load_weights([("weight", mx.zeros(3)), ("bias", mx.zeros(2))])
    lin.load_weights([("weight", w)], strict=False)
    assert np.array_equal(np.array(lin.weight), np.ones((2, 2)))
    lin.load_weights([], strict=False)
    with pytest.raises(ValueError, match="Unsupported file extension"):
        lin.save_weights("/tmp/x.bin")


@pytest.mark.skipif(not hasattr(mx, "save_safetensors"), reason="waits for mx.save/load")
@pytest.mark.parametrize("ext", [".npz", ".safetensors"])
def test_save_load_roundtrip(tmp_path, ext):
    a = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2))
    path = str(tmp_path / ("w" + ext))
    a.save_weights(path)
    b = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2)).load_weights(path)
    for (k, x), (_, y) in zip(
        utils.tree_flatten(a.parameters()), utils.tree_flatten(b.parameters())
    ):
        assert np.array_equal(np.array(x), np.array(y)), k


def test_value_and_grad():
    lin = nn.Linear(3, 1)
    lin.freeze(keys="bias")
    x = mx.array([[1.0, 2.0, 3.0]])

    def loss(x):
        return lin(x).sum()

    value, grads = nn.value_and_grad(lin, loss)(x)
    assert set(grads) == {"weight"}
    np.testing.assert_allclose(np.array(grads["weight"]), [[1.0, 2.0, 3.0]])
    expect = float((np.array(lin.weight) @ np.array(x).T).sum() + np.array(lin.bias).sum())
    assert abs(value.item() - expect) < 1e-5
    assert nn.average_gradients(grads) is grads
    # gradients through a module passed as an argument
    g = mx.grad(lambda m: m(x).sum())(lin)
    assert set(g) == {"weight", "bias"}


@needs_oracle
def test_value_and_grad_matches_mlx():
    ref = ref_nn.Sequential(ref_nn.Linear(4, 8), ref_nn.GELU(), ref_nn.Linear(8, 3))
    ours = same_weights(ref, nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3)))
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    y = np.array([0, 2, 1, 1, 0])

    def run(lib, model, core):
        fn = lib.value_and_grad(
            model, lambda a, b: lib.losses.cross_entropy(model(a), b, reduction="mean")
        )
        return fn(core.array(x), core.array(y))

    v1, g1 = run(nn, ours, mx)
    v2, g2 = run(ref_nn, ref, mlx_ref)
    assert abs(v1.item() - v2.item()) < 1e-5
    for (k, a), (_, b) in zip(utils.tree_flatten(g1), ref_utils.tree_flatten(g2)):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6, err_msg=k)


def test_checkpoint_and_encoder_checkpoint_flag():
    lin = nn.Linear(2, 2)
    x = mx.array([[1.0, -1.0]])
    f = nn.utils.checkpoint(lin)
    np.testing.assert_allclose(np.array(f(x)), np.array(lin(x)), rtol=1e-6)
