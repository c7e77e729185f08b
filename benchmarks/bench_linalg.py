"""Linear algebra on 512 x 512 float32 matrices (svd, eigh, inv, solve,
qr, cholesky, eig) and a batch of 4096 small (8 x 8) inverses.  Every
framework calls LAPACK (NumPy, PyTorch and MLX their own builds, cmlx
the system OpenBLAS); svd computes the full factors in each, eig the
right eigenvectors, solve a single right-hand side."""

import numpy as np

from harness import workload

N = 512
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(9)
        a = rg.standard_normal((N, N)).astype(np.float32)
        _DATA["a"] = a + N**0.5 * np.eye(N, dtype=np.float32)
        _DATA["spd"] = (a @ a.T / N + np.eye(N)).astype(np.float32)
        _DATA["b"] = rg.standard_normal((N,)).astype(np.float32)
        s = rg.standard_normal((4096, 8, 8)).astype(np.float32)
        _DATA["small"] = s + 4 * np.eye(8, dtype=np.float32)
    return _DATA


def linalg_fn(fw, name):
    """(f, args converter): fw's linalg function, CPU stream for MLX's."""
    if fw.name == "numpy":
        return getattr(np.linalg, name)
    if fw.name == "torch":
        lin = fw.mod.linalg
        return {"svd": lambda x: lin.svd(x, full_matrices=True), "eigh": lin.eigh,
                "inv": lin.inv, "solve": lin.solve, "qr": lin.qr, "cholesky": lin.cholesky,
                "eig": lin.eig}[name]
    f = getattr(fw.mod.linalg, name)
    return lambda *a: f(*a, stream=fw.mod.cpu)


def make(name, key, *extra):
    def fn(fw):
        d = data()
        f = linalg_fn(fw, name)
        args = [fw.from_numpy(d[key])] + [fw.from_numpy(d[k]) for k in extra]
        if fw.lazy:
            return lambda: fw.run(f(*args))
        return lambda: f(*args)

    return fn


for _name, _key, _extra in [("svd", "a", ()), ("eigh", "spd", ()), ("inv", "a", ()),
                            ("solve", "a", ("b",)), ("qr", "a", ()), ("cholesky", "spd", ()),
                            ("eig", "a", ())]:
    workload(f"linalg {_name} f32 {N}x{N}", family="linalg")(make(_name, _key, *_extra))
workload("linalg inv f32 4096x8x8", family="linalg")(make("inv", "small"))
