#!/usr/bin/env python3
"""The Python suites on the GPU (make test-cuda on a machine with one).

  cuda_suites.py --pythonpath PKG [--ratchet FILE] [--out DIR] [--mlx-suite DIR]

Runs tests/python with CMLX_TEST_DEVICE=gpu (the GPU as the default device;
NumPy, and MLX where installed, stay the references), then MLX's own suite
(../shared/mlx-conformance, where present) with DEVICE=gpu through the same
import alias its run.py installs.  The ids that pass are added to the
ratchet (tests/cuda/gpu_ratchet.txt); a ratchet id that does not pass fails
the run.  Results are written to OUT as JSON and JUnit XML.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def junit_results(path, prefix):
    """{id: status} from a pytest JUnit file, ids as prefix + file::name."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        parts = cls.split(".")
        # classname is dotted (tests.python.test_x.Class); the id keeps the file
        file = next((p for p in parts if p.startswith("test_")), parts[-1])
        rest = [p for p in parts[parts.index(file) + 1:]] if file in parts else []
        tid = "::".join([prefix + file + ".py"] + rest + [name])
        status = "PASSED"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "FAILED"
            elif child.tag == "skipped":
                status = "SKIPPED"
        out[tid] = status
    return out


def run_pytest(args, env, cwd, xml):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"] + args
    print("::", " ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env, cwd=cwd).returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pythonpath", required=True)
    ap.add_argument("--ratchet", default=os.path.join(ROOT, "tests/cuda/gpu_ratchet.txt"))
    ap.add_argument("--out", default=tempfile.mkdtemp(prefix="cmlx-gpu-"))
    ap.add_argument("--mlx-suite", default=os.path.join(ROOT, "..", "shared", "mlx-conformance"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pkg = os.path.abspath(a.pythonpath)
    results = {}

    env = dict(os.environ, CMLX_TEST_DEVICE="gpu", PYTHONPATH=pkg)
    xml = os.path.join(a.out, "cmlx-gpu.xml")
    run_pytest(["tests/python"], env, ROOT, xml)
    if os.path.exists(xml):
        results.update(junit_results(xml, "tests/python/"))

    run_py = os.path.join(a.mlx_suite, "run.py")
    if os.path.exists(run_py):
        spec = importlib.util.spec_from_file_location("mlx_conformance_run", run_py)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        work = tempfile.mkdtemp(prefix="mlx-conformance-gpu-")
        with open(os.path.join(work, "sitecustomize.py"), "w") as f:
            f.write(mod.ALIAS)
        env = dict(os.environ, DEVICE="gpu", PYTHONPATH=os.pathsep.join([work, pkg]))
        xml = os.path.join(a.out, "mlx-gpu.xml")
        run_pytest(["-o", "addopts=", "."], env, os.path.join(a.mlx_suite, "tests"), xml)
        if os.path.exists(xml):
            results.update(junit_results(xml, ""))
    else:
        print(f"cuda_suites: {a.mlx_suite} is absent: MLX's suite skipped")

    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    npass = sum(v == "PASSED" for v in results.values())
    print(f"cuda_suites: {npass} of {len(results)} tests passed on the GPU")

    with open(a.ratchet) as f:
        lines = f.read().splitlines()
    header = [l for l in lines if l.startswith("#")]
    have = {l.strip() for l in lines if l.strip() and not l.startswith("#")}
    new = sorted(t for t, v in results.items() if v == "PASSED" and t not in have)
    lost = sorted(t for t in have if results.get(t) != "PASSED")
    with open(a.ratchet, "w") as f:
        f.write("".join(h + "\n" for h in header))
        f.write("".join(t + "\n" for t in sorted(have | set(new))))
    print(f"cuda_suites: ratchet {len(new)} added, {len(have) + len(new)} in {a.ratchet}")
    for t in lost:
        print(f"  REGRESSION: {t}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
