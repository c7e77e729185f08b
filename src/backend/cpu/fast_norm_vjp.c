/* The gradients of RMSNorm and LayerNorm (primitives/fast.h,
 * LayerNormVJP / RMSNormVJP) in one pass over the rows.  Per row of x and
 * of the cotangent g, in float32 (half rows are loaded as float and the
 * results rounded once when stored):
 *
 *   xc = x - mean(x)               (RMSNorm: x)
 *   n  = 1 / sqrt(mean(xc^2) + eps)
 *   gw = g * w                     (w absent: g)
 *   dx = n * (gw - mean(gw) - xc * n^2 * mean(gw * xc))   (RMSNorm: no mean(gw))
 *
 * while dw += g * xc * n and db += g accumulate over the rows.  The rows
 * are cut into chunks that depend only on the shape; each chunk sums into
 * its own partial row, and the partials are added in chunk order at the
 * end, so dw and db do not depend on the thread count. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fast.h"
#include "backend/cpu/cpu_features.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

/* The 32-byte vectors below never cross a call boundary (the body is
 * inlined into each target's wrapper), so the ABI note does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8f __attribute__((vector_size(32)));
typedef float v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
#define LD(p) (*(const v8f_u *)(const void *)(p))
#define HSUM(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3] + (v)[4] + (v)[5] + (v)[6] + (v)[7])

/* One row: dx from x, g (and w, NULL: ones); aw += g * xc * n and ab += g
 * when not NULL. */
static inline __attribute__((always_inline)) void row_body(const float *x, const float *g,
                                                           const float *w, float *dx, float *aw,
                                                           float *ab, int64_t D, float eps,
                                                           bool layer) {
  int64_t i;
  float mu = 0;
  if (layer) {
    v8f s = {0};
    for (i = 0; i + 8 <= D; i += 8) s += LD(x + i);
    mu = HSUM(s);
    for (; i < D; i++) mu += x[i];
    mu /= (float)D;
  }
  v8f q8 = {0}, a8 = {0}, b8 = {0};
  for (i = 0; i + 8 <= D; i += 8) {
    v8f d = LD(x + i) - mu, gw = LD(g + i);
    if (w) gw *= LD(w + i);
    q8 += d * d;
    a8 += gw;
    b8 += gw * d;
  }
  float sq = HSUM(q8), s1 = HSUM(a8), s2 = HSUM(b8);
  for (; i < D; i++) {
    float d = x[i] - mu, gw = w ? g[i] * w[i] : g[i];
    sq += d * d;
    s1 += gw;
    s2 += gw * d;
  }
  float n = 1.0f / sqrtf(sq / (float)D + eps);
  float a = layer ? s1 / (float)D : 0.0f, c = n * n * (s2 / (float)D);
  for (i = 0; i + 8 <= D; i += 8) {
    v8f d = LD(x + i) - mu, g8 = LD(g + i), gw = g8;
    if (w) gw *= LD(w + i);
    v8f r = n * (gw - a - d * c);
    memcpy(dx + i, &r, 32);
    if (aw) {
      v8f t = LD(aw + i) + g8 * (d * n);
      memcpy(aw + i, &t, 32);
    }
    if (ab) {
      v8f t = LD(ab + i) + g8;
      memcpy(ab + i, &t, 32);
    }
  }
  for (; i < D; i++) {
    float d = x[i] - mu, gw = w ? g[i] * w[i] : g[i];
    dx[i] = n * (gw - a - d * c);
    if (aw) aw[i] += g[i] * (d * n);
    if (ab) ab[i] += g[i];
  }
}

static void row_base(const float *x, const float *g, const float *w, float *dx, float *aw,
                     float *ab, int64_t D, float eps, bool layer) {
  row_body(x, g, w, dx, aw, ab, D, eps, layer);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) static void row_avx2(const float *x, const float *g,
                                                         const float *w, float *dx, float *aw,
                                                         float *ab, int64_t D, float eps,
                                                         bool layer) {
  row_body(x, g, w, dx, aw, ab, D, eps, layer);
}
#endif

typedef void (*row_fn)(const float *, const float *, const float *, float *, float *, float *,
                       int64_t, float, bool);

typedef struct nv_job {
  const cm_array *x, *g;
  cm_dtype dt;
  int64_t N, D, R; /* rows, row length, rows per chunk */
  char *dx;
  const float *w; /* D floats, or NULL */
  float *pw, *pb; /* chunk c's partial dw / db at c * D, or NULL */
  float eps;
  bool layer;
  row_fn row;
  atomic_int oom;
} nv_job;

/* Row r of a as D floats: in place for a float32 row of unit stride, else
 * loaded into buf. */
static const float *row_of(const cm_array *a, int64_t r, int64_t D, float *buf) {
  int64_t st = a->strides[a->ndim - 1];
  size_t isz = cm_dtype_size(a->dtype);
  const char *src = (const char *)cm_data(a) + cm_fast_row_offset(a, r) * (int64_t)isz;
  if (a->dtype == CM_FLOAT32 && st == 1) return (const float *)src;
  cm_fast_load(buf, src, st, D, a->dtype);
  return buf;
}

static void nv_chunks(void *ctx, int64_t c0, int64_t c1) {
  nv_job *j = ctx;
  int64_t D = j->D;
  size_t isz = cm_dtype_size(j->dt);
  float *buf = malloc((size_t)D * 4 * 3);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t c = c0; c < c1; c++) {
    float *aw = j->pw ? j->pw + c * D : NULL, *ab = j->pb ? j->pb + c * D : NULL;
    int64_t r1 = (c + 1) * j->R < j->N ? (c + 1) * j->R : j->N;
    for (int64_t r = c * j->R; r < r1; r++) {
      const float *x = row_of(j->x, r, D, buf), *g = row_of(j->g, r, D, buf + D);
      float *o = j->dt == CM_FLOAT32 ? (float *)(j->dx + r * D * 4) : buf + 2 * D;
      j->row(x, g, j->w, o, aw, ab, D, j->eps, j->layer);
      if (j->dt != CM_FLOAT32) cm_fast_store(j->dx + r * D * (int64_t)isz, o, D, j->dt);
    }
  }
  free(buf);
}

typedef struct nv_sum {
  const float *part; /* C rows of D */
  int64_t C, D;
  char *dst;
  cm_dtype dt;
} nv_sum;

/* Columns [i0, i1) of the partials, summed in chunk order. */
static void nv_sum_cols(void *ctx, int64_t i0, int64_t i1) {
  nv_sum *s = ctx;
  float acc[256];
  for (int64_t b = i0; b < i1; b += 256) {
    int64_t m = i1 - b < 256 ? i1 - b : 256;
    memcpy(acc, s->part + b, (size_t)m * 4);
    for (int64_t c = 1; c < s->C; c++) {
      const float *p = s->part + c * s->D + b;
      for (int64_t i = 0; i < m; i++) acc[i] += p[i];
    }
    cm_fast_store(s->dst + b * (int64_t)cm_dtype_size(s->dt), acc, m, s->dt);
  }
}

static void nv_reduce(const float *part, int64_t C, int64_t D, cm_array *out) {
  nv_sum s = {part, C, D, cm_data(out), out->dtype};
  cm_parallel_for(D, cm_grain(C), nv_sum_cols, &s);
}

/* Rows per chunk: at least ~8K elements a chunk, at most 64 chunks. */
static int64_t chunk_rows(int64_t N, int64_t D) {
  int64_t a = (8192 + D - 1) / D, b = (N + 63) / 64;
  return a > b ? a : b;
}

static int run(cm_array *out, cm_array *const *in) {
  const cm_norm_vjp_params *p = cm_norm_vjp_params_of(out);
  cm_array *x = in[0], *w = in[1], *g = in[2];
  int nout = 1 + (p->has_dw != 0) + (p->has_db != 0);
  for (int k = 0; k < nout; k++)
    if (cm_alloc_output(cm_output(out, k))) return -1;
  cm_array *dw = p->has_dw ? cm_output(out, 1) : NULL;
  cm_array *db = p->has_db ? cm_output(out, nout - 1) : NULL;
  int64_t D = x->shape[x->ndim - 1], N = D ? x->size / D : 0;
  int64_t R = chunk_rows(N, D), C = N ? (N + R - 1) / R : 0;
  if (!N || !D) { /* no rows: dw and db are zero */
    if (dw) memset(cm_data(dw), 0, (size_t)dw->size * cm_dtype_size(dw->dtype));
    if (db) memset(cm_data(db), 0, (size_t)db->size * cm_dtype_size(db->dtype));
    return 0;
  }
  int nparts = (dw != NULL) + (db != NULL);
  float *wv = NULL, *part = NULL;
  if (w->ndim > 0 && !(wv = malloc((size_t)D * 4))) goto oom;
  if (nparts && !(part = calloc((size_t)(C * D * nparts), 4))) goto oom;
  if (wv) cm_fast_load(wv, cm_data(w), w->strides[0], D, w->dtype);
  nv_job j = {.x = x,
              .g = g,
              .dt = x->dtype,
              .N = N,
              .D = D,
              .R = R,
              .dx = cm_data(out),
              .w = wv,
              .pw = dw ? part : NULL,
              .pb = db ? part + (dw ? C * D : 0) : NULL,
              .eps = p->eps,
              .layer = p->layer != 0,
              .row = row_base};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const cm_cpu_flags *f = cm_cpu_features();
  if (f->avx2 && f->fma) j.row = row_avx2;
#endif
  cm_parallel_for(C, cm_grain(R * D * 12), nv_chunks, &j);
  if (atomic_load(&j.oom)) goto oom;
  if (dw) nv_reduce(j.pw, C, D, dw);
  if (db) nv_reduce(j.pb, C, D, db);
  free(wv);
  free(part);
  return 0;
oom:
  free(wv);
  free(part);
  return cm_error(CM_ERR_MEMORY, "[fast] Out of memory.");
}

int cm_cpu_norm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  return run(out, in);
}
