/* Softmax and LogSumExp over the last axis, fused: each row is read once
 * into a float (or double) buffer, its max, exp-sum and result computed
 * there.  The composed versions (ops/reduce_compose.c) take every other
 * axis set.  float16/bfloat16 always compute in float32 here, which is what
 * softmax's precise flag asks for and never less accurate without it. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/reduce.h"
#include "core/threadpool.h"
#include "primitives/reduce.h"

typedef struct sm_job {
  const cm_reduce_plan *P; /* the last axis reduced */
  const char *src;
  cm_dtype dt;
  char *dst;
  bool lse; /* logsumexp instead of softmax */
  atomic_int oom;
} sm_job;

/* Row i of the reduced walk into buf as float/double. */
static void load_row(const sm_job *j, const char *base, void *buf, int64_t n) {
  const cm_reduce_plan *P = j->P;
  int64_t st = P->nr ? P->rstride[0] : 1;
  size_t isz = cm_dtype_size(j->dt);
  if (j->dt == CM_FLOAT64) {
    double *d = buf;
    for (int64_t i = 0; i < n; i++) memcpy(d + i, base + i * st * (int64_t)isz, 8);
    return;
  }
  float *f = buf;
  for (int64_t i = 0; i < n; i++) {
    const char *p = base + i * st * (int64_t)isz;
    uint16_t h;
    switch (j->dt) {
    case CM_FLOAT16: memcpy(&h, p, 2); f[i] = cm_f16_to_f32(h); break;
    case CM_BFLOAT16: memcpy(&h, p, 2); f[i] = cm_bf16_to_f32(h); break;
    default: memcpy(f + i, p, 4); break;
    }
  }
}

/* m = the row's max, NaN winning (the row then gives NaN throughout). */
#define ROW_MAX(a, n, m)                       \
  do {                                         \
    m = a[0];                                  \
    for (int64_t i = 1; i < n; i++)            \
      if (a[i] > m || a[i] != a[i]) m = a[i];  \
  } while (0)

static void sm_rows(void *ctx, int64_t b, int64_t e) {
  sm_job *j = ctx;
  const cm_reduce_plan *P = j->P;
  int64_t n = P->nred;
  bool dbl = j->dt == CM_FLOAT64;
  void *buf = malloc((size_t)n * (dbl ? 8 : 4));
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  size_t isz = cm_dtype_size(j->dt);
  cm_axes_cursor oc;
  cm_axes_cursor_seek(&oc, P->nk, P->kshape, P->kstride, b);
  for (int64_t o = b; o < e; o++, cm_axes_cursor_next(&oc)) {
    load_row(j, j->src + oc.offset * (int64_t)isz, buf, n);
    if (dbl) {
      double *a = buf, m, s = 0;
      ROW_MAX(a, n, m);
      for (int64_t i = 0; i < n; i++) s += a[i] = exp(a[i] - m);
      if (j->lse) {
        double r = isinf(m) ? m : m + log(s);
        memcpy(j->dst + o * 8, &r, 8);
      } else {
        double *d = (double *)j->dst + o * n;
        for (int64_t i = 0; i < n; i++) d[i] = a[i] / s;
      }
      continue;
    }
    float *a = buf, m;
    ROW_MAX(a, n, m);
    /* accumulate in double: rows can be long, and exp dominates anyway */
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] = expf(a[i] - m);
    if (j->lse) {
      float r = isinf(m) ? m : m + logf((float)s);
      if (j->dt == CM_FLOAT32) memcpy(j->dst + o * 4, &r, 4);
      else {
        uint16_t h = j->dt == CM_FLOAT16 ? cm_f32_to_f16(r) : cm_f32_to_bf16(r);
        memcpy(j->dst + o * 2, &h, 2);
      }
      continue;
    }
    float inv = (float)s;
    if (j->dt == CM_FLOAT32) {
      float *d = (float *)j->dst + o * n;
      for (int64_t i = 0; i < n; i++) d[i] = a[i] / inv;
    } else {
      uint16_t *d = (uint16_t *)j->dst + o * n;
      for (int64_t i = 0; i < n; i++)
        d[i] = j->dt == CM_FLOAT16 ? cm_f32_to_f16(a[i] / inv) : cm_f32_to_bf16(a[i] / inv);
    }
  }
  free(buf);
}

static int run(cm_array *out, cm_array *x, bool lse) {
  if (!cm_dtype_is_float(x->dtype))
    return cm_error(CM_ERR_RUNTIME, "[%s] Expected a floating input, got %s.",
                    lse ? "LogSumExp" : "Softmax", cm_dtype_name(x->dtype));
  if (cm_alloc_output(out)) return -1;
  if (x->size == 0) return 0;
  cm_reduce_plan P;
  uint64_t last = x->ndim ? (uint64_t)1 << (x->ndim - 1) : 0;
  cm_reduce_plan_init(&P, x, last);
  sm_job j = {&P, cm_data(x), x->dtype, cm_data(out), lse, 0};
  cm_parallel_for(P.nout, cm_grain(P.nred * 24), sm_rows, &j);
  if (atomic_load(&j.oom)) return cm_error(CM_ERR_MEMORY, "[softmax] Out of memory.");
  return 0;
}

int cm_cpu_softmax(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  return run(out, in[0], false);
}

int cm_cpu_logsumexp(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  return run(out, in[0], true);
}
