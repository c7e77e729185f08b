"""The functions behind the .mlxfn fixtures (make_fixtures.py writes them,
test_export_fixtures.py checks them): every primitive family export
supports, multi-output nodes, constants, keyword inputs, shapeless traces
and files of several traces.  Each is a function of (lib, *arrays), so the
same case runs on cmlx.core and on mlx.core.

A case is (name, fun, args, opts): args are numpy arrays (keyword inputs
in opts["kw"]); opts["traces"] lists further argument tuples traced into
the same file; opts["shapeless"] exports shapeless and opts["call"] are
inputs of other shapes to call it with; opts["mlx"] is False for files
MLX cannot write or read (cmlx's own primitive names), opts["mlx_runs"]
False for files MLX reads but evaluates only on the GPU."""
import numpy as np

RG = np.random.default_rng(18)


def r(*shape):
    return RG.standard_normal(shape).astype(np.float32)


X, Y = r(3, 4), np.abs(r(3, 4)) + 0.5
SPECIAL = np.array([[0.5, np.inf, -np.inf], [np.nan, -2.25, 1.255]], np.float32)
INTS = np.array([1, -3, 7, 0], np.int32)
SQ = r(3, 3) + 3 * np.eye(3, dtype=np.float32)
SPD = (lambda a: a @ a.T + np.eye(3, dtype=np.float32))(r(3, 3))


def _masked(m, x):
    a = x + 0
    a[x > 0.0] = m.arange(12, dtype=m.float32).reshape(3, 4)[x > 0.0]
    return a


def _masked_scatter(m, x):
    a = x + 0
    a[x > 0.2] = m.arange(12, dtype=m.float32)
    return a


def _conv_grad(m, x, w):
    return m.grad(lambda w: (m.conv_general(x, w, stride=2, padding=1) ** 2).sum())(w)


CASES = [
    # elementwise
    ("arith", lambda m, x, y: (x + y, x - y, x * y, x / y, x ** 2, -x, m.abs(x), x % y,
                               x // y, m.maximum(x, y), m.minimum(x, y), m.logaddexp(x, y),
                               m.arctan2(x, y)), (X, Y), {}),
    ("transcendental", lambda m, x, y: (m.exp(x), m.expm1(x), m.log(y), m.log2(y), m.log10(y),
                                        m.log1p(y), m.sqrt(y), m.rsqrt(y), m.square(x),
                                        m.sigmoid(x), m.erf(x), m.erfinv(x / 4)), (X, Y), {}),
    ("trig", lambda m, x, y: (m.sin(x), m.cos(x), m.tan(x), m.arcsin(x / 4), m.arccos(x / 4),
                              m.arctan(x), m.sinh(x), m.cosh(x), m.tanh(x), m.arcsinh(x),
                              m.arccosh(y + 1), m.arctanh(x / 4)), (X, Y), {}),
    ("rounding", lambda m, x, y: (m.floor(x), m.ceil(x), m.round(x), m.sign(x),
                                  m.reciprocal(y), m.degrees(x), m.radians(x)), (X, Y), {}),
    ("compare", lambda m, x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y,
                                 m.logical_and(x > 0, y > 1), m.logical_or(x > 0, y > 1),
                                 m.logical_not(x > 0), m.logical_xor(x > 0, y > 1)), (X, Y), {}),
    ("bitwise", lambda m, i: (i & 3, i | 4, i ^ 5, i << 1, i >> 1), (INTS,), {}),
    ("predicates", lambda m, a: (m.isnan(a), m.isinf(a), m.isposinf(a), m.isneginf(a),
                                 m.isfinite(a), m.nan_to_num(a, nan=3.0), m.round(a, 2)),
     (SPECIAL,), {}),
    ("int_predicates", lambda m, a: (m.isnan(a), m.isposinf(a), m.round(a, -1)), (INTS,), {}),
    ("complex", lambda m, x: (m.abs(x), m.real(x), m.imag(x), m.conjugate(x)),
     ((X + 1j * Y).astype(np.complex64),), {}),
    ("dtypes", lambda m, x: (x.astype(m.float16), x.astype(m.int32), x.view(m.uint32),
                             m.stop_gradient(x), m.as_strided(x, (2, 2), (4, 1), 1)), (X,), {}),
    # reductions and scans
    ("reduce", lambda m, x: (m.sum(x, 0), m.prod(x, 1, keepdims=True), m.max(x), m.min(x, 0),
                             m.mean(x, 1), m.all(x > 0, 1), m.any(x > 0), m.argmax(x, 1),
                             m.argmin(x, 0, keepdims=True), m.logsumexp(x, 1)), (X,), {}),
    ("scan", lambda m, x: (m.cumsum(x, 1), m.cumprod(x, 0), m.cummax(x, 1),
                           m.cummin(x, 0, reverse=True), m.cumsum(x, 1, inclusive=False)),
     (X,), {}),
    ("softmax", lambda m, x: (m.softmax(x, 1), m.softmax(x, 0, precise=True)), (X,), {}),
    # shapes and indexing
    ("shape", lambda m, x: (m.reshape(x, (4, 3)), m.transpose(x), m.expand_dims(x, 1),
                            m.squeeze(x[None]), m.flatten(x), m.unflatten(m.flatten(x), 0, (2, 6)),
                            m.broadcast_to(x[:1], (3, 4)), m.concatenate([x, x * 2], 1),
                            x[1:, ::2], x[::-1]), (X,), {}),
    ("split", lambda m, x: m.split(x, [1, 3], axis=1), (X,), {}),
    ("pad", lambda m, x: (m.pad(x, 1), m.pad(x, [(0, 1), (2, 0)], constant_values=3.0)), (X,), {}),
    ("gather", lambda m, x: (x[m.array([[0, 2], [1, 1]])], x[m.array([0, 2]), 1:3],
                             m.take_along_axis(x, m.argsort(x, 1), 1), m.take(x, m.array([2, 0]), 1)),
     (X,), {}),
    ("scatter", lambda m, x, y: (x.at[m.array([0, 0, 2])].add(y[0]),
                                 x.at[m.array([1, 2])].maximum(y[:2]),
                                 x.at[m.array([0, 1])].minimum(y[1:]),
                                 x.at[m.array([2])].multiply(y[:1]),
                                 m.put_along_axis(x, m.array([[0], [1], [2]]), y[:, :1], 1)),
     (X, Y), {}),
    ("slice_update", lambda m, x, y: (x.at[1:3].add(y[:2]), x.at[0].multiply(2.0),
                                      x.at[1, 1:3].multiply(y[0, :2])), (X, Y), {}),
    ("masked_scatter", _masked_scatter, (X,), {}),
    ("dynamic_slice", lambda m, x, y: (m.slice(x, m.array([1]), [0], [2, 4]),
                                       m.slice_update(x, y[:1], m.array([2]), [0])), (X, Y), {}),
    # (a partition's order is the implementation's: sorted before comparing)
    ("sort", lambda m, x: (m.sort(x, 1), m.argsort(x, 0), m.sort(m.partition(x, 1, 1), 1),
                           m.sort(m.take_along_axis(x, m.argpartition(x, 2, 1), 1), 1)), (X,), {}),
    ("where", lambda m, x, y: (m.where(x > 0, x, y), m.clip(x, -0.5, 0.5)), (X, Y), {}),
    ("divmod", lambda m, x, y: m.divmod(x * 10, y), (X, Y), {}),
    # linear algebra, fft, convolution
    ("matmul", lambda m, x, y: (x @ y.T, m.addmm(x, x, m.ones((4, 4)), 0.5, 2.0)), (X, Y), {}),
    ("linalg", lambda m, a, s: (m.linalg.inv(a, stream=m.cpu), m.linalg.cholesky(s, stream=m.cpu),
                                m.linalg.svd(a, compute_uv=False, stream=m.cpu),
                                m.linalg.eigvalsh(s, UPLO="U", stream=m.cpu),
                                m.linalg.tri_inv(a, upper=True, stream=m.cpu),
                                m.linalg.qr(s, stream=m.cpu)[1]), (SQ, SPD), {}),
    ("linalg_multi", lambda m, s: (*m.linalg.svd(s, stream=m.cpu), *m.linalg.eigh(s, stream=m.cpu)),
     (SPD,), {}),
    ("fft", lambda m, x: (m.abs(m.fft.fft(x)), m.fft.irfft(m.fft.rfft(x)),
                          m.real(m.fft.ifft2(m.fft.fft2(x)))), (X,), {}),
    ("conv", lambda m, x: (m.conv1d(x.reshape(1, 4, 3), m.ones((2, 2, 3))),
                           m.conv2d(x.reshape(1, 3, 4, 1), m.ones((1, 2, 2, 1)), padding=1)),
     (X,), {}),
    ("conv_wgrad", _conv_grad, (r(1, 11, 3), r(4, 3, 3)), {}),
    ("fast", lambda m, x: (m.fast.rms_norm(x, m.ones((4,)), 1e-5),
                           m.fast.layer_norm(x, m.ones((4,)), m.zeros((4,)), 1e-5),
                           m.fast.rope(x.reshape(1, 3, 4), 4, traditional=False, base=1e4,
                                       scale=1.0, offset=0)), (X,), {"mlx_runs": False}),
    ("sdpa", lambda m, q, k, v: m.fast.scaled_dot_product_attention(q, k, v, scale=0.5,
                                                                    mask="causal"),
     (r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)), {}),
    ("hadamard", lambda m, x: m.hadamard_transform(x, scale=0.5), (X,), {}),
    ("quantized_matmul", lambda m, x, w: m.quantized_matmul(x, *m.quantize(w, 32, 4), True, 32, 4),
     (r(2, 32), r(4, 32)), {}),
    ("quantize", lambda m, w: (*m.quantize(w, 32, 4),
                               m.dequantize(*m.quantize(w, 32, 4), group_size=32, bits=4)),
     (r(4, 32),), {}),
    ("gather_qmm", lambda m, x, w: m.gather_qmm(x, *m.quantize(w, 32, 4), transpose=True,
                                                group_size=32, bits=4,
                                                lhs_indices=m.array([0, 1], dtype=m.uint32),
                                                rhs_indices=m.array([1, 0], dtype=m.uint32)),
     (r(2, 1, 32), r(2, 4, 32)), {}),
    ("gather_mm", lambda m, x, y: m.gather_mm(m.stack([x, y]), y.T[None],
                                              m.array([1, 0], dtype=m.uint32),
                                              m.array([0, 0], dtype=m.uint32)), (X, Y), {}),
    ("block_masked", lambda m, a, b, mo: m.block_masked_mm(a, b, 32, mo),
     (r(40, 33), r(33, 40), RG.random((2, 2)) > 0.4), {}),
    ("depends", lambda m, a, b: m.depends(a, b * 2)[0] + 1, (X, Y), {}),
    ("diagonal_median", lambda m, a: (m.diagonal(a, 1), m.median(a, axis=0)), (r(3, 4, 5),), {}),
    # creation, random, constants
    ("creation", lambda m, x: (x + m.eye(3, 4), m.arange(4.0) + x, m.full((3, 4), 2.0) + x,
                               m.zeros_like(x) + m.ones_like(x)), (X,), {}),
    ("constants", lambda m, x: x * m.array(np.arange(12, dtype=np.float32).reshape(3, 4)) +
     m.array(2.5), (X,), {}),
    ("random", lambda m, k: (m.random.uniform(shape=(3, 4), key=k),
                             m.random.normal(shape=(3, 4), key=k),
                             m.random.randint(0, 9, (2, 3), key=k)),
     (np.array([0, 7], np.uint32),), {}),
    ("grad", lambda m, x, y: m.grad(lambda a: (m.tanh(a) * y).sum())(x), (X, Y), {}),
    # inputs and traces
    ("kwargs", lambda m, x, y=None, z=None: (x + y * z,), (X,), {"kw": {"y": Y, "z": X}}),
    ("traces", lambda m, x, y: (x * y + 1, m.sum(x, axis=0)), (X, Y),
     {"traces": [(r(2, 5), r(2, 5)), (np.arange(6, dtype=np.int32), np.ones(6, np.int32))]}),
    ("shapeless", lambda m, x: (x * 2 + x.sum(axis=0), m.argmax(x, axis=1),
                                m.logsumexp(x, axis=-1), m.mean(x, axis=1)),
     (r(2, 3, 4),), {"shapeless": True, "call": (r(5, 7, 4),)}),
    # saved under cmlx's own names: MLX cannot read these
    ("cmlx_lu", lambda m, a, b: (*m.linalg.lu_factor(a, stream=m.cpu),
                                 m.linalg.solve(a, b, stream=m.cpu)), (SQ, r(3,)), {"mlx": False}),
    ("cmlx_segmented", lambda m, a, b, s: m.segmented_mm(a, b, s),
     (r(2, 5), r(5, 3), np.array([[0, 2], [2, 5]], np.uint32)), {"mlx": False}),
    ("cmlx_fp8", lambda m, a: m.from_fp8(m.to_fp8(a), dtype=m.float32), (X,), {"mlx": False}),
    ("cmlx_quant_global", lambda m, w, g: (
        *m.quantize(w, mode="nvfp4", global_scale=g),
        m.dequantize(*m.quantize(w, mode="nvfp4")[:2], mode="nvfp4", global_scale=g)),
     (r(4, 32), np.float32(2.0)), {"mlx": False}),
    ("cmlx_logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), (X,), {"mlx": False}),
    ("cmlx_unary", lambda m, a: m.bitwise_invert(a), (INTS,), {"mlx": False}),
]

BY_NAME = {c[0]: c for c in CASES}


def to_lib(lib, a):
    return lib.array(a)


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def export(lib, path, case):
    """Export case with lib (cmlx.core or mlx.core) to path."""
    name, fun, args, opts = case
    kw = opts.get("kw", {})
    f = lambda *xs, **kws: fun(lib, *xs, **kws)
    if opts.get("traces"):
        with lib.exporter(path, f, shapeless=opts.get("shapeless", False)) as ex:
            for a in [args] + list(opts["traces"]):
                ex(*[to_lib(lib, x) for x in a])
        return
    lib.export_function(path, f, *[to_lib(lib, x) for x in args],
                        shapeless=opts.get("shapeless", False),
                        **{k: to_lib(lib, v) for k, v in kw.items()})


def calls(case):
    """The (args, kwargs) the file is called with."""
    name, fun, args, opts = case
    out = [(args, opts.get("kw", {}))]
    out += [(a, {}) for a in opts.get("traces", [])]
    if "call" in opts:
        out.append((opts["call"], {}))
    return out


def run(lib, case, args, kw):
    """The case's outputs, as numpy arrays, from lib directly."""
    f = case[1]
    out = as_list(f(lib, *[to_lib(lib, a) for a in args], **{k: to_lib(lib, v) for k, v in kw.items()}))
    return [to_numpy(lib, o) for o in out]


def to_numpy(lib, o):
    if o.dtype == lib.bfloat16:
        o = o.astype(lib.float32)
    return np.array(o)


def _id_like(v):
    # a user-space heap address: below 2^48, sixth byte at least 0x10
    # (0x55..., 0x61..., 0x7f...: never a small count, flag or shape)
    return v < (1 << 48) and (v >> 40) >= 0x10


def diff_modulo_ids(new, old, blank=False):
    """None when new and old are the same file but for their node ids, else
    where they differ.  cmlx's ids are node addresses, different on every
    run: each run of differing bytes must lie in an 8-byte window that
    reads as an address in both files (the latest such window: one that
    starts earlier reads part of the field before it), and one file's ids
    must map one to one onto the other's (blank: not checked, for files of
    several traces, where a trace may reuse an earlier one's freed
    addresses)."""
    if len(new) != len(old):
        return f"{len(new)} bytes, the fixture {len(old)}"
    fwd, back, i, n = {}, {}, 0, len(new)
    while i < n:
        if new[i] == old[i]:
            i += 1
            continue
        for j in range(min(i, n - 8), max(i - 7, 0) - 1, -1):
            a = int.from_bytes(new[j:j + 8], "little")
            b = int.from_bytes(old[j:j + 8], "little")
            if _id_like(a) and _id_like(b):
                break
        else:
            return f"byte {i}: {new[i - 8:i + 8].hex()} vs {old[i - 8:i + 8].hex()}"
        if not blank and (fwd.setdefault(a, b) != b or back.setdefault(b, a) != a):
            return f"byte {j}: id {a:#x} stands for two of the fixture's"
        i = j + 8
    return None
