/* The Hadamard kernel: MLX's CPU algorithm, row by row over the pool.
 *
 * A row of n = m * 2^k holds m blocks of 2^k; each block gets the radix-2
 * butterflies (the scale folded into the last stage when m is 1), then
 * every column i of the m x 2^k view gets the product with Sloane's H_m
 * (sums in order, then the scale).  A row is worked in float32 and, for
 * float16 and bfloat16, every stage's results are rounded to the type as
 * MLX's kernel (which stores them) does, so the results agree bit for
 * bit. */
#include "backend/cpu/hadamard.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "core/threadpool.h"
#include "primitives/hadamard.h"

typedef struct job {
  char *data;
  cm_dtype dt;
  int n, m, pow2;
  float scale;
  const char *hm; /* H_m as '+'/'-', NULL when m is 1 */
  atomic_bool failed;
} job;

static float round_to(cm_dtype dt, float v) {
  switch (dt) {
  case CM_FLOAT16: return cm_f16_to_f32(cm_f32_to_f16(v));
  case CM_BFLOAT16: return cm_bf16_to_f32(cm_f32_to_bf16(v));
  default: return v;
  }
}

static void load(const job *j, const char *src, float *row) {
  if (j->dt == CM_FLOAT32) memcpy(row, src, sizeof(float) * (size_t)j->n);
  else cm_cpu_convert(row, CM_FLOAT32, src, j->dt, j->n);
}

static void store(const job *j, const float *row, char *dst) {
  if (j->dt == CM_FLOAT32) memcpy(dst, row, sizeof(float) * (size_t)j->n);
  else cm_cpu_convert(dst, j->dt, row, CM_FLOAT32, j->n);
}

/* The 2^k butterflies of one block. */
static void butterflies(const job *j, float *x, float scale) {
  int n = j->pow2;
  bool half = j->dt != CM_FLOAT32;
  for (int h = 1; h < n; h <<= 1) {
    bool last = h == n / 2;
    for (int i = 0; i < n / 2; i++) {
      int k = i & (h - 1), a = ((i - k) << 1) + k;
      float u = x[a], v = x[a + h], s = u + v, d = u - v;
      if (half) s = round_to(j->dt, s), d = round_to(j->dt, d);
      if (last) {
        s *= scale, d *= scale;
        if (half) s = round_to(j->dt, s), d = round_to(j->dt, d);
      }
      x[a] = s;
      x[a + h] = d;
    }
  }
}

/* Column i of the m x 2^k view times H_m, then the scale. */
static void m_stage(const job *j, float *x, float *acc) {
  int m = j->m, n = j->pow2;
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < m; r++) {
      float sum = 0;
      const char *row = j->hm + (size_t)r * m;
      for (int k = 0; k < m; k++) sum += row[k] == '+' ? x[i + k * n] : -x[i + k * n];
      acc[r] = sum;
    }
    for (int r = 0; r < m; r++) x[i + r * n] = round_to(j->dt, acc[r] * j->scale);
  }
}

static void run_rows(void *ctx, int64_t begin, int64_t end) {
  job *j = ctx;
  size_t esz = cm_dtype_size(j->dt);
  float *row = malloc(sizeof(float) * ((size_t)j->n + (size_t)j->m));
  if (!row) {
    atomic_store(&j->failed, true);
    return;
  }
  float nscale = j->m > 1 ? 1.0f : j->scale;
  for (int64_t r = begin; r < end; r++) {
    char *p = j->data + r * j->n * (int64_t)esz;
    load(j, p, row);
    for (int b = 0; b < j->m; b++) butterflies(j, row + (size_t)b * j->pow2, nscale);
    if (j->m > 1) m_stage(j, row, row + j->n);
    store(j, row, p);
  }
  free(row);
}

int cm_cpu_hadamard(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *x = in[0];
  if (!(cm_row_contiguous(x) && cm_try_donate(out, x))) {
    if (cm_alloc_output(out)) return -1;
    cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(x), x->dtype, x->strides,
                        x->ndim, x->shape);
  }
  job j = {.data = cm_data(out), .dt = out->dtype, .scale = cm_hadamard_params_of(out)->scale};
  j.n = out->ndim ? out->shape[out->ndim - 1] : 1;
  if (cm_hadamard_decompose(j.n, &j.m, &j.pow2)) return -1;
  j.hm = cm_hadamard_matrix(j.m);
  atomic_init(&j.failed, false);
  int64_t rows = out->size / j.n, log2n = 1;
  while ((1LL << log2n) < j.n) log2n++;
  cm_parallel_for(rows, cm_grain(2 * (int64_t)j.n * (log2n + j.m)), run_rows, &j);
  return atomic_load(&j.failed) ? cm_error(CM_ERR_MEMORY, "[hadamard] Out of memory.") : 0;
}
