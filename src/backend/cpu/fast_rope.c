/* RoPE: rotary position embeddings over the last axis of (B, ..., T, D).
 * The angles depend only on (offset, t), so their cosines and sines are
 * tabulated once per call (one table per distinct offset), in float32 as
 * MLX's composition computes them: position = (t + offset) * scale, angle
 * = position * inv_freq with inv_freq = exp(-i * log(base) / (dims/2)) or
 * 1 / freqs.  The rows are rotated in float with MLX's roundings: its CPU
 * composition casts the cosines and sines to the input's type and rounds
 * each product and the sum to it, so a float16 or bfloat16 row is rounded
 * at each of those steps (rounding once differs from MLX in the last bit
 * of about a quarter of the values, which a model that rounds its keys,
 * as afm7 does, magnifies). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fast.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

typedef struct rope_job {
  const cm_array *x;
  const cm_rope_params *p;
  int64_t T, D, half, rows_per_b;
  const int32_t *off;
  int64_t off_stride, noff;
  const float *inv; /* half inverse frequencies */
  float *cs;        /* noff * T * half (cos, sin) pairs */
  char *out;
  atomic_int oom;
} rope_job;

static void table_rows(void *ctx, int64_t r0, int64_t r1) {
  rope_job *j = ctx;
  for (int64_t r = r0; r < r1; r++) {
    int64_t b = r / j->T, t = r % j->T;
    float pos = ((float)t + (float)j->off[b * j->off_stride]) * j->p->scale;
    float *cs = j->cs + r * j->half * 2;
    for (int64_t i = 0; i < j->half; i++) {
      float th = pos * j->inv[i];
      cs[2 * i] = cosf(th);
      cs[2 * i + 1] = sinf(th);
    }
    /* a half row uses the cosines and sines in its own type (MLX's casts) */
    cm_fast_round_row(cs, 2 * j->half, j->x->dtype);
  }
}

static void rope_rows(void *ctx, int64_t r0, int64_t r1) {
  rope_job *j = ctx;
  const cm_array *x = j->x;
  int64_t D = j->D, half = j->half, st = x->strides[x->ndim - 1];
  size_t isz = cm_dtype_size(x->dtype);
  float *buf = malloc((size_t)D * 16);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  float *y = buf + D, *prod = y + D; /* a half row's four products, half each */
  bool trad = j->p->traditional, fwd = j->p->forward;
  cm_dtype dt = x->dtype;
  int64_t pair = trad ? 1 : half, step = trad ? 2 : 1;
  for (int64_t r = r0; r < r1; r++) {
    int64_t b = r / j->rows_per_b, t = r % j->T;
    const float *cs = j->cs + ((j->noff > 1 ? b : 0) * j->T + t) * half * 2;
    cm_fast_load(buf, (const char *)cm_data(x) + cm_fast_row_offset(x, r) * (int64_t)isz, st, D,
                 x->dtype);
    if (dt == CM_FLOAT32) {
      for (int64_t i = 0; i < half; i++) {
        int64_t a = i * step, c = a + pair;
        float x1 = buf[a], x2 = buf[c], co = cs[2 * i], si = fwd ? cs[2 * i + 1] : -cs[2 * i + 1];
        y[a] = x1 * co - x2 * si;
        y[c] = x1 * si + x2 * co;
      }
    } else { /* each product rounded to the half type, then the sum (by the store) */
      float *p1 = prod, *p2 = p1 + half, *p3 = p2 + half, *p4 = p3 + half;
      for (int64_t i = 0; i < half; i++) {
        int64_t a = i * step, c = a + pair;
        float x1 = buf[a], x2 = buf[c], co = cs[2 * i], si = fwd ? cs[2 * i + 1] : -cs[2 * i + 1];
        p1[i] = x1 * co, p2[i] = x2 * si, p3[i] = x1 * si, p4[i] = x2 * co;
      }
      cm_fast_round_row(prod, 4 * half, dt);
      for (int64_t i = 0; i < half; i++) {
        int64_t a = i * step, c = a + pair;
        y[a] = p1[i] - p2[i];
        y[c] = p3[i] + p4[i];
      }
    }
    int64_t dims = 2 * half;
    if (dims < D) memcpy(y + dims, buf + dims, (size_t)(D - dims) * 4);
    cm_fast_store(j->out + r * D * (int64_t)isz, y, D, x->dtype);
  }
  free(buf);
}

int cm_cpu_rope(cm_array *out, cm_array *const *in, int nin, const cm_params *pp) {
  (void)pp;
  const cm_rope_params *p = cm_rope_params_of(out);
  cm_array *x = in[0], *off = in[1];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  rope_job j = {.x = x,
                .p = p,
                .T = x->shape[x->ndim - 2],
                .D = x->shape[x->ndim - 1],
                .half = p->dims / 2,
                .off = cm_data(off),
                .noff = off->size,
                .out = cm_data(out)};
  j.off_stride = off->ndim ? off->strides[0] : 0;
  j.rows_per_b = x->size / j.D / x->shape[0];
  float *inv = malloc((size_t)j.half * 4);
  float *cs = malloc((size_t)(j.noff * j.T * j.half * 2) * 4 + 4);
  if (!inv || !cs) {
    free(inv);
    free(cs);
    return cm_error(CM_ERR_MEMORY, "[rope] Out of memory.");
  }
  if (nin > 2) {
    cm_fast_load(inv, cm_data(in[2]), in[2]->strides[0], j.half, CM_FLOAT32);
    for (int64_t i = 0; i < j.half; i++) inv[i] = 1.0f / inv[i];
  } else {
    float c = (float)(log(p->base) / (double)j.half);
    for (int64_t i = 0; i < j.half; i++) inv[i] = expf((float)-i * c);
  }
  j.inv = inv;
  j.cs = cs;
  cm_parallel_for(j.noff * j.T, cm_grain(j.half * 40), table_rows, &j);
  cm_parallel_for(x->size / j.D, cm_grain(j.D * 4), rope_rows, &j);
  free(inv);
  free(cs);
  if (atomic_load(&j.oom)) return cm_error(CM_ERR_MEMORY, "[rope] Out of memory.");
  return 0;
}
