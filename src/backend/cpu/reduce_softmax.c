/* Softmax and LogSumExp over the last axis, fused: each row is read once
 * into a float (or double) buffer, its max, exp-sum and result computed
 * there with the same kernels the Max, Exp and Sum ops use.  The composed
 * versions (ops/reduce_compose.c) take every other axis set.
 * float16/bfloat16 always compute in float32 here, which is what softmax's
 * precise flag asks for and never less accurate without it. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/reduce.h"
#include "backend/cpu/unary_impl.h"
#include "core/threadpool.h"
#include "primitives/reduce.h"

typedef struct sm_job {
  const cm_reduce_plan *P; /* the last axis reduced */
  const char *src;
  cm_dtype dt;
  char *dst;
  bool lse; /* logsumexp instead of softmax */
  atomic_int oom;
  /* float rows: the Max and Sum reduction kernels, the Exp row loop */
  cm_red_fn max, sum;
  cm_unary_row_fn exp;
  cm_unary_params exp_params;
} sm_job;

/* The row starting at base into buf as float (double for float64). */
static void load_row(const sm_job *j, const char *base, void *buf, int64_t n) {
  const cm_reduce_plan *P = j->P;
  int64_t st = P->nr ? P->rstride[0] : 1;
  size_t isz = cm_dtype_size(j->dt);
  if ((j->dt == CM_FLOAT32 || j->dt == CM_FLOAT64) && st == 1) {
    memcpy(buf, base, (size_t)n * isz);
    return;
  }
  if (j->dt == CM_FLOAT64) {
    double *d = buf;
    for (int64_t i = 0; i < n; i++) d[i] = ((const double *)base)[i * st];
  } else if (j->dt == CM_FLOAT32) {
    float *f = buf;
    for (int64_t i = 0; i < n; i++) f[i] = ((const float *)base)[i * st];
  } else {
    float *f = buf;
    const uint16_t *h = (const uint16_t *)base;
    if (j->dt == CM_FLOAT16)
      for (int64_t i = 0; i < n; i++) f[i] = cm_f16_to_f32(h[i * st]);
    else
      for (int64_t i = 0; i < n; i++) f[i] = cm_bf16_to_f32(h[i * st]);
  }
}

/* x[i] = (x[i] - m) * k over a float row, four lanes at a time (16-byte
 * vectors need nothing beyond the baseline instruction set). */
typedef float v4f __attribute__((vector_size(16)));
static void shift_scale(float *x, int64_t n, float m, float k) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f v;
    memcpy(&v, x + i, 16);
    v = (v - m) * k;
    memcpy(x + i, &v, 16);
  }
  for (; i < n; i++) x[i] = (x[i] - m) * k;
}

/* One float row: max (NaN wins), then e = exp(x - max) in place with the
 * Exp kernel (vectorised where the CPU allows), its sum with the Sum
 * kernel, and softmax = e * (1 / sum) or logsumexp = max + log(sum). */
static void row_f32(const sm_job *j, float *a, int64_t n, int64_t o) {
  float m, s;
  j->max(&m, a, n);
  shift_scale(a, n, m, 1.0f);
  j->exp(a, 1, a, 1, n, &j->exp_params);
  j->sum(&s, a, n);
  if (j->lse) {
    float r = isinf(m) ? m : m + logf(s);
    if (j->dt == CM_FLOAT32) memcpy(j->dst + o * 4, &r, 4);
    else {
      uint16_t h = j->dt == CM_FLOAT16 ? cm_f32_to_f16(r) : cm_f32_to_bf16(r);
      memcpy(j->dst + o * 2, &h, 2);
    }
    return;
  }
  shift_scale(a, n, 0.0f, 1.0f / s);
  if (j->dt != CM_FLOAT32) { /* float32 rows were computed in the output */
    uint16_t *d = (uint16_t *)j->dst + o * n;
    for (int64_t i = 0; i < n; i++)
      d[i] = j->dt == CM_FLOAT16 ? cm_f32_to_f16(a[i]) : cm_f32_to_bf16(a[i]);
  }
}

/* float64 rows stay in double (libm exp). */
static void row_f64(const sm_job *j, double *a, int64_t n, int64_t o) {
  double m = a[0], s = 0;
  for (int64_t i = 1; i < n; i++)
    if (a[i] > m || a[i] != a[i]) m = a[i];
  for (int64_t i = 0; i < n; i++) s += a[i] = exp(a[i] - m);
  if (j->lse) {
    double r = isinf(m) ? m : m + log(s);
    memcpy(j->dst + o * 8, &r, 8);
    return;
  }
  double *d = (double *)j->dst + o * n;
  for (int64_t i = 0; i < n; i++) d[i] = a[i] / s;
}

static void sm_rows(void *ctx, int64_t b, int64_t e) {
  sm_job *j = ctx;
  const cm_reduce_plan *P = j->P;
  int64_t n = P->nred;
  bool dbl = j->dt == CM_FLOAT64;
  void *buf = aligned_alloc(64, ((size_t)n * (dbl ? 8 : 4) + 63) / 64 * 64);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  size_t isz = cm_dtype_size(j->dt);
  cm_axes_cursor oc;
  cm_axes_cursor_seek(&oc, P->nk, P->kshape, P->kstride, b);
  for (int64_t o = b; o < e; o++, cm_axes_cursor_next(&oc)) {
    /* float32 softmax works in its output row: no copy at the end */
    void *row = j->dt == CM_FLOAT32 && !j->lse ? (void *)((float *)j->dst + o * n) : buf;
    load_row(j, j->src + oc.offset * (int64_t)isz, row, n);
    if (dbl) row_f64(j, row, n, o);
    else row_f32(j, row, n, o);
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
  sm_job j = {.P = &P, .src = cm_data(x), .dt = x->dtype, .dst = cm_data(out), .lse = lse};
  j.max = cm_reduce_contig(CM_REDUCE_MAX, CM_FLOAT32);
  j.sum = cm_reduce_contig(CM_REDUCE_SUM, CM_FLOAT32);
  j.exp = cm_unary_simd(CM_UNARY_EXP, CM_FLOAT32);
  if (!j.exp) j.exp = cm_unary_row(CM_UNARY_EXP, CM_FLOAT32);
  memset(&j.exp_params, 0, sizeof j.exp_params);
  j.exp_params.op = CM_UNARY_EXP;
  if (!j.exp) return cm_error(CM_ERR_RUNTIME, "[softmax] No exp kernel.");
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
