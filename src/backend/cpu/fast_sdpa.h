/* Row loops of the attention kernels (fast_sdpa_rows.c): AVX-512 where the
 * CPU has it, portable loops otherwise. */
#ifndef CMLX_BACKEND_CPU_FAST_SDPA_H
#define CMLX_BACKEND_CPU_FAST_SDPA_H

#include <stdint.h>

#include "core/array.h"

/* The largest of s[0..n) and floor, NaNs ignored (n >= 0). */
float cm_sdpa_row_max(const float *s, int64_t n, float floor);
/* s = exp(s - mx) in place; returns the sum of the exponentials.  The
 * exponential is within a few ulps of expf, 0 far below, NaN for NaN. */
float cm_sdpa_row_exp(float *s, int64_t n, float mx);
/* o *= a. */
void cm_sdpa_row_scale(float *o, float a, int64_t n);

/* Shared by the forward (fast_sdpa.c) and backward (fast_sdpa_bwd.c)
 * kernels. */
/* Element (i0, i1, i2, i3) of a 4-D array. */
const char *cm_sdpa_elem(const cm_array *a, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
/* Rows [c0, c0 + n) of k or v (d columns) of batch b, kv head g as float
 * rows: in place when float32 with unit columns (*ld the row stride),
 * else converted into buf (ld = d). */
const float *cm_sdpa_kv_rows(const cm_array *a, int b, int g, int64_t c0, int n, int d, float *buf,
                             int *ld);
/* The dtype's lowest finite value, which masked scores take. */
float cm_sdpa_lowest(cm_dtype dt);

#endif
