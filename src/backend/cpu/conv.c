/* Convolution on the CPU: two GEMM formulations, picked per call by their
 * cost.
 *
 * - Gather (im2col): for a block of output positions, copy every tap's
 *   input channels into a row of a patch matrix (zeros where a tap falls
 *   in the padding or between dilated input elements), then one GEMM per
 *   group: patches (rows x taps*Cg) @ weight^T (taps*Cg x Og).
 * - Scatter (GEMM then col2im): multiply every input position by the
 *   weight first, P = x (rows x Cg) @ W (Cg x taps*Og), then each output
 *   position sums the rows of P its taps reach.  Its GEMM runs over input
 *   positions instead of output positions, so it wins when the input is
 *   dilated (transposed convolutions, the input gradient of a strided
 *   convolution), where most patch entries would be zeros.
 * The output-side sum walks output positions (in parallel), so both are
 * deterministic and free of write races.  A pointwise convolution (1x1,
 * stride 1, no padding) is a single GEMM on the input itself.
 *
 * Work is cut into blocks of rows so the scratch stays near
 * CONV_SCRATCH bytes; each block's copies run on the pool and its GEMMs
 * on the calling thread (OpenBLAS threads each call itself, so the two
 * never run at once).  float16/bfloat16 compute in float32 and are
 * rounded once; float64 uses dgemm and complex64 cgemm. */
#include "backend/cpu/conv.h"
#include "backend/cpu/conv_nhwc.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/conv.h"

#define CONV_SCRATCH ((int64_t)16 << 20)
#define NAX 3 /* spatial axes as the kernel sees them; missing ones have size 1 */

typedef struct geom {
  int64_t N, C, O, G, Cg, Og;
  int64_t S[NAX], K[NAX], Y[NAX];
  int64_t stride[NAX], lo[NAX], kdil[NAX], idil[NAX];
  int64_t in_pos, out_pos, taps;
  bool flip;
  cm_dtype ct; /* compute type */
  int *fail;   /* set by a worker that could not get scratch memory */
  size_t esz;
} geom;

/* The input index on axis a that output y reads through weight tap t, or
 * -1 when that tap lands in the padding or between dilated elements. */
static inline int64_t src_index(const geom *g, int a, int64_t y, int64_t t) {
  int64_t k = g->flip ? g->K[a] - 1 - t : t;
  int64_t j = y * g->stride[a] + k * g->kdil[a] - g->lo[a];
  if (j < 0) return -1;
  if (g->idil[a] != 1) {
    if (j % g->idil[a]) return -1;
    j /= g->idil[a];
  }
  return j < g->S[a] ? j : -1;
}

/* x is the input; the kernel's spatial sizes are axes 1..d of kw, the
 * output's those of y, and O the output channels. */
static void geom_init(geom *g, const cm_conv_params *p, const cm_array *x, const cm_array *kw,
                      const cm_array *y, int64_t O, cm_dtype dt) {
  int d = p->ndim;
  g->N = x->shape[0];
  g->C = x->shape[d + 1];
  g->O = O;
  g->G = p->groups;
  g->Cg = g->C / g->G;
  g->Og = g->O / g->G;
  g->flip = p->flip != 0;
  g->in_pos = g->out_pos = g->taps = 1;
  for (int a = 0; a < NAX; a++) {
    /* real axes last, so the innermost loops run over the last axis */
    int i = a - (NAX - d);
    bool real = i >= 0;
    g->S[a] = real ? x->shape[i + 1] : 1;
    g->K[a] = real ? kw->shape[i + 1] : 1;
    g->Y[a] = real ? y->shape[i + 1] : 1;
    g->stride[a] = real ? p->ax[i].stride : 1;
    g->lo[a] = real ? p->ax[i].pad_lo : 0;
    g->kdil[a] = real ? p->ax[i].kdil : 1;
    g->idil[a] = real ? p->ax[i].idil : 1;
    g->in_pos *= g->S[a];
    g->out_pos *= g->Y[a];
    g->taps *= g->K[a];
  }
  g->ct = dt == CM_FLOAT64 || dt == CM_COMPLEX64 ? dt : CM_FLOAT32;
  g->esz = cm_dtype_size(g->ct);
}

/* Split a flat output row into (n, y0, y1, y2). */
static void out_coords(const geom *g, int64_t r, int64_t *n, int64_t *y) {
  for (int a = NAX - 1; a >= 0; a--) {
    y[a] = r % g->Y[a];
    r /= g->Y[a];
  }
  *n = r;
}

/* out_coords for row r, stepping from the previous row (*last) when r
 * follows it: the divisions cost more than a narrow row's copies. */
static inline void coords_at(const geom *g, int64_t r, int64_t *last, int64_t *n, int64_t *y) {
  if (*last < 0 || r != *last + 1) {
    out_coords(g, r, n, y);
  } else {
    int a = NAX - 1;
    while (a >= 0 && ++y[a] == g->Y[a]) y[a--] = 0;
    if (a < 0) ++*n;
  }
  *last = r;
}

/* For output position y, the input position (within its image, flat)
 * that each weight tap reads, or -1 (padding, between dilated elements). */
static void tap_sources(const geom *g, const int64_t *y, int64_t *pos) {
  int64_t t = 0;
  for (int64_t t0 = 0; t0 < g->K[0]; t0++) {
    int64_t s0 = src_index(g, 0, y[0], t0);
    for (int64_t t1 = 0; t1 < g->K[1]; t1++) {
      int64_t s1 = s0 < 0 ? -1 : src_index(g, 1, y[1], t1);
      for (int64_t t2 = 0; t2 < g->K[2]; t2++, t++) {
        int64_t s2 = s1 < 0 ? -1 : src_index(g, 2, y[2], t2);
        pos[t] = s2 < 0 ? -1 : (s0 * g->S[1] + s1) * g->S[2] + s2;
      }
    }
  }
}

/* Room for one row's tap_sources: on the stack when small. */
#define TAP_STACK 256
static int64_t *tap_buffer(const geom *g, int64_t *stack) {
  return g->taps <= TAP_STACK ? stack : malloc(sizeof(int64_t) * (size_t)g->taps);
}
static void tap_buffer_free(const geom *g, int64_t *buf) {
  if (g->taps > TAP_STACK) free(buf);
}

/* ---- BLAS ---- */

/* C (M x N, ldc) = op(A) @ op(B) (+ C when accumulate), row-major. */
static void gemm(cm_dtype ct, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N,
                 int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                 int64_t ldc, bool accumulate) {
  switch (ct) {
  case CM_FLOAT32:
    cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0f, A, (int)lda, B, (int)ldb,
                accumulate ? 1.0f : 0.0f, C, (int)ldc);
    break;
  case CM_FLOAT64:
    cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0, A, (int)lda, B, (int)ldb,
                accumulate ? 1.0 : 0.0, C, (int)ldc);
    break;
  default: {
    cm_c64_t one = 1, beta = accumulate ? 1 : 0;
    cblas_cgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, &one, A, (int)lda, B, (int)ldb,
                &beta, C, (int)ldc);
    break;
  }
  }
}

/* C = A (M x K) @ B^T, B being N x K. */
static void gemm_nt(cm_dtype ct, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                    const void *B, int64_t ldb, void *C, int64_t ldc) {
  gemm(ct, CblasNoTrans, CblasTrans, M, N, K, A, lda, B, ldb, C, ldc, false);
}

/* ---- gather (im2col) ---- */

typedef struct gather_job {
  const geom *g;
  const char *x; /* (N, S..., C), compute type */
  char *col;     /* rows x G*taps*Cg, from row r0 */
  int64_t r0;
} gather_job;

static void gather_rows(void *ctx, int64_t begin, int64_t end) {
  const gather_job *j = ctx;
  const geom *g = j->g;
  size_t esz = g->esz, run = (size_t)g->Cg * esz;
  int64_t width = g->G * g->taps * g->Cg, stack[TAP_STACK];
  int64_t *pos = tap_buffer(g, stack);
  int64_t n = 0, y[NAX] = {0}, last = -1;
  if (!pos) return (void)__atomic_store_n(j->g->fail, 1, __ATOMIC_RELAXED);
  for (int64_t r = begin; r < end; r++) {
    coords_at(g, j->r0 + r, &last, &n, y);
    tap_sources(g, y, pos);
    char *dst = j->col + r * width * (int64_t)esz;
    for (int64_t grp = 0; grp < g->G; grp++) {
      const char *xg = j->x + (n * g->in_pos * g->C + grp * g->Cg) * (int64_t)esz;
      for (int64_t t = 0; t < g->taps; t++, dst += run) {
        if (pos[t] < 0) memset(dst, 0, run);
        else memcpy(dst, xg + pos[t] * g->C * (int64_t)esz, run);
      }
    }
  }
  tap_buffer_free(g, pos);
}

/* A 1x1 convolution at stride 1 without padding: the input is the patch
 * matrix. */
static bool pointwise(const geom *g) {
  if (g->taps != 1) return false;
  for (int a = 0; a < NAX; a++)
    if (g->Y[a] != g->S[a] || g->stride[a] != 1 || g->lo[a] != 0 || g->idil[a] != 1) return false;
  return true;
}

/* out rows [r0, r0 + rows) = patches @ W^T, group by group. */
static void gemm_groups(const geom *g, const char *A, int64_t lda, const char *w, int64_t rows,
                        char *out) {
  int64_t kc = g->taps * g->Cg;
  for (int64_t grp = 0; grp < g->G; grp++)
    gemm_nt(g->ct, rows, g->Og, kc, A + grp * kc * (int64_t)g->esz, lda,
            w + grp * g->Og * kc * (int64_t)g->esz, kc, out + grp * g->Og * (int64_t)g->esz, g->O);
}

/* ---- scatter (GEMM, then col2im) ---- */

typedef struct scatter_job {
  const geom *g;
  const char *P; /* input rows from image n0: G*taps*Og per row */
  char *dst;     /* output rows from image n0 */
  int64_t n0;
} scatter_job;

#define SUM_TAPS(NAME, T, lanes)                                                      \
  static void sum_taps_##NAME(const geom *g, const char *P, char *dst, int64_t n_rel, \
                              const int64_t *pos) {                                   \
    int64_t O = g->O * (lanes), Og = g->Og * (lanes), tg = g->taps * Og;              \
    T *acc = (T *)dst;                                                                \
    for (int64_t o = 0; o < O; o++) acc[o] = 0;                                       \
    const T *base = (const T *)P + n_rel * g->in_pos * g->G * tg;                     \
    for (int64_t t = 0; t < g->taps; t++) {                                           \
      if (pos[t] < 0) continue;                                                       \
      const T *row = base + pos[t] * g->G * tg + t * Og;                              \
      for (int64_t grp = 0; grp < g->G; grp++) {                                      \
        const T *src = row + grp * tg;                                                \
        T *a = acc + grp * Og;                                                        \
        for (int64_t o = 0; o < Og; o++) a[o] += src[o];                              \
      }                                                                               \
    }                                                                                 \
  }
SUM_TAPS(f32, float, 1)
SUM_TAPS(f64, double, 1)
SUM_TAPS(c64, float, 2) /* complex64 sums as pairs of floats */

static void scatter_rows(void *ctx, int64_t begin, int64_t end) {
  const scatter_job *j = ctx;
  const geom *g = j->g;
  int64_t rowb = g->O * (int64_t)g->esz, stack[TAP_STACK];
  int64_t *pos = tap_buffer(g, stack);
  int64_t n = 0, y[NAX] = {0}, last = -1;
  if (!pos) return (void)__atomic_store_n(g->fail, 1, __ATOMIC_RELAXED);
  for (int64_t r = begin; r < end; r++) {
    coords_at(g, j->n0 * g->out_pos + r, &last, &n, y);
    tap_sources(g, y, pos);
    char *dst = j->dst + r * rowb;
    if (g->ct == CM_FLOAT32) sum_taps_f32(g, j->P, dst, n - j->n0, pos);
    else if (g->ct == CM_FLOAT64) sum_taps_f64(g, j->P, dst, n - j->n0, pos);
    else sum_taps_c64(g, j->P, dst, n - j->n0, pos);
  }
  tap_buffer_free(g, pos);
}

/* The weight as [group][tap][o'][c'] (compute type), the B^T of the
 * scatter GEMM. */
static void *weight_by_tap(const geom *g, const char *w) {
  size_t esz = g->esz;
  char *wt = malloc((size_t)(g->O * g->taps * g->Cg) * esz);
  if (!wt) return NULL;
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t o = 0; o < g->Og; o++)
      for (int64_t t = 0; t < g->taps; t++)
        memcpy(wt + (((grp * g->taps + t) * g->Og + o) * g->Cg) * (int64_t)esz,
               w + (((grp * g->Og + o) * g->taps + t) * g->Cg) * (int64_t)esz, (size_t)g->Cg * esz);
  return wt;
}

/* Output rows [r0, r1) (whole images), wt being weight_by_tap's. */
static int scatter_block(const geom *g, const char *x, const char *wt, int64_t r0, int64_t r1,
                         char *dst, void *scratch) {
  int64_t n0 = r0 / g->out_pos, n1 = r1 / g->out_pos;
  int64_t rows = (n1 - n0) * g->in_pos, tg = g->taps * g->Og;
  const char *xr = x + n0 * g->in_pos * g->C * (int64_t)g->esz;
  for (int64_t grp = 0; grp < g->G; grp++)
    gemm_nt(g->ct, rows, tg, g->Cg, xr + grp * g->Cg * (int64_t)g->esz, g->C,
            wt + grp * tg * g->Cg * (int64_t)g->esz, g->Cg,
            (char *)scratch + grp * tg * (int64_t)g->esz, g->G * tg);
  scatter_job j = {g, scratch, dst, n0};
  cm_parallel_for(r1 - r0, cm_grain(g->taps * g->O), scatter_rows, &j);
  return 0;
}

/* ---- driver ---- */

/* An operand in the compute type, row-major: a's own data when it
 * already is, else a copy (*owned set, to be freed). */
static const char *compute_view(const cm_array *a, cm_dtype ct, void **owned) {
  *owned = NULL;
  if (a->dtype == ct && cm_row_contiguous(a)) return cm_data(a);
  void *buf = malloc((size_t)(a->size ? a->size : 1) * cm_dtype_size(ct));
  if (!buf) return NULL;
  int64_t st[CM_CONV_MAX_SPATIAL + 2];
  cm_row_major_strides(a->ndim, a->shape, st);
  cm_cpu_copy_strided(buf, ct, st, cm_data(a), a->dtype, a->strides, a->ndim, a->shape);
  *owned = buf;
  return buf;
}

/* Rough costs of the two formulations (multiply-adds plus copies). */
static bool use_scatter(const geom *g) {
  double r_out = (double)g->N * (double)g->out_pos, r_in = (double)g->N * (double)g->in_pos;
  double flops = (double)g->Cg * (double)g->O;
  double gather = r_out * (double)g->taps * (flops + 2.0 * (double)g->C);
  double scatter = r_in * (double)g->taps * (flops + 3.0 * (double)g->O);
  return !pointwise(g) && 1.25 * scatter < gather;
}

static bool blas_fits(const geom *g) {
  int64_t big = g->G * g->taps * g->O;
  int64_t kc = g->G * g->taps * g->Cg;
  return big < INT_MAX && kc < INT_MAX && g->C < INT_MAX;
}

/* The patch matrix (or the input itself, pointwise) for output rows
 * [r0, r1): its pointer and row stride. */
static const char *patches(const geom *g, const char *x, int64_t r0, int64_t r1, char *scratch,
                           int64_t *ld) {
  if (pointwise(g)) {
    *ld = g->C;
    return x + r0 * g->C * (int64_t)g->esz;
  }
  gather_job j = {g, x, scratch, r0};
  *ld = g->G * g->taps * g->Cg;
  cm_parallel_for(r1 - r0, cm_grain(*ld), gather_rows, &j);
  return scratch;
}

/* Output rows per block and the scratch they need (elements). */
static int64_t block_rows(const geom *g, bool scatter, bool widen, int64_t *scratch_elems) {
  /* scatter works on whole images: its sums need every input row of one */
  int64_t row_cost = scatter ? g->in_pos * g->taps * g->O : g->G * g->taps * g->Cg;
  if (pointwise(g)) row_cost = 0;
  int64_t unit = scatter ? g->out_pos : 1, units = scatter ? g->N : g->N * g->out_pos;
  int64_t per = CONV_SCRATCH / ((row_cost + (widen ? g->O * unit : 0) + 1) * (int64_t)g->esz);
  if (per < 1) per = 1;
  if (per > units) per = units;
  *scratch_elems = per * row_cost;
  return per * unit;
}

/* ---- direct: one input channel per group (depthwise, convolve) ----
 * GEMMs of inner size taps would be calls of a few dozen flops each;
 * instead each output row adds, tap by tap, the input row it reads times
 * that tap's weights, a loop over the channels. */

typedef struct direct_job {
  const geom *g;
  const char *x, *wt; /* wt: [tap][O], compute type */
  char *dst;          /* output rows from r0 */
  int64_t r0;
} direct_job;

/* acc[o] += x * w[o] over n floats, 4 lanes at a time (GCC/clang vector
 * types: -O2 leaves these loops scalar, and they are the whole kernel). */
typedef float v4f __attribute__((vector_size(16)));
static inline void axpy_f32(float *acc, float x, const float *w, int64_t n) {
  int64_t o = 0;
  v4f xv = {x, x, x, x};
  for (; o + 4 <= n; o += 4) {
    v4f a, b;
    memcpy(&a, acc + o, sizeof a);
    memcpy(&b, w + o, sizeof b);
    a += xv * b;
    memcpy(acc + o, &a, sizeof a);
  }
  for (; o < n; o++) acc[o] += x * w[o];
}
static inline void axpy_f64(double *acc, double x, const double *w, int64_t n) {
  for (int64_t o = 0; o < n; o++) acc[o] += x * w[o];
}
/* acc[o] += x[o] * w[o] (depthwise: one output per input channel) */
static inline void madd_f32(float *acc, const float *x, const float *w, int64_t n) {
  int64_t o = 0;
  for (; o + 4 <= n; o += 4) {
    v4f a, b, c;
    memcpy(&a, acc + o, sizeof a);
    memcpy(&b, x + o, sizeof b);
    memcpy(&c, w + o, sizeof c);
    a += b * c;
    memcpy(acc + o, &a, sizeof a);
  }
  for (; o < n; o++) acc[o] += x[o] * w[o];
}
static inline void madd_f64(double *acc, const double *x, const double *w, int64_t n) {
  for (int64_t o = 0; o < n; o++) acc[o] += x[o] * w[o];
}

/* acc[c * Og + o] += x[c] * w[c * Og + o]: one input channel per group
 * of Og outputs. */
#define DIRECT_TAP(NAME, T)                                                                       \
  static inline void direct_tap_##NAME(T *acc, const T *xr, const T *wr, int64_t C, int64_t Og) { \
    if (Og == 1) return madd_##NAME(acc, xr, wr, C);                                              \
    for (int64_t c = 0; c < C; c++) axpy_##NAME(acc + c * Og, xr[c], wr + c * Og, Og);            \
  }

/* One output row of a convolution with one input channel and O >= 16
 * outputs (a network's first layer): blocks of 16 outputs accumulate in
 * registers over every tap, in tap order (the same sums as the tap-major
 * loop).  Returns the outputs it wrote (O, or 0 when it does not apply). */
static int64_t direct_blocked_f32(float *acc, const float *xn, const int64_t *pos, const float *wt,
                                  const geom *g) {
  int64_t O = g->O, taps = g->taps;
  if (g->C != 1 || O % 16) return 0;
  for (int64_t o0 = 0; o0 < O; o0 += 16) {
    v4f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;
    for (int64_t t = 0; t < taps; t++) {
      if (pos[t] < 0) continue;
      float x = xn[pos[t]];
      v4f xv = {x, x, x, x};
      const float *w = wt + t * O + o0;
      memcpy(&w0, w, sizeof w0);
      memcpy(&w1, w + 4, sizeof w1);
      memcpy(&w2, w + 8, sizeof w2);
      memcpy(&w3, w + 12, sizeof w3);
      a0 += xv * w0;
      a1 += xv * w1;
      a2 += xv * w2;
      a3 += xv * w3;
    }
    memcpy(acc + o0, &a0, sizeof a0);
    memcpy(acc + o0 + 4, &a1, sizeof a1);
    memcpy(acc + o0 + 8, &a2, sizeof a2);
    memcpy(acc + o0 + 12, &a3, sizeof a3);
  }
  return O;
}
static int64_t direct_blocked_f64(double *acc, const double *xn, const int64_t *pos,
                                  const double *wt, const geom *g) {
  (void)acc, (void)xn, (void)pos, (void)wt, (void)g;
  return 0;
}

#define DIRECT_ROWS(NAME, T)                                                                       \
  DIRECT_TAP(NAME, T)                                                                              \
  static void direct_rows_##NAME(void *ctx, int64_t begin, int64_t end) {                          \
    const direct_job *j = ctx;                                                                     \
    const geom *g = j->g;                                                                          \
    int64_t O = g->O, Og = g->Og, C = g->C, taps = g->taps, stack[TAP_STACK];                      \
    int64_t *pos = tap_buffer(g, stack);                                                           \
    int64_t n = 0, y[NAX] = {0}, last = -1;                                                        \
    if (!pos) return (void)__atomic_store_n(g->fail, 1, __ATOMIC_RELAXED);                         \
    for (int64_t r = begin; r < end; r++) {                                                        \
      coords_at(g, j->r0 + r, &last, &n, y);                                                       \
      tap_sources(g, y, pos);                                                                      \
      T *acc = (T *)j->dst + r * O;                                                                \
      memset(acc, 0, sizeof(T) * (size_t)O);                                                       \
      const T *xn = (const T *)j->x + n * g->in_pos * C;                                           \
      int64_t done = direct_blocked_##NAME(acc, xn, pos, (const T *)j->wt, g);                     \
      for (int64_t t = 0; t < taps && done < O; t++)                                               \
        if (pos[t] >= 0) direct_tap_##NAME(acc, xn + pos[t] * C, (const T *)j->wt + t * O, C, Og); \
    }                                                                                              \
    tap_buffer_free(g, pos);                                                                       \
  }
DIRECT_ROWS(f32, float)
DIRECT_ROWS(f64, double)

static bool use_direct(const geom *g) {
  return g->Cg == 1 && g->ct != CM_COMPLEX64 && !pointwise(g);
}

static int conv_direct(cm_array *out, const geom *g, const char *x, const char *w) {
  bool widen = g->ct != out->dtype;
  int64_t total = g->N * g->out_pos, esz = (int64_t)g->esz;
  char *wt = malloc((size_t)(g->taps * g->O) * g->esz);
  char *obuf = widen ? malloc((size_t)(total * g->O + 1) * g->esz) : NULL;
  if (!wt || (widen && !obuf)) {
    free(wt);
    free(obuf);
    return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  }
  for (int64_t o = 0; o < g->O; o++) /* (O, taps) -> [tap][O] */
    for (int64_t t = 0; t < g->taps; t++)
      memcpy(wt + (t * g->O + o) * esz, w + (o * g->taps + t) * esz, g->esz);
  direct_job j = {g, x, wt, widen ? obuf : cm_data(out), 0};
  int64_t grain = cm_grain(g->taps * g->O);
  cm_parallel_for(total, grain, g->ct == CM_FLOAT32 ? direct_rows_f32 : direct_rows_f64, &j);
  if (widen) cm_cpu_convert(cm_data(out), out->dtype, obuf, g->ct, total * g->O);
  free(wt);
  free(obuf);
  return 0;
}

/* The weight gradient with one input channel per group (depthwise):
 * dW[o][t] = sum over output rows r of cot[r][o] * x[src_t(r)][o / Og],
 * the forward's direct loop with the cotangent row in the weight's place.
 * Rows are cut into blocks whose count depends only on the row count, each
 * block sums into its own [tap][O] partial, and the partials are added in
 * block order: the result does not depend on the thread count. */
typedef struct dgrad_job {
  const geom *g;
  const char *x, *ct;
  char *part; /* nblocks x taps x O, compute type */
  int64_t block, total;
} dgrad_job;

#define DIRECT_GRAD(NAME, T)                                                               \
  static void direct_grad_##NAME(void *ctx, int64_t b0, int64_t b1) {                      \
    const dgrad_job *j = ctx;                                                              \
    const geom *g = j->g;                                                                  \
    int64_t O = g->O, C = g->C, taps = g->taps, stack[TAP_STACK];                          \
    int64_t *pos = tap_buffer(g, stack);                                                   \
    int64_t n = 0, y[NAX] = {0}, last = -1;                                                \
    if (!pos) return (void)__atomic_store_n(g->fail, 1, __ATOMIC_RELAXED);                 \
    for (int64_t b = b0; b < b1; b++) {                                                    \
      T *acc = (T *)j->part + b * taps * O;                                                \
      memset(acc, 0, sizeof(T) * (size_t)(taps * O));                                      \
      int64_t r1 = (b + 1) * j->block < j->total ? (b + 1) * j->block : j->total;          \
      for (int64_t r = b * j->block; r < r1; r++) {                                        \
        coords_at(g, r, &last, &n, y);                                                     \
        tap_sources(g, y, pos);                                                            \
        const T *xn = (const T *)j->x + n * g->in_pos * C, *cr = (const T *)j->ct + r * O; \
        for (int64_t t = 0; t < taps; t++)                                                 \
          if (pos[t] >= 0) direct_tap_##NAME(acc + t * O, xn + pos[t] * C, cr, C, g->Og);  \
      }                                                                                    \
    }                                                                                      \
    tap_buffer_free(g, pos);                                                               \
  }                                                                                        \
  static void direct_grad_sum_##NAME(const geom *g, const T *part, int64_t nb, T *dw) {    \
    int64_t O = g->O, taps = g->taps;                                                      \
    for (int64_t o = 0; o < O; o++)                                                        \
      for (int64_t t = 0; t < taps; t++) {                                                 \
        T s = 0;                                                                           \
        for (int64_t b = 0; b < nb; b++) s += part[(b * taps + t) * O + o];                \
        dw[o * taps + t] = s;                                                              \
      }                                                                                    \
  }
DIRECT_GRAD(f32, float)
DIRECT_GRAD(f64, double)

static int conv_direct_weight_grad(cm_array *out, const geom *g, const char *x, const char *ct) {
  int64_t total = g->N * g->out_pos, wsize = g->O * g->taps;
  /* blocks of at least 256 rows, at most 4096 of them */
  int64_t block = total / 4096 + 1 > 256 ? total / 4096 + 1 : 256;
  int64_t nb = (total + block - 1) / block;
  bool widen = g->ct != out->dtype;
  char *part = malloc((size_t)(nb * wsize + (widen ? wsize : 0) + 1) * g->esz);
  if (!part) return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  dgrad_job j = {g, x, ct, part, block, total};
  bool f32 = g->ct == CM_FLOAT32;
  cm_parallel_for(nb, cm_grain(block * g->taps * g->O), f32 ? direct_grad_f32 : direct_grad_f64,
                  &j);
  char *dw = widen ? part + nb * wsize * (int64_t)g->esz : cm_data(out);
  if (f32) direct_grad_sum_f32(g, (const float *)part, nb, (float *)dw);
  else direct_grad_sum_f64(g, (const double *)part, nb, (double *)dw);
  if (widen) cm_cpu_convert(cm_data(out), out->dtype, dw, g->ct, wsize);
  free(part);
  return 0;
}

/* The convolution as conv_nhwc.c's direct kernel sees it, when it is one:
 * one group, float32, at most two spatial axes, no input dilation and not
 * pointwise (a single GEMM then). */
static bool nhwc_desc(const geom *g, cm_conv_nhwc *d) {
  if (g->G != 1 || g->ct != CM_FLOAT32 || pointwise(g)) return false;
  if (g->S[0] != 1 || g->K[0] != 1 || g->Y[0] != 1 || g->lo[0] != 0) return false;
  if (g->idil[1] != 1 || g->idil[2] != 1) return false;
  *d = (cm_conv_nhwc){.N = g->N,
                      .H = g->S[1],
                      .W = g->S[2],
                      .C = g->C,
                      .O = g->O,
                      .KH = g->K[1],
                      .KW = g->K[2],
                      .OH = g->Y[1],
                      .OW = g->Y[2],
                      .sh = g->stride[1],
                      .sw = g->stride[2],
                      .dh = g->kdil[1],
                      .dw = g->kdil[2],
                      .ph = g->lo[1],
                      .pw = g->lo[2],
                      .flip = g->flip};
  return cm_cpu_conv_nhwc_supported(d);
}

/* The forward (b the weight) or the weight gradient (b the cotangent). */
static int conv_nhwc(cm_array *out, const geom *g, const cm_conv_nhwc *d, const char *x,
                     const char *b, bool wgrad) {
  bool widen = g->ct != out->dtype;
  int64_t total = out->size;
  float *y = widen ? malloc(sizeof(float) * (size_t)total) : cm_data(out);
  if (!y) return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  const float *xf = (const float *)x, *bf = (const float *)b;
  int rc = wgrad ? cm_cpu_conv_nhwc_wgrad_f32(d, xf, bf, y) : cm_cpu_conv_nhwc_f32(d, xf, bf, y);
  if (widen) {
    if (!rc) cm_cpu_convert(cm_data(out), out->dtype, y, g->ct, total);
    free(y);
  }
  return rc;
}

static int conv_forward(cm_array *out, const geom *g, const char *x, const char *w) {
  if (use_direct(g)) return conv_direct(out, g, x, w);
  cm_conv_nhwc d;
  if (nhwc_desc(g, &d)) return conv_nhwc(out, g, &d, x, w, false);
  bool scatter = use_scatter(g), widen = g->ct != out->dtype;
  int64_t scratch_elems, block = block_rows(g, scatter, widen, &scratch_elems);
  char *scratch = malloc((size_t)(scratch_elems + (widen ? block * g->O : 0) + 1) * g->esz);
  void *wt = scratch && scatter ? weight_by_tap(g, w) : NULL;
  if (!scratch || (scatter && !wt)) {
    free(scratch);
    return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  }
  char *obuf = widen ? scratch + scratch_elems * (int64_t)g->esz : NULL;
  int64_t total = g->N * g->out_pos;
  for (int64_t r0 = 0; r0 < total; r0 += block) {
    int64_t r1 = r0 + block < total ? r0 + block : total, ld;
    char *dst = widen ? obuf : (char *)cm_data(out) + r0 * g->O * (int64_t)g->esz;
    if (scatter) {
      scatter_block(g, x, wt, r0, r1, dst, scratch);
    } else {
      const char *A = patches(g, x, r0, r1, scratch, &ld);
      gemm_groups(g, A, ld, w, r1 - r0, dst);
    }
    if (widen)
      cm_cpu_convert((char *)cm_data(out) + r0 * g->O * (int64_t)cm_dtype_size(out->dtype),
                     out->dtype, obuf, g->ct, (r1 - r0) * g->O);
  }
  free(wt);
  free(scratch);
  return 0;
}

/* The weight gradient: dW_g (Og x taps*Cg) = sum over output rows of
 * cotan_g^T @ patches_g, the forward's patch matrix, block by block. */
static int conv_weight_grad(cm_array *out, const geom *g, const char *x, const char *ct) {
  if (use_direct(g)) return conv_direct_weight_grad(out, g, x, ct);
  cm_conv_nhwc d;
  if (nhwc_desc(g, &d) && cm_cpu_conv_nhwc_wgrad_wins(&d))
    return conv_nhwc(out, g, &d, x, ct, true);
  bool widen = g->ct != out->dtype;
  int64_t scratch_elems, block = block_rows(g, false, false, &scratch_elems);
  int64_t kc = g->taps * g->Cg, wsize = g->O * kc;
  char *scratch = malloc((size_t)(scratch_elems + (widen ? wsize : 0) + 1) * g->esz);
  if (!scratch) return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  char *dw = widen ? scratch + scratch_elems * (int64_t)g->esz : cm_data(out);
  int64_t total = g->N * g->out_pos, esz = (int64_t)g->esz;
  for (int64_t r0 = 0; r0 < total; r0 += block) {
    int64_t r1 = r0 + block < total ? r0 + block : total, ld;
    const char *A = patches(g, x, r0, r1, scratch, &ld);
    for (int64_t grp = 0; grp < g->G; grp++)
      gemm(g->ct, CblasTrans, CblasNoTrans, g->Og, kc, r1 - r0,
           ct + (r0 * g->O + grp * g->Og) * esz, g->O, A + grp * kc * esz, ld,
           dw + grp * g->Og * kc * esz, kc, r0 > 0);
  }
  if (total == 0) memset(dw, 0, (size_t)(wsize * esz));
  if (widen) cm_cpu_convert(cm_data(out), out->dtype, dw, g->ct, wsize);
  free(scratch);
  return 0;
}

/* A block and operands the kernel can run (the op builds nothing else; a
 * loaded graph might). */
static bool consistent(const cm_array *out, cm_array *const *in, int nin, const cm_conv_params *p) {
  int d = p->ndim;
  if (nin != 2 || in[0]->ndim != d + 2 || in[1]->ndim != d + 2 || out->ndim != d + 2) return false;
  if (p->groups < 1 || (p->kind != CM_CONV_FORWARD && p->kind != CM_CONV_WEIGHT_GRAD)) return false;
  for (int i = 0; i < d; i++)
    if (p->ax[i].stride < 1 || p->ax[i].kdil < 1 || p->ax[i].idil < 1) return false;
  const cm_array *x = in[0];
  const cm_array *w = p->kind == CM_CONV_FORWARD ? in[1] : out;
  const cm_array *y = p->kind == CM_CONV_FORWARD ? out : in[1];
  int64_t C = x->shape[d + 1], O = w->shape[0];
  if (C % p->groups || O % p->groups || w->shape[d + 1] != C / p->groups) return false;
  if (y->shape[0] != x->shape[0] || y->shape[d + 1] != O) return false;
  for (int i = 0; i < d; i++)
    if (y->shape[i + 1] != cm_conv_out_len(x->shape[i + 1], w->shape[i + 1], &p->ax[i]))
      return false;
  return true;
}

int cm_cpu_conv(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_conv_params *cp = cm_conv_params_of(out);
  bool wgrad = cp->kind == CM_CONV_WEIGHT_GRAD;
  if (!consistent(out, in, nin, cp))
    return cm_error(CM_ERR_VALUE, "[conv] Inconsistent convolution parameters.");
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  geom g;
  int fail = 0;
  /* forward: in = (x, w), out (N, Y..., O); weight gradient: in = (x,
   * cotan), out (O, K..., Cg) */
  if (wgrad) geom_init(&g, cp, in[0], out, in[1], in[1]->shape[in[1]->ndim - 1], out->dtype);
  else geom_init(&g, cp, in[0], in[1], out, in[1]->shape[0], out->dtype);
  if (g.taps * g.Cg == 0 || (wgrad && g.N * g.out_pos == 0)) { /* an empty sum */
    memset(cm_data(out), 0, cm_nbytes(out));
    return 0;
  }
  if (!blas_fits(&g)) return cm_error(CM_ERR_VALUE, "[conv] Convolution too large for BLAS.");
  g.fail = &fail;
  void *own_x, *own_b;
  const char *x = compute_view(in[0], g.ct, &own_x), *b = compute_view(in[1], g.ct, &own_b);
  int rc = !x || !b ? cm_error(CM_ERR_MEMORY, "[conv] Out of memory.")
           : wgrad  ? conv_weight_grad(out, &g, x, b)
                    : conv_forward(out, &g, x, b);
  if (!rc && __atomic_load_n(&fail, __ATOMIC_RELAXED))
    rc = cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  free(own_x);
  free(own_b);
  return rc;
}
