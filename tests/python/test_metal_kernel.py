"""mx.fast.metal_kernel without Metal, as MLX's CPU build: a call raises
"No Metal back-end" except while a function is traced for export, where it
is recorded as a CustomKernel node that MLX's importer reads (byte for byte
MLX's file) and whose evaluation raises "Custom kernels only run on GPU."."""
import struct
import subprocess
import sys

import pytest

import cmlx.core as mx

try:
    import mlx.core as mlx
except ImportError:  # the oracle is optional
    mlx = None

needs_mlx = pytest.mark.skipif(mlx is None, reason="needs real MLX")

SOURCE = """
    uint elem = thread_position_in_grid.x;
    out[elem] = a[elem] + b_shape[0];
"""


def _kernel(m, **kw):
    return m.fast.metal_kernel(
        name="k", input_names=["a", "b"], output_names=["out"], source=SOURCE, **kw
    )


def _call(m, kernel, **kw):
    def call(a, b):
        return kernel(
            inputs=[a, b],
            grid=(a.size, 1, 1),
            threadgroup=(4, 1, 1),
            output_shapes=[a.shape],
            output_dtypes=[a.dtype],
            **kw,
        )[0]

    return call


def _args(m):
    return m.zeros((2, 2)), m.ones((10,), dtype=m.float16)


def test_outside_export_raises():
    call = _call(mx, _kernel(mx))
    a, b = _args(mx)
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        call(a, b)
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        mx.eval(mx.compile(call)(a, b))
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        mx.grad(lambda x: call(x, b).sum())(a)


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least one output"):
        mx.fast.metal_kernel(name="k", input_names=[], output_names=[], source="")
    with pytest.raises(ValueError, match="math_mode"):
        _kernel(mx, compile_options={"math_mode": "quick"})
    with pytest.raises(ValueError, match="Unknown compile option `speed`"):
        _kernel(mx, compile_options={"speed": "fast"})
    with pytest.raises(ValueError, match="to be a dict"):
        _kernel(mx, compile_options=["fast"])
    kernel = _kernel(mx)
    a, b = _args(mx)
    with pytest.raises(ValueError, match="Expected `inputs` to have size 2 but got size 1"):
        kernel(inputs=[a], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(2,)],
               output_dtypes=[mx.float32])
    with pytest.raises(ValueError, match="`output_dtypes` to have size 1 but got size 2"):
        kernel(inputs=[a, b], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(2,)],
               output_dtypes=[mx.float32, mx.int32])
    with pytest.raises(TypeError):
        kernel(inputs=[a, b], grid=(1, 1, 1))


@pytest.mark.parametrize("stream", [mx.cpu, mx.Device(mx.cpu), mx.default_stream(mx.cpu)])
def test_export_cpu_stream_raises(tmp_path, stream):
    call = _call(mx, _kernel(mx), stream=stream)
    with pytest.raises(ValueError, match=r"\[metal_kernel\] Only supports the GPU."):
        mx.export_function(str(tmp_path / "f.mlxfn"), call, *_args(mx))
    # the tracing flag is reset after the failed export
    with pytest.raises(RuntimeError, match="No Metal back-end"):
        _call(mx, _kernel(mx))(*_args(mx))


@pytest.mark.parametrize("shapeless", [False, True])
def test_export_import_and_eval_raises(tmp_path, shapeless):
    path = str(tmp_path / "f.mlxfn")
    call = _call(mx, _kernel(mx), stream=mx.gpu)
    a, b = _args(mx)
    mx.export_function(path, call, a, b, shapeless=shapeless)
    imported = mx.import_function(path)
    out = imported(a, b)[0]
    assert out.shape == (2, 2) and out.dtype == mx.float32
    with pytest.raises(RuntimeError, match="Custom kernels only run on GPU."):
        mx.eval(out)


def test_multi_output_template_and_verbose(tmp_path, capfd):
    kernel = mx.fast.metal_kernel(
        name="two", input_names=["x"], output_names=["o1", "o2"],
        source="o1[0] = x; o2[thread_index_in_simdgroup] = N;",
    )

    def call(x):
        return kernel(inputs=[x], grid=(1, 1, 1), threadgroup=(1, 1, 1),
                      output_shapes=[(3,), (2, 2)], output_dtypes=[mx.float32, mx.int32],
                      template=[("T", mx.float32), ("N", 3), ("B", True)], init_value=0.5,
                      verbose=True)

    path = str(tmp_path / "two.mlxfn")
    mx.export_function(path, call, mx.array(1.0))
    text = capfd.readouterr().out
    name = "custom_kernel_two__float_3_1_floats_float_int32_t"
    assert "Generated source code for `two`:" in text
    assert "template <typename T, int N, bool B>\n[[kernel]] void " + name + "(\n" in text
    assert "  const constant float& x [[buffer(0)]],\n" in text
    assert "  uint thread_index_in_simdgroup [[thread_index_in_simdgroup]]) {\n" in text
    assert f'[[host_name("{name}")]] [[kernel]] decltype({name}<float, 3, 1>)' in text
    outs = mx.import_function(path)(mx.array(2.0))
    assert [o.shape for o in outs] == [(3,), (2, 2)]
    assert [o.dtype for o in outs] == [mx.float32, mx.int32]
    with pytest.raises(RuntimeError, match="only run on GPU"):
        mx.eval(outs)
    with pytest.raises(ValueError, match="Invalid template argument"):
        kernel(inputs=[mx.array(1.0)], grid=(1, 1, 1), threadgroup=(1, 1, 1),
               output_shapes=[(3,), (2, 2)], output_dtypes=[mx.float32, mx.int32],
               template=[("T", 1.5)])


def _state_span(data, source_len, ninputs, has_init):
    """From the CustomKernel name to the end of its state."""
    i = data.index(b"CustomKernel") - 8
    name_end = i + 8 + 12
    (klen,) = struct.unpack_from("<Q", data, name_end)
    src = name_end + 8 + klen
    (slen,) = struct.unpack_from("<Q", data, src)
    end = src + 8 + slen + 24 + 8 + 3 * ninputs + 1 + 1 + (4 if has_init else 0) + 8 + 1 + 4 + 4
    return data[i:end]


@needs_mlx
@pytest.mark.parametrize("mode", [None, "safe", "relaxed", "fast"])
def test_file_matches_mlx(tmp_path, mode):
    opts = None if mode is None else {"math_mode": mode}
    files = []
    for m in (mx, mlx):
        path = str(tmp_path / f"{m.__name__}.mlxfn")
        m.export_function(path, _call(m, _kernel(m, compile_options=opts), stream=m.gpu),
                          *_args(m))
        with open(path, "rb") as f:
            files.append(f.read())
    ours, theirs = files
    assert len(ours) == len(theirs)
    span = _state_span(theirs, len(SOURCE), 2, False)
    assert _state_span(ours, len(SOURCE), 2, False) == span
    assert span.endswith(struct.pack("<i", ["safe", "relaxed", "fast"].index(mode or "safe")))
    # MLX's CPU build reads both files alike: its first import refuses to
    # make the GPU stream, a second one (the stream then exists) reads the
    # whole file
    script = (
        "import sys, mlx.core as m\n"
        "try:\n    m.import_function(sys.argv[1]); print('first ok')\n"
        "except ValueError as e:\n    print(e)\n"
        "m.import_function(sys.argv[1]); print('read')\n"
    )
    results = []
    for data in files:
        path = str(tmp_path / "x.mlxfn")
        with open(path, "wb") as f:
            f.write(data)
        r = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        results.append(r.stdout)
    assert results[0] == results[1]
    assert results[0].endswith("read\n")
    # and cmlx reads MLX's file
    path = str(tmp_path / "mlx.core.mlxfn")
    out = mx.import_function(path)(*_args(mx))[0]
    assert out.shape == (2, 2)
    with pytest.raises(RuntimeError, match="only run on GPU"):
        mx.eval(out)
