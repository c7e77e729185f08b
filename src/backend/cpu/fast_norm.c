/* RMSNorm and LayerNorm over the last axis.  Each row is read into a float
 * buffer (float32 rows in place), reduced with the vector loops and
 * written once; rows are spread over the pool.  The arithmetic follows
 * MLX's composition: the normalised row is computed in float32, rounded
 * to the output dtype, then multiplied by the weight and added to the bias
 * in that dtype. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/cpu/fast.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

typedef struct norm_job {
  const cm_array *x;
  cm_dtype dt;
  int64_t D;
  char *out;
  const float *w, *b; /* D floats, or NULL: 1 and 0 */
  float eps;
  bool layer;
  atomic_int oom;
} norm_job;

static void norm_rows(void *ctx, int64_t r0, int64_t r1) {
  norm_job *j = ctx;
  int64_t D = j->D, st = j->x->strides[j->x->ndim - 1];
  size_t isz = cm_dtype_size(j->dt);
  float *buf = malloc((size_t)D * 4 * 2);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  float *y = buf + D;
  const char *x0 = cm_data(j->x);
  for (int64_t r = r0; r < r1; r++) {
    const char *src = x0 + cm_fast_row_offset(j->x, r) * (int64_t)isz;
    const float *x = buf;
    if (j->dt == CM_FLOAT32 && st == 1) x = (const float *)src;
    else cm_fast_load(buf, src, st, D, j->dt);
    float mu = 0, n;
    if (j->layer) {
      mu = cm_fast_sum(x, D) / (float)D;
      n = 1.0f / sqrtf(cm_fast_sumsq(x, mu, D) / (float)D + j->eps);
    } else {
      n = 1.0f / sqrtf(cm_fast_sumsq(x, 0.0f, D) / (float)D + j->eps);
    }
    float *o = j->dt == CM_FLOAT32 ? (float *)(j->out + r * D * 4) : y;
    bool half = j->dt == CM_FLOAT16 || j->dt == CM_BFLOAT16;
    if (half) { /* rounded to the half type after the scaling and after the weight */
      for (int64_t i = 0; i < D; i++) o[i] = (x[i] - mu) * n;
      cm_fast_round_row(o, D, j->dt);
      if (j->w) {
        for (int64_t i = 0; i < D; i++) o[i] *= j->w[i];
        cm_fast_round_row(o, D, j->dt);
      }
      if (j->b)
        for (int64_t i = 0; i < D; i++) o[i] += j->b[i];
    } else {
      cm_fast_affine(o, x, mu, n, j->w, j->b, D);
    }
    if (j->dt != CM_FLOAT32) cm_fast_store(j->out + r * D * (int64_t)isz, o, D, j->dt);
  }
  free(buf);
}

/* A weight or bias as D floats; NULL (and *vec NULL) for the 0-d
 * placeholder that leaves the row unchanged. */
static int load_vec(const cm_array *a, int64_t D, float **vec) {
  *vec = NULL;
  if (a->ndim == 0) return 0;
  if (!(*vec = malloc((size_t)(D ? D : 1) * 4)))
    return cm_error(CM_ERR_MEMORY, "[fast] Out of memory.");
  cm_fast_load(*vec, cm_data(a), a->strides[0], D, a->dtype);
  return 0;
}

static int run(cm_array *out, cm_array *const *in, int nin, bool layer) {
  cm_array *x = in[0];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  norm_job j = {.x = x,
                .dt = x->dtype,
                .D = x->shape[x->ndim - 1],
                .out = cm_data(out),
                .eps = cm_norm_params_of(out)->eps,
                .layer = layer};
  float *w = NULL, *b = NULL;
  if (load_vec(in[1], j.D, &w) || (nin > 2 && load_vec(in[2], j.D, &b))) {
    free(w);
    return -1;
  }
  j.w = w;
  j.b = b;
  cm_parallel_for(x->size / j.D, cm_grain(j.D * 6), norm_rows, &j);
  free(w);
  free(b);
  if (atomic_load(&j.oom)) return cm_error(CM_ERR_MEMORY, "[fast] Out of memory.");
  return 0;
}

int cm_cpu_rms_norm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  return run(out, in, nin, false);
}

int cm_cpu_layer_norm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  return run(out, in, nin, true);
}
