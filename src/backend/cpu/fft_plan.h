/* One-dimensional FFTs of contiguous float32 data, on KISS FFT.
 *
 * A plan is made once per (length, direction, kind) and cached (a few at
 * a time, least recently used first out); it is shared by every thread
 * and read-only while it runs: each call gets its scratch from the
 * caller.  Lengths kissfft factors into small primes run as kissfft
 * plans; a length with a large prime factor (kissfft's generic radix is
 * O(n * p)) runs Bluestein's algorithm over kissfft plans of a size with
 * only the factors 2, 3 and 5, so prime lengths are O(n log n) too.  Real
 * transforms of even length run a complex transform of half the length
 * plus one twiddle pass; odd lengths go through the complex transform.
 * Plans are unnormalised (the inverse is the plain sum with
 * e^{+2 pi i jk/n}); the kernel (fft.c) scales the inverses. */
#ifndef CMLX_BACKEND_CPU_FFT_PLAN_H
#define CMLX_BACKEND_CPU_FFT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/dtype.h"

typedef enum cm_fft_kind {
  CM_FFT_C2C, /* n complex -> n complex */
  CM_FFT_R2C, /* n real -> n/2 + 1 complex */
  CM_FFT_C2R, /* n/2 + 1 complex (imaginary parts of bin 0 and n/2 ignored) -> n real */
} cm_fft_kind;

typedef struct cm_fft_plan cm_fft_plan;

/* The cached plan of a transform of length n >= 1 (a counted reference:
 * give it back with cm_fft_plan_release); NULL with a MemoryError. */
cm_fft_plan *cm_fft_plan_get(int n, bool inverse, cm_fft_kind kind);
void cm_fft_plan_release(cm_fft_plan *p);
/* Complex scratch elements one call needs. */
size_t cm_fft_plan_work(const cm_fft_plan *p);
/* One transform: in and out must not overlap; in is float * for R2C and
 * cm_complex64 * otherwise, out float * for C2R. */
void cm_fft_plan_run(const cm_fft_plan *p, const void *in, void *out, cm_complex64 *work);

/* Complex plans of a power of two from 4 to 32768 or of another length up
 * to that with no prime factor above 13 (mixed radix), and Bluestein plans
 * whose convolution (a power of two, or 2^a 3^b 5^c where that is
 * shorter) is that long, also run CM_FFT_LANES
 * lines at once (backend/cpu/fft_lanes.h), stored by element: re and im
 * arrays of cm_fft_plan_lanes_len(p) * LANES floats (the first n elements
 * the line), transformed in place; y is scratch of that size.  So do
 * real plans of even length over such a plan, on the half-length complex
 * signals, which cm_fft_real_join makes from the spectrum (C2R) and
 * cm_fft_real_split turns into it (R2C). */
bool cm_fft_plan_has_lanes(const cm_fft_plan *p);
size_t cm_fft_plan_lanes_len(const cm_fft_plan *p);
void cm_fft_plan_run_lanes(const cm_fft_plan *p, float *xr, float *xi, float *yr, float *yi);
/* Real plans of even n = 2h: Z_k = (zr[k zs], zi[k zs]), k < h, the
 * transform of z_j = x_2j + i x_2j+1, to the n/2 + 1 bins out[k os] (times
 * fct); and the inverse's input Z from the bins in[k is]. */
void cm_fft_real_split(const cm_fft_plan *p, const float *zr, const float *zi, ptrdiff_t zs,
                       cm_complex64 *out, ptrdiff_t os, float fct);
void cm_fft_real_join(const cm_fft_plan *p, const cm_complex64 *in, ptrdiff_t is, float *zr,
                      float *zi, ptrdiff_t zs);

/* The same over the bins k0 <= k < k1 only (k0 == 0 includes bin h), so
 * one long line's split and join spread over threads. */
void cm_fft_real_split_range(const cm_fft_plan *p, const float *zr, const float *zi,
                             ptrdiff_t zs, cm_complex64 *out, ptrdiff_t os, float fct, int k0,
                             int k1);
void cm_fft_real_join_range(const cm_fft_plan *p, const cm_complex64 *in, ptrdiff_t is,
                            float *zr, float *zi, ptrdiff_t zs, int k0, int k1);
/* A real plan of even n's e^{-2 pi i k/n}, k < n/2 (what split and join
 * turn by). */
const cm_complex64 *cm_fft_plan_real_twiddle(const cm_fft_plan *p);
/* A real plan's complex plan (of n/2 for even n, of n for odd n). */
const cm_fft_plan *cm_fft_plan_sub(const cm_fft_plan *p);
/* A Bluestein plan whose convolution length m (2^a 3^b 5^c >= 2n - 1) is
 * long enough to split: X_k = chirp_k * IFFT_m(FFT_m(x chirp, zero
 * padded) * kernel)_k, with fwd and inv the split plans of m (kernel
 * carries the 1/m); false for other plans. */
bool cm_fft_plan_bluestein(const cm_fft_plan *p, int *m, const cm_complex64 **chirp,
                           const cm_complex64 **kernel, const cm_fft_plan **fwd,
                           const cm_fft_plan **inv);

/* A complex plan of a long composite length (1024 points and more whose
 * factors lanes run, with a divisor of at least 16 below sqrt(n); 2^16
 * and more with one of at least 64 otherwise) also describes the four-step
 * split n = n1 * n2 that lets the kernel spread one long transform over
 * threads: x[n2 j1 + j2] -> n2 transforms of n1 (stride n2) -> times
 * twiddle[j2 k1] -> n1 transforms of n2 -> X[k1 + n1 k2].  False (and
 * nothing set) for other plans; the sub-plans belong to p. */
bool cm_fft_plan_split(const cm_fft_plan *p, int *n1, int *n2, const cm_fft_plan **p1,
                       const cm_fft_plan **p2, const cm_complex64 **twiddle);

/* The four-step twiddles of a split plan for lanes of rows l = 8g + j
 * (g < ceil(n1 / LANES)) at element k < n2: w^{l k} = group[g n2 + k] *
 * (lane_re + i lane_im)[k LANES + j] (one extra rounding; read in order). */
void cm_fft_plan_split_lanes_twiddle(const cm_fft_plan *p, const cm_complex64 **group,
                                     const float **lane_re, const float **lane_im);

#endif
