/* Kernels of the mx.fast primitives (primitives/fast.h): fast_norm.c
 * (RMSNorm, LayerNorm), fast_rope.c, fast_sdpa.c, and the row helpers
 * they share (fast_util.c). */
#ifndef CMLX_BACKEND_CPU_FAST_H
#define CMLX_BACKEND_CPU_FAST_H

#include "core/array.h"

int cm_cpu_rms_norm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_layer_norm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Their gradients in one pass (fast_norm_vjp.c). */
int cm_cpu_norm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_rope(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_sdpa(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* SdpaVJP (fast_sdpa_bwd.c): dq, dk, dv from q, k, v[, mask][, sinks], dO. */
int cm_cpu_sdpa_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* ---- shared row helpers (fast_util.c) ---- */
/* n elements of dtype dt (a float type) at src, step st, as float. */
void cm_fast_load(float *dst, const void *src, int64_t st, int64_t n, cm_dtype dt);
/* n floats to dtype dt at dst (contiguous), rounded once. */
void cm_fast_store(void *dst, const float *src, int64_t n, cm_dtype dt);
/* v[0..n) rounded to dt and back in place, with the vector conversions
 * (nothing for float32/float64), round to nearest even as the stores round. */
void cm_fast_round_row(float *v, int64_t n, cm_dtype dt);
/* Element offset of row r of a (rows: every index but the last axis). */
int64_t cm_fast_row_offset(const cm_array *a, int64_t r);
/* Vector loops (AVX2+FMA where the CPU has them). */
float cm_fast_dot(const float *a, const float *b, int64_t n);
void cm_fast_axpy(float *y, float alpha, const float *x, int64_t n); /* y += alpha x */
float cm_fast_sum(const float *a, int64_t n);
/* o = (x - mu) * n * w + b (w, b NULL: 1 and 0); o may be x. */
void cm_fast_affine(float *o, const float *x, float mu, float n, const float *w, const float *b,
                    int64_t D);
/* s[r n + c] = scale * cm_fast_dot(q + r D, k + c ldk, D), r < rows, c < n. */
void cm_fast_dot_rows(float *s, const float *q, int64_t rows, int64_t D, const float *k, int64_t ldk,
                      int64_t n, float scale);
/* cm_fast_axpy(o + r Dv, p[r n + c], v + c ldv, Dv) for r < rows, then c < n. */
void cm_fast_axpy_rows(float *o, int64_t rows, int64_t Dv, const float *p, const float *v,
                       int64_t ldv, int64_t n);
/* The same two with k or v rows of float16 or bfloat16 (dt), ldk and ldv
 * in elements, widened exactly as they are read: false where this CPU has
 * no such loop (AVX2 and F16C) or a row is longer than
 * CM_FAST_HALF_ROW_MAX; the caller then widens the block itself. */
#define CM_FAST_HALF_ROW_MAX 512
bool cm_fast_dot_rows_half(float *s, const float *q, int64_t rows, int64_t D, const uint16_t *k,
                           int64_t ldk, int64_t n, float scale, cm_dtype dt);
bool cm_fast_axpy_rows_half(float *o, int64_t rows, int64_t Dv, const float *p, const uint16_t *v,
                            int64_t ldv, int64_t n, cm_dtype dt);
float cm_fast_sumsq(const float *a, float shift, int64_t n); /* sum (a - shift)^2 */

#endif
