/* Complex FFTs of CM_FFT_LANES lines at once (powers of two, and mixed
 * radix lengths whose prime factors are at most CM_FFT_LANES_MAX_PRIME), for batched
 * transforms: the lines are stored interleaved by element (structure of
 * arrays: re[k * LANES + lane], im[...]), so every butterfly is the same
 * operation on LANES independent lines and the loops vectorise without
 * shuffles (an AVX2 build of the loops is picked at run time;
 * CMLX_FFT_SIMD=0 forces the portable one). */
#ifndef CMLX_BACKEND_CPU_FFT_LANES_H
#define CMLX_BACKEND_CPU_FFT_LANES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/dtype.h"

#define CM_FFT_LANES 8
#define CM_FFT_LANES_MAX_PRIME 13

/* n >= 2 has no prime factor above CM_FFT_LANES_MAX_PRIME. */
bool cm_fft_lanes_supported(int n);

/* Unnormalised transform of length n (a power of two >= 4, or any n that
 * cm_fft_lanes_supported accepts) of LANES lines
 * in (xr, xi), in place; (yr, yi) is scratch of the same size.  twr/twi
 * hold e^{-2 pi i k/n}, k < n; inverse runs the conjugate transform. */
void cm_fft_lanes(int n, const float *twr, const float *twi, float *xr, float *xi, float *yr,
                  float *yi, bool inverse);

/* Lines that lie as rows (each contiguous, complex) to and from lanes:
 * (xr, xi)[k LANES + j] = rows[j][k] for k < h (an 8 x 8 transpose of
 * floats per 4 elements on AVX2); the store scales by fct. */
void cm_fft_lanes_from_rows(const cm_complex64 *const *rows, size_t h, float *xr, float *xi);
void cm_fft_lanes_to_rows(cm_complex64 *const *rows, size_t h, const float *xr, const float *xi,
                          float fct);
/* Lines that lie side by side (line j starts at base + j, element k at
 * stride s, complex): element k of all lanes is one run of LANES complex
 * values, loaded (stored times fct) as two vectors per part; rows
 * ahead are prefetched (the columns of a four-step are far apart). */
void cm_fft_lanes_from_adjacent(const cm_complex64 *base, ptrdiff_t s, size_t h, float *xr,
                                float *xi);
void cm_fft_lanes_to_adjacent(cm_complex64 *base, ptrdiff_t s, size_t h, const float *xr,
                              const float *xi, float fct);

#endif
