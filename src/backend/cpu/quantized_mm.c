/* QuantizedMatmul and GatherQMM on the CPU: x @ W^T (transpose) or x @ W
 * with W packed (primitives/quantized.h), read in place.
 *
 * Each product is one or more jobs (x matrix, W matrix, output matrix);
 * consecutive jobs on the same W whose x matrices follow each other (a
 * 2-D w, sorted gather indices) are merged into one taller job.  A job
 * with few rows of x (M <= QMV_ROWS) decodes each group of W once and
 * uses it for every row: over W's rows (transpose) or its column groups
 * (otherwise), spread on the pool, with AVX2+FMA loops when the CPU has
 * them (quantized_rows.c; x @ W^T with affine 2, 4 or 8 bits: the
 * AVX-512/AVX2 loops of quantized_qmv.c).  Taller jobs dequantize W a tile of rows at a
 * time (up to 4 MiB of float32, never the whole matrix), on the
 * pool, and multiply each tile with sgemm. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/quantized_amx.h"
#include "backend/cpu/quantized_mm.h"
#include "backend/cpu/cpu_features.h"
#include "core/threadpool.h"

#define TILE_ELEMS (1 << 20) /* floats per dequantized tile */

/* One operand seen as a batch of matrices with unit column stride. */
typedef struct qarr {
  const char *base;
  size_t isz;
  cm_dtype dtype; /* of the elements at base */
  int nb;
  const int32_t *bshape;
  const int64_t *bstride; /* elements */
  int64_t rs;             /* row stride, elements */
  int64_t nmat;
  void *owned;
  int64_t dense_st[CM_MAX_DIMS];
} qarr;

/* a as q: in place when its dtype is t and its rows are unit-stride;
 * else a dense copy in t. */
static int qarr_init(qarr *q, const cm_array *a, cm_dtype t) {
  int nd = a->ndim;
  memset(q, 0, sizeof *q);
  q->isz = cm_dtype_size(t);
  q->dtype = t;
  q->nb = nd - 2;
  q->bshape = a->shape;
  q->nmat = 1;
  for (int i = 0; i < nd - 2; i++) q->nmat *= a->shape[i];
  bool unit = a->shape[nd - 1] <= 1 || a->strides[nd - 1] == 1;
  if (a->dtype == t && unit) {
    q->base = cm_data(a);
    q->bstride = a->strides;
    q->rs = a->strides[nd - 2];
    return 0;
  }
  bool owned;
  q->base = cm_q_dense(a, t, &owned);
  if (!q->base) return -1;
  q->owned = owned ? (void *)q->base : NULL;
  int64_t acc = 1;
  for (int i = nd - 1; i >= 0; i--) q->dense_st[i] = acc, acc *= a->shape[i];
  q->bstride = q->dense_st;
  q->rs = a->shape[nd - 1];
  return 0;
}

static const char *qarr_mat(const qarr *q, int64_t j) {
  int64_t off = 0;
  for (int i = q->nb - 1; i >= 0; i--) {
    off += (j % q->bshape[i]) * q->bstride[i];
    j /= q->bshape[i];
  }
  return q->base + off * (int64_t)q->isz;
}

/* One matrix of W with its scales and biases. */
static void qmm_mat(const qmm_ctx *c, int64_t wj, cm_qmat *m) {
  const qarr *w = c->w, *s = c->s;
  m->w = (const uint8_t *)qarr_mat(w, wj);
  m->w_rs = w->rs * 4;
  m->s = qarr_mat(s, wj);
  m->s_rs = s->rs;
  m->b = c->b ? qarr_mat(c->b, wj) : NULL;
  m->b_rs = c->b ? c->b->rs : 0;
  m->sbt = s->dtype;
}

/* ---- small M: decode once, use for every row ---- */

typedef struct qmv_job {
  const qmm_ctx *c;
  cm_qmat m;
  const float *x, *xsum;
  float *out;
  int64_t M;
} qmv_job;

static void qmv_range(void *ctx, int64_t begin, int64_t end) {
  const qmv_job *j = ctx;
  cm_q_qmv_rows(j->c, &j->m, j->x, j->xsum, j->M, begin, end, j->out);
}

static void qvm_range(void *ctx, int64_t begin, int64_t end) {
  const qmv_job *j = ctx;
  cm_q_qvm_groups(j->c, &j->m, j->x, j->M, begin, end, j->out);
}

void cm_q_group_sums(const float *x, int64_t rows, int64_t K, int gs, float *xsum) {
  int64_t G = K / gs;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t g = 0; g < G; g++) {
      const float *xg = x + r * K + g * gs;
      float a[4] = {0, 0, 0, 0};
      int k = 0;
      for (; k + 4 <= gs; k += 4)
        for (int t = 0; t < 4; t++) a[t] += xg[k + t];
      for (; k < gs; k++) a[0] += xg[k];
      xsum[r * G + g] = (a[0] + a[1]) + (a[2] + a[3]);
    }
}

static int small_job(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, float *out) {
  qmv_job j = {.c = c, .m = *m, .x = x, .out = out, .M = M};
  int64_t K = c->K, N = c->N;
  if (c->transpose) {
    int64_t G = K / c->gs;
    float *xsum = NULL;
    if (c->mode == CM_QMODE_AFFINE) {
      xsum = malloc(sizeof(float) * (size_t)(M * G > 0 ? M * G : 1));
      if (!xsum) return cm_error(CM_ERR_MEMORY, "[quantized_matmul] Out of memory.");
      cm_q_group_sums(x, M, K, c->gs, xsum);
    }
    j.xsum = xsum;
    int rc = cm_q_qmv_fast(c, m, x, xsum, M, out);
    if (!rc) cm_parallel_for(N, cm_grain(2 * K * M) + 1, qmv_range, &j);
    free(xsum);
    return rc < 0 ? -1 : 0;
  } else {
    cm_parallel_for(N / c->gs, cm_grain(2 * c->gs * K * M) + 1, qvm_range, &j);
  }
  return 0;
}

/* ---- tall jobs: dequantized tiles and sgemm ---- */

typedef struct tile_job {
  const qmm_ctx *c;
  cm_qmat m;
  int64_t r0, cols;
  float *tile;
} tile_job;

static void tile_rows(void *ctx, int64_t begin, int64_t end) {
  const tile_job *j = ctx;
  for (int64_t r = begin; r < end; r++)
    cm_q_dequant_row(j->c, &j->m, j->r0 + r, j->tile + r * j->cols);
}

static int tall_job(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, float *out) {
  int64_t K = c->K, N = c->N;
  int64_t rows = c->transpose ? N : K, cols = c->transpose ? K : N;
  int64_t tr = TILE_ELEMS / (cols > 0 ? cols : 1);
  tr = tr < 16 ? 16 : tr;
  tr = tr > rows ? rows : tr;
  float *tile = malloc(sizeof(float) * (size_t)(tr * cols > 0 ? tr * cols : 1));
  if (!tile) return cm_error(CM_ERR_MEMORY, "[quantized_matmul] Out of memory.");
  tile_job j = {.c = c, .m = *m, .cols = cols, .tile = tile};
  for (int64_t r0 = 0; r0 < rows; r0 += tr) {
    int64_t n = rows - r0 < tr ? rows - r0 : tr;
    j.r0 = r0;
    cm_parallel_for(n, cm_grain(4 * cols) + 1, tile_rows, &j);
    if (c->transpose) /* out[:, r0:r0+n] = x @ tile^T */
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)n, (int)K, 1.0f, x, (int)K,
                  tile, (int)K, 0.0f, out + r0, (int)N);
    else /* out += x[:, r0:r0+n] @ tile */
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)n, 1.0f, x + r0,
                  (int)K, tile, (int)N, r0 ? 1.0f : 0.0f, out, (int)N);
  }
  free(tile);
  return 0;
}

static int run_job(const qmm_ctx *c, int64_t wj, const float *x, int64_t M, float *out) {
  if (M == 0) return 0;
  cm_qmat m;
  qmm_mat(c, wj, &m);
  if (c->K == 0) {
    memset(out, 0, sizeof(float) * (size_t)(M * c->N));
    return 0;
  }
  if (M <= QMV_ROWS) return small_job(c, &m, x, M, out);
  int rc = cm_q_qmm_amx(c, &m, x, M, out); /* 4-bit on AMX tiles (quantized_amx.c) */
  if (rc) return rc < 0 ? -1 : 0;
  return tall_job(c, &m, x, M, out);
}

/* ---- the two primitives ---- */

typedef struct qmm_io {
  qarr w, s, b;
  float *x, *out;
  bool own_x, own_out;
} qmm_io;

static void io_free(qmm_io *io) {
  free(io->w.owned);
  free(io->s.owned);
  free(io->b.owned);
  if (io->own_x) free(io->x);
  if (io->own_out) free(io->out);
}

/* Gets the operands ready: x as dense float32, the output as float32 (a
 * scratch when out is a half type), W and its scales/biases in place. */
static int io_init(qmm_io *io, qmm_ctx *c, cm_array *out, cm_array *const *in,
                   const cm_quant_params *qp) {
  memset(io, 0, sizeof *io);
  memset(c, 0, sizeof *c);
  bool affine = qp->mode == CM_QMODE_AFFINE;
  cm_array *x = in[0], *w = in[1];
  c->mode = qp->mode;
  c->gs = qp->group_size;
  c->bits = qp->bits;
  c->transpose = qp->transpose != 0;
  c->K = x->shape[x->ndim - 1];
  c->N = out->shape[out->ndim - 1];
  c->lut = affine ? NULL : qp->bits == 8 ? cm_fp8_table() : cm_fp4_values;
  c->simd = cm_cpu_simd_enabled(CM_SIMD_UNARY);
  c->xdt = x->dtype;
  io->x = cm_q_dense(x, CM_FLOAT32, &io->own_x);
  /* affine scales and biases of one half dtype are read as they are */
  cm_dtype sbt = CM_FLOAT32;
  if (affine && in[2]->dtype == in[3]->dtype &&
      (in[2]->dtype == CM_FLOAT16 || in[2]->dtype == CM_BFLOAT16))
    sbt = in[2]->dtype;
  if (!io->x || qarr_init(&io->w, w, CM_UINT32) ||
      qarr_init(&io->s, in[2], affine ? sbt : CM_UINT8) ||
      (affine && qarr_init(&io->b, in[3], sbt)))
    return io_free(io), -1;
  c->w = &io->w;
  c->s = &io->s;
  c->b = affine ? &io->b : NULL;
  if (cm_alloc_output(out)) return io_free(io), -1;
  if (out->dtype == CM_FLOAT32) {
    io->out = cm_data(out);
  } else {
    io->out = malloc(sizeof(float) * (size_t)(out->size > 0 ? out->size : 1));
    if (!io->out) return io_free(io), cm_error(CM_ERR_MEMORY, "[quantized_matmul] Out of memory.");
    io->own_out = true;
  }
  return 0;
}

static void io_finish(qmm_io *io, cm_array *out) {
  if (io->own_out && out->size > 0)
    cm_cpu_convert(cm_data(out), out->dtype, io->out, CM_FLOAT32, out->size);
}

int cm_cpu_quantized_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  qmm_io io;
  qmm_ctx c;
  if (io_init(&io, &c, out, in, qp)) return -1;
  cm_array *x = in[0], *w = in[1];
  int64_t M = x->shape[x->ndim - 2 >= 0 ? x->ndim - 2 : 0];
  if (x->ndim == 1) M = 1;
  int64_t batches = c.K * M > 0 ? x->size / (c.K * M) : out->size / (c.N * M > 0 ? c.N * M : 1);
  int rc = 0;
  if (w->ndim == 2) { /* one W for every row of x */
    rc = run_job(&c, 0, io.x, M * batches, io.out);
  } else {
    for (int64_t b = 0; b < batches && !rc; b++)
      rc = run_job(&c, b, io.x + b * M * c.K, M, io.out + b * M * c.N);
  }
  if (!rc) io_finish(&io, out);
  io_free(&io);
  return rc;
}

int cm_cpu_gather_qmm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  qmm_io io;
  qmm_ctx c;
  if (io_init(&io, &c, out, in, qp)) return -1;
  cm_array *x = in[0], *lhs = in[nin - 2], *rhs = in[nin - 1];
  int64_t M = x->shape[x->ndim - 2], xmats = c.K * M > 0 ? x->size / (c.K * M) : 0;
  bool ol, orr;
  const uint32_t *li = cm_q_dense(lhs, CM_UINT32, &ol);
  const uint32_t *ri = li ? cm_q_dense(rhs, CM_UINT32, &orr) : NULL;
  int rc = ri ? 0 : -1;
  int64_t n = lhs->size;
  for (int64_t i = 0; i < n && !rc; i++)
    if (li[i] >= (uint64_t)(xmats > 0 ? xmats : 1) || ri[i] >= (uint64_t)io.w.nmat)
      rc = cm_error(CM_ERR_INDEX, "[gather_qmm] Index out of range.");
  for (int64_t i = 0; i < n && !rc;) {
    int64_t e = i + 1; /* merge runs on one W over consecutive x matrices */
    while (e < n && ri[e] == ri[i] && li[e] == li[e - 1] + 1) e++;
    rc = run_job(&c, ri[i], io.x + (int64_t)li[i] * M * c.K, M * (e - i), io.out + i * M * c.N);
    i = e;
  }
  if (ol) free((void *)li);
  if (ri && orr) free((void *)ri);
  if (!rc) io_finish(&io, out);
  io_free(&io);
  return rc;
}
