"""What the ecosystem tests share: whether a distribution is installed,
where the cmlx package under test lives, and the environment of one side
of a comparison (real MLX, or cmlx standing in for it through the
``mlx`` alias, CMLX_AS_MLX=1)."""
import importlib.metadata
import importlib.util
import os


def have(dist):
    try:
        importlib.metadata.version(dist)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def cmlx_pkg_dir():
    spec = importlib.util.find_spec("cmlx")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def side_env(side, pkg, **extra):
    """os.environ for side "mlx" (cmlx's folder off PYTHONPATH, so `mlx`
    is the real one) or "cmlx" (its folder first and the alias on), plus
    extra variables."""
    env = dict(os.environ)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    parts = [p for p in parts if os.path.abspath(p) != os.path.abspath(pkg)]
    env.pop("CMLX_AS_MLX", None)
    if side == "cmlx":
        env["CMLX_AS_MLX"] = "1"
        parts.insert(0, pkg)
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env.update(extra)
    return env
