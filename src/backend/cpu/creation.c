/* Kernels for the creation primitives.  Each output element depends only
 * on its index, so every kernel is a flat parallel loop over the output. */
#include "backend/cpu/creation.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/count.h"
#include "primitives/creation.h"

/* ---- value generation: one loop per dtype ---- */

typedef struct fill_job {
  char *dst;
  cm_dtype dtype;
  /* float path: v(i) = fstart + i * fstep; the last index may be pinned */
  double fstart, fstep, flast;
  int64_t last; /* index whose value is flast, or -1 */
  /* integer path: v(i) = istart + i * istep in wrapping 64-bit arithmetic */
  uint64_t istart, istep;
} fill_job;

static inline double fvalue(const fill_job *j, int64_t i) {
  if (i == 0) return j->fstart; /* exact even when the step is inf/nan */
  if (i == j->last) return j->flast;
  return j->fstart + (double)i * j->fstep;
}


static void fill_range(void *ctx, int64_t b, int64_t e) {
  const fill_job *j = ctx;
  switch (j->dtype) {
#define INT_CASE(E, T)                                                     \
  case E: {                                                                \
    T *d = (T *)j->dst;                                                    \
    for (int64_t i = b; i < e; i++) d[i] = (T)(j->istart + (uint64_t)i * j->istep); \
    break;                                                                 \
  }
    INT_CASE(CM_UINT8, uint8_t)
    INT_CASE(CM_UINT16, uint16_t)
    INT_CASE(CM_UINT32, uint32_t)
    INT_CASE(CM_UINT64, uint64_t)
    INT_CASE(CM_INT8, int8_t)
    INT_CASE(CM_INT16, int16_t)
    INT_CASE(CM_INT32, int32_t)
    INT_CASE(CM_INT64, int64_t)
#undef INT_CASE
  case CM_BOOL: {
    bool *d = (bool *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = fvalue(j, i) != 0;
    break;
  }
  case CM_FLOAT16: {
    uint16_t *d = (uint16_t *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = cm_f32_to_f16((float)fvalue(j, i));
    break;
  }
  case CM_BFLOAT16: {
    uint16_t *d = (uint16_t *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = cm_f32_to_bf16((float)fvalue(j, i));
    break;
  }
  case CM_FLOAT32: {
    float *d = (float *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = (float)fvalue(j, i);
    break;
  }
  case CM_FLOAT64: {
    double *d = (double *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = fvalue(j, i);
    break;
  }
  case CM_COMPLEX64: {
    cm_complex64 *d = (cm_complex64 *)j->dst;
    for (int64_t i = b; i < e; i++) d[i] = (cm_complex64){(float)fvalue(j, i), 0.0f};
    break;
  }
  default: break;
  }
}

/* Integer outputs of linspace: the float value truncated, as astype does. */
static void fill_range_f2i(void *ctx, int64_t b, int64_t e) {
  const fill_job *j = ctx;
  switch (j->dtype) {
#define F2I_CASE(E, T, F2I)                                               \
  case E: {                                                               \
    T *d = (T *)j->dst;                                                   \
    for (int64_t i = b; i < e; i++) d[i] = F2I(fvalue(j, i));             \
    break;                                                                \
  }
    F2I_CASE(CM_UINT8, uint8_t, cm_f2u8)
    F2I_CASE(CM_UINT16, uint16_t, cm_f2u16)
    F2I_CASE(CM_UINT32, uint32_t, cm_f2u32)
    F2I_CASE(CM_UINT64, uint64_t, cm_f2u64)
    F2I_CASE(CM_INT8, int8_t, cm_f2i8)
    F2I_CASE(CM_INT16, int16_t, cm_f2i16)
    F2I_CASE(CM_INT32, int32_t, cm_f2i32)
    F2I_CASE(CM_INT64, int64_t, cm_f2i64)
#undef F2I_CASE
  default: fill_range(ctx, b, e); break;
  }
}

/* Round a double to the precision of a float dtype (kept as a double). */
static double round_to(cm_dtype t, double x) {
  switch (t) {
  case CM_FLOAT16: return cm_f16_to_f32(cm_f32_to_f16((float)x));
  case CM_BFLOAT16: return cm_bf16_to_f32(cm_f32_to_bf16((float)x));
  case CM_FLOAT64: return x;
  default: return (float)x; /* float32, complex64 */
  }
}

/* Truncate a double to a 64-bit integer pattern; out-of-range values
 * saturate (uint64 values above INT64_MAX keep their unsigned bits). */
static uint64_t trunc_to_bits(double x, cm_dtype t) {
  if (x != x) return 0;
  if (t == CM_UINT64 && x >= 9223372036854775808.0)
    return x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
  if (x >= 9223372036854775808.0) return (uint64_t)INT64_MAX;
  if (x < -9223372036854775808.0) return (uint64_t)INT64_MIN;
  return (uint64_t)(int64_t)x;
}

static int run_fill(cm_array *out, fill_job *j, cm_range_fn fn) {
  if (cm_alloc_output(out)) return -1;
  j->dst = cm_data(out);
  j->dtype = out->dtype;
  cm_parallel_for(out->size, cm_grain(2), fn, j);
  return 0;
}

int cm_cpu_arange(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  const cm_arange_params *a = cm_arange_params_of(out);
  fill_job j = {.last = -1};
  cm_dtype t = out->dtype;
  if (cm_dtype_is_integral(t)) {
    /* MLX uses T(start) and T(start + step) - T(start).  When start and
     * step are whole numbers that difference is step itself; taking it
     * directly keeps large int64 ranges exact (start + step may round). */
    j.istart = trunc_to_bits(a->start, t);
    if (a->start == trunc(a->start) && a->step == trunc(a->step) && fabs(a->step) < 9.2e18)
      j.istep = (uint64_t)(int64_t)a->step;
    else
      j.istep = trunc_to_bits(a->start + a->step, t) - j.istart;
  } else {
    /* floats: start and step in the dtype's own precision, as MLX does */
    double s = round_to(t, a->start);
    double next = round_to(t, a->start + a->step);
    j.fstart = s;
    j.fstep = round_to(t, next - s);
  }
  return run_fill(out, &j, fill_range);
}

int cm_cpu_linspace(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  const cm_linspace_params *l = cm_linspace_params_of(out);
  int64_t n = out->size;
  fill_job j = {.fstart = l->start, .flast = l->stop, .last = n > 1 ? n - 1 : -1};
  j.fstep = n > 1 ? (l->stop - l->start) / (double)(n - 1) : 0.0;
  return run_fill(out, &j, fill_range_f2i);
}

/* ---- Eye and Tri: rows of zeros with a run of ones ---- */

typedef struct band_job {
  char *dst;
  int64_t m;
  size_t isz;
  int k;
  bool tri;
  _Alignas(16) unsigned char one[16]; /* the value 1 in the output dtype */
} band_job;

static void band_rows(void *ctx, int64_t b, int64_t e) {
  const band_job *j = ctx;
  for (int64_t r = b; r < e; r++) {
    char *row = j->dst + (size_t)(r * j->m) * j->isz;
    memset(row, 0, (size_t)j->m * j->isz); /* zero is all-zero bits in every dtype */
    int64_t c0 = j->tri ? 0 : r + j->k;              /* first column holding a one */
    int64_t c1 = r + j->k + 1;                        /* one past the last */
    if (c0 < 0) c0 = 0;
    if (c1 > j->m) c1 = j->m;
    for (int64_t c = c0; c < c1; c++) memcpy(row + (size_t)c * j->isz, j->one, j->isz);
  }
}

static int band(cm_array *out, bool tri) {
  if (cm_alloc_output(out)) return -1;
  band_job j = {
      .dst = cm_data(out), .isz = cm_itemsize(out), .k = cm_band_params_of(out)->k, .tri = tri};
  int64_t n = out->shape[0];
  j.m = out->shape[1];
  cm_store_double(j.one, out->dtype, 1.0);
  cm_parallel_for(n, cm_grain(j.m ? j.m : 1), band_rows, &j);
  return 0;
}

int cm_cpu_eye(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  return band(out, false);
}

int cm_cpu_tri(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  return band(out, true);
}

/* NumberOfElements: reads only the input's shape. */
int cm_cpu_number_of_elements(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_count_params *q = cm_count_params_of(out);
  double n = 1;
  for (int i = 0; i < in[0]->ndim; i++)
    if (q->axes >> i & 1) n *= in[0]->shape[i];
  if (cm_alloc_output(out)) return -1;
  cm_store_double(cm_data(out), out->dtype, q->inverted ? 1.0 / n : n);
  return 0;
}
