/* Row loops of the attention kernels (fast_sdpa_rows.c): AVX-512 where the
 * CPU has it, portable loops otherwise. */
#ifndef CMLX_BACKEND_CPU_FAST_SDPA_H
#define CMLX_BACKEND_CPU_FAST_SDPA_H

#include <stdint.h>

/* The largest of s[0..n) and floor, NaNs ignored (n >= 0). */
float cm_sdpa_row_max(const float *s, int64_t n, float floor);
/* s = exp(s - mx) in place; returns the sum of the exponentials.  The
 * exponential is within a few ulps of expf, 0 far below, NaN for NaN. */
float cm_sdpa_row_exp(float *s, int64_t n, float mx);
/* o *= a. */
void cm_sdpa_row_scale(float *o, float a, int64_t n);

#endif
