#!/usr/bin/env python3
"""cmlx end to end: price a grid of European options with the Black-Scholes
formula, entirely with cmlx's lazy elementwise ops, and check the answer.

What it shows:
  * arrays from NumPy, broadcasting (strikes x volatilities), weak Python
    scalars (`0.5 * x` keeps float32), exp/log/sqrt/erf and friends;
  * laziness: the whole pricing graph is built first, then evaluated once;
  * correctness: put-call parity inside cmlx, and agreement with a NumPy
    implementation of the same formula;
  * dtypes: the logistic function in float16 / bfloat16 / float32 / float64;
  * streams and memory: the same work on a new stream, and the allocator's
    counters.
Runs in a few seconds.
"""

import math
import time

import numpy as np

import cmlx.core as mx

SQRT1_2 = 1.0 / math.sqrt(2.0)


def timed(fn, repeats=5):
    """Median wall time of fn() in milliseconds, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2], out


# ------------------------------------------------------------ Black-Scholes

def norm_cdf(x):
    """Standard normal CDF with cmlx ops: 0.5 * (1 + erf(x / sqrt 2))."""
    return 0.5 * (1.0 + mx.erf(x * SQRT1_2))


def black_scholes(spot, strike, vol, rate, t):
    """Call and put prices; strike and vol broadcast against each other."""
    sqrt_t = math.sqrt(t)
    d1 = (mx.log(spot / strike) + (rate + 0.5 * mx.square(vol)) * t) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = math.exp(-rate * t)
    call = spot * norm_cdf(d1) - strike * discount * norm_cdf(d2)
    put = strike * discount * norm_cdf(-d2) - spot * norm_cdf(-d1)
    return call, put


def np_erf(x):
    """erf in NumPy (no SciPy needed): Abramowitz & Stegun 7.1.26, absolute
    error below 1.5e-7 -- far below float32 pricing noise."""
    x = np.asarray(x, np.float64)
    s, ax = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * ax)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-ax * ax)
    return s * y


def np_black_scholes(spot, strike, vol, rate, t):
    cdf = lambda z: 0.5 * (1.0 + np_erf(z * SQRT1_2))  # noqa: E731
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol ** 2) * t) / (vol * math.sqrt(t))
    d2 = d1 - vol * math.sqrt(t)
    disc = math.exp(-rate * t)
    return spot * cdf(d1) - strike * disc * cdf(d2), strike * disc * cdf(-d2) - spot * cdf(-d1)


def section_black_scholes():
    print("1) Black-Scholes prices on a 1000 x 1000 grid (strike x volatility), float32")
    spot, rate, t = 100.0, 0.03, 0.75
    strikes = np.linspace(60.0, 140.0, 1000, dtype=np.float32)[:, None]
    vols = np.linspace(0.05, 0.8, 1000, dtype=np.float32)[None, :]
    k, v = mx.array(strikes), mx.array(vols)

    # Build the graph (nothing is computed yet), then evaluate it.
    t0 = time.perf_counter()
    call, put = black_scholes(spot, k, v, rate, t)
    t_build = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    mx.eval(call, put)
    t_eval = (time.perf_counter() - t0) * 1e3
    print(f"   graph built in {t_build:.2f} ms, evaluated in {t_eval:.1f} ms "
          f"(shape {tuple(call.shape)}, dtype {call.dtype})")

    # Put-call parity, checked with cmlx itself: C - P = S - K e^{-rT}.
    parity = (call - put) - (spot - k * math.exp(-rate * t))
    resid = np.abs(np.array(parity)).max()
    print(f"   put-call parity: max |C - P - (S - K e^-rT)| = {resid:.2e}")

    # The same formula in NumPy (float64) as the reference.
    ms_cmlx, _ = timed(lambda: mx.eval(*black_scholes(spot, k, v, rate, t)))
    ms_np, (c_ref, p_ref) = timed(lambda: np_black_scholes(
        spot, strikes.astype(np.float64), vols.astype(np.float64), rate, t))
    c, p = np.array(call), np.array(put)
    err = max(np.abs(c - c_ref).max(), np.abs(p - p_ref).max())
    print(f"   vs NumPy float64: max |diff| = {err:.2e} (price units); "
          f"time cmlx {ms_cmlx:.1f} ms, NumPy {ms_np:.1f} ms")
    for ki, vi in ((500, 100), (250, 400), (750, 800)):
        print(f"   K={strikes[ki, 0]:7.2f} sigma={vols[0, vi]:.3f}: call {c[ki, vi]:8.4f} "
              f"put {p[ki, vi]:8.4f}")
    assert resid < 5e-3 and err < 5e-3, "cmlx disagrees with the reference"


# ------------------------------------------------------------ dtypes

def section_dtypes():
    print("2) the logistic function 1 / (1 + e^-x) on 2,000,001 points in four dtypes")
    xs = np.linspace(-12.0, 12.0, 2_000_001)
    ref = 1.0 / (1.0 + np.exp(-xs))
    for name in ("float64", "float32", "float16", "bfloat16"):
        dt = getattr(mx, name)
        x = mx.array(xs, dtype=dt)
        def run():
            r = mx.sigmoid(x)
            mx.eval(r)
            return r
        ms, y = timed(run, repeats=3)
        composed = 1.0 / (1.0 + mx.exp(-x))  # weak scalars keep x's dtype
        got = np.array(y.astype(mx.float64) if name == "bfloat16" else y).astype(np.float64)
        got2 = np.array(composed.astype(mx.float32) if name == "bfloat16" else composed)
        print(f"   {name:<9} sigmoid {ms:6.2f} ms, max |err| {np.abs(got - ref).max():.2e}; "
              f"composed form dtype {composed.dtype}, max |err| "
              f"{np.abs(got2.astype(np.float64) - ref).max():.2e}")


# ------------------------------------------------------------ streams & memory

def section_streams_memory():
    print("3) a second stream and the memory counters")
    s = mx.new_stream(mx.cpu)
    base = mx.get_active_memory()
    mx.reset_peak_memory()
    with mx.stream(s):
        x = mx.arange(0, 4_000_000, dtype=mx.float32) * (1.0 / 4_000_000)
        y = mx.sqrt(1.0 - mx.square(x))  # quarter circle
    z = mx.multiply(y, 4.0 / 4_000_000, stream=mx.default_stream(mx.cpu))  # cross-stream
    mx.eval(z)
    # The area under the quarter circle times 4 approximates pi (summed in NumPy).
    approx_pi = float(np.array(z, dtype=np.float64).sum())
    print(f"   Riemann sum on {s}: pi ~ {approx_pi:.6f} (error {abs(approx_pi - math.pi):.1e})")
    print(f"   memory: active +{(mx.get_active_memory() - base) / 2**20:.1f} MiB, "
          f"peak {mx.get_peak_memory() / 2**20:.1f} MiB, cache {mx.get_cache_memory() / 2**20:.1f} MiB")
    del x, y, z
    mx.clear_cache()
    print(f"   after del + clear_cache: active +{(mx.get_active_memory() - base) / 2**20:.1f} MiB, "
          f"cache {mx.get_cache_memory() / 2**20:.1f} MiB")


def main():
    t0 = time.perf_counter()
    print(f"cmlx demo (cmlx.core from {mx.__file__})")
    section_black_scholes()
    section_dtypes()
    section_streams_memory()
    print(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
