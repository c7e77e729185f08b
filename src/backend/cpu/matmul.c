/* Matmul / AddMM on the CPU through CBLAS (OpenBLAS).
 *
 * Each matrix of the batch is handed to BLAS where it lies: a row-major
 * operand goes as NoTrans with its row stride as leading dimension, a
 * column-major one (a transposed view) as Trans with its column stride, so
 * transposes are never copied.  Only operands BLAS cannot describe (gaps
 * in both directions, zero strides from broadcasting inside a matrix) are
 * packed into a row-major scratch first.  float16/bfloat16 are widened to
 * float32 scratch, multiplied by sgemm and rounded once on the way out.
 *
 * Batch axes are folded into the rows of one tall product where the
 * strides allow (fold_batch); the rest is a plain loop of BLAS calls on
 * the calling thread: OpenBLAS threads each call itself, and calling it
 * from inside our pool would oversubscribe the cores (DESIGN.md).  Small
 * float32 products never reach BLAS, so a batch of them runs on the
 * pool. */
#include "backend/cpu/matmul.h"

#include "core/allocator.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/gemm_amx.h"
#include "backend/cpu/gemv.h"
#include "backend/cpu/matmul_small.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/matmul.h"

/* One operand matrix as BLAS sees it. */
typedef struct operand {
  const void *ptr;
  CBLAS_TRANSPOSE trans;
  int ld;
} operand;

/* Can BLAS read a rows x cols matrix with element strides (rs, cs) in
 * place?  Sets trans and ld if so. */
static bool blas_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs, operand *op) {
  /* row-major: unit column stride, rows at least cols apart */
  if ((cols == 1 || cs == 1) && (rows == 1 || (rs >= cols && rs > 0))) {
    int64_t ld = rows == 1 ? cols : rs;
    if (ld < 1) ld = 1;
    if (ld > INT_MAX) return false;
    op->trans = CblasNoTrans;
    op->ld = (int)ld;
    return true;
  }
  /* column-major (a transposed view): unit row stride */
  if ((rows == 1 || rs == 1) && (cols == 1 || (cs >= rows && cs > 0))) {
    int64_t ld = cols == 1 ? rows : cs;
    if (ld < 1) ld = 1;
    if (ld > INT_MAX) return false;
    op->trans = CblasTrans;
    op->ld = (int)ld;
    return true;
  }
  return false;
}

/* Place one operand: in place when possible, else packed into scratch
 * (row-major, compute type). */
static void place(const cm_gemm *j, const char *base, cm_dtype t, int64_t rows, int64_t cols,
                  int64_t rs, int64_t cs, void *scratch, operand *op) {
  if (blas_view(rows, cols, rs, cs, op)) {
    if (t == j->ct) {
      op->ptr = base;
      return;
    }
    /* a dense operand of another type (a half weight, often a transposed
     * view) is widened as it lies, in one flat pass on the pool, and BLAS
     * reads it with the same orientation: widening it into row-major order
     * read the source with a stride of K, one element at a time, and took
     * as long as the sgemm of a 512-token prefill */
    int64_t inner = op->trans == CblasNoTrans ? cols : rows;
    int64_t outer = op->trans == CblasNoTrans ? rows : cols;
    if (op->ld == inner || outer == 1) {
      cm_cpu_convert(scratch, j->ct, base, t, rows * cols);
      op->ptr = scratch;
      op->ld = inner > 1 ? (int)inner : 1;
      return;
    }
  }
  int64_t dst_st[2] = {cols, 1}, src_st[2] = {rs, cs};
  int32_t shape[2] = {(int32_t)rows, (int32_t)cols};
  cm_cpu_copy_strided(scratch, j->ct, dst_st, base, t, src_st, 2, shape);
  op->ptr = scratch;
  op->trans = CblasNoTrans;
  op->ld = cols > 1 ? (int)cols : 1;
}

static void small_sgemm(const cm_gemm *j, const operand *a, const operand *b, float *c, int ldc,
                        float beta) {
  bool at = a->trans != CblasNoTrans, bt = b->trans != CblasNoTrans;
  cm_cpu_small_sgemm(j->M, j->N, j->K, j->alpha, a->ptr, at ? 1 : a->ld, at ? a->ld : 1, b->ptr,
                     bt ? 1 : b->ld, bt ? b->ld : 1, c, ldc, beta);
}

static void gemm(const cm_gemm *j, const operand *a, const operand *b, void *c, float beta) {
  int M = (int)j->M, N = (int)j->N, K = (int)j->K, ldc = N > 1 ? N : 1;
  switch (j->ct) {
  case CM_FLOAT32:
    if (j->M * j->N * j->K <= CM_SMALL_SGEMM_WORK) {
      small_sgemm(j, a, b, c, ldc, beta);
      break;
    }
    cblas_sgemm(CblasRowMajor, a->trans, b->trans, M, N, K, j->alpha, a->ptr, a->ld, b->ptr, b->ld,
                beta, c, ldc);
    break;
  case CM_FLOAT64:
    cblas_dgemm(CblasRowMajor, a->trans, b->trans, M, N, K, (double)j->alpha, a->ptr, a->ld, b->ptr,
                b->ld, (double)beta, c, ldc);
    break;
  default: {
    cm_c64_t al = j->alpha, be = beta;
    cblas_cgemm(CblasRowMajor, a->trans, b->trans, M, N, K, &al, a->ptr, a->ld, b->ptr, b->ld, &be,
                c, ldc);
    break;
  }
  }
}

/* out *= beta (out already holds c), or out = 0: the K == 0 product. */
static void scale_output(cm_array *out, float beta, bool have_c) {
  int64_t n = out->size;
  if (!have_c || beta == 0.0f) {
    memset(cm_data(out), 0, cm_nbytes(out));
    return;
  }
  if (beta == 1.0f) return;
  /* scale through a compute-type pass: exact for the float types */
  switch (out->dtype) {
  case CM_FLOAT32: {
    float *p = cm_data(out);
    for (int64_t i = 0; i < n; i++) p[i] *= beta;
    break;
  }
  case CM_FLOAT64: {
    double *p = cm_data(out);
    for (int64_t i = 0; i < n; i++) p[i] *= (double)beta;
    break;
  }
  case CM_COMPLEX64: {
    cm_c64_t *p = cm_data(out);
    for (int64_t i = 0; i < n; i++) p[i] *= beta;
    break;
  }
  case CM_FLOAT16: {
    uint16_t *p = cm_data(out);
    for (int64_t i = 0; i < n; i++) p[i] = cm_f32_to_f16(cm_f16_to_f32(p[i]) * beta);
    break;
  }
  default: { /* bfloat16 */
    uint16_t *p = cm_data(out);
    for (int64_t i = 0; i < n; i++) p[i] = cm_f32_to_bf16(cm_bf16_to_f32(p[i]) * beta);
    break;
  }
  }
}

int cm_gemm_init(cm_gemm *g, cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha) {
  memset(g, 0, sizeof *g);
  g->dt = dt;
  g->ct = dt == CM_FLOAT16 || dt == CM_BFLOAT16 ? CM_FLOAT32 : dt;
  g->dsz = cm_dtype_size(dt);
  g->csz = cm_dtype_size(g->ct);
  g->M = M, g->N = N, g->K = K, g->alpha = alpha;
  return 0;
}

#define SCRATCH_FROM_CACHE ((size_t)1 << 20)

/* The scratch, allocated on first use (most products need none). */
static int scratch(cm_gemm *g) {
  if (g->scratch) return 0;
  bool widen = g->ct != g->dt;
  int64_t mk = g->M * g->K, kn = g->K * g->N, mn = g->M * g->N;
  size_t bytes = (size_t)(mk + kn + (widen ? mn : 0)) * g->csz;
  /* A large scratch (a widened weight matrix is tens of MB) comes from
   * the buffer cache: the next product of the same shape, the next
   * layer's, reuses it instead of faulting in and zeroing fresh pages
   * (8% of a float16 prefill) */
  if (bytes >= SCRATCH_FROM_CACHE) {
    g->scratch_buf = cm_buffer_alloc(bytes);
    if (!g->scratch_buf) return -1;
    g->scratch = g->scratch_buf->ptr;
  } else {
    g->scratch = malloc(bytes ? bytes : 1);
    if (!g->scratch) return cm_error(CM_ERR_MEMORY, "[matmul] Out of memory.");
  }
  g->sa = g->scratch;
  g->sb = g->scratch + mk * (int64_t)g->csz;
  g->sc = widen ? g->scratch + (mk + kn) * (int64_t)g->csz : NULL;
  return 0;
}

void cm_gemm_free(cm_gemm *g) {
  if (g->scratch_buf) cm_buffer_release(g->scratch_buf);
  else free(g->scratch);
  g->scratch = NULL;
  g->scratch_buf = NULL;
}

/* A float32 vector times a matrix BLAS can read: sgemv, which streams the
 * matrix at memory speed (OpenBLAS's sgemm with one row does not). */
static bool try_sgemv(const cm_gemm *j, const cm_gemm_operand *a, const cm_gemm_operand *b,
                      void *out, float beta) {
  /* out (1 x N) = x @ B: y = B^T x; out (M x 1) = A @ v: y = A v */
  bool row = j->M == 1;
  const cm_gemm_operand *mat = row ? b : a, *vec = row ? a : b;
  int64_t rows = row ? j->K : j->M, cols = row ? j->N : j->K;
  int64_t inc = row ? vec->cs : vec->rs;
  operand op;
  if (inc <= 0 || inc > INT_MAX || !blas_view(rows, cols, mat->rs, mat->cs, &op)) return false;
  /* y = mat^T x (row) or mat x (column); RowMajor with op.trans describing mat */
  bool trans = row ? op.trans == CblasNoTrans : op.trans == CblasTrans;
  int m = (int)(op.trans == CblasNoTrans ? rows : cols),
      n = (int)(op.trans == CblasNoTrans ? cols : rows);
  cblas_sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, j->alpha, mat->ptr, op.ld,
              vec->ptr, (int)inc, beta, out, 1);
  return true;
}

/* Few rows or few columns, large enough for threads to pay: sgemv for a
 * float32 vector, else our own kernel (gemv.c), which streams the large
 * operand once in its own dtype. */
static int try_gemv(const cm_gemm *j, const cm_gemm_operand *a, const cm_gemm_operand *b, void *out,
                    float beta) {
  if (j->ct != CM_FLOAT32 || a->dtype != j->dt || b->dtype != j->dt) return 0;
  if (j->M * j->N * j->K <= CM_SMALL_SGEMM_WORK) return 0;
  if (j->dt == CM_FLOAT32 && (j->M == 1 || j->N == 1) && try_sgemv(j, a, b, out, beta)) return 1;
  cm_gemv_mat ma = {a->ptr, a->rs, a->cs}, mb = {b->ptr, b->rs, b->cs};
  return cm_cpu_gemv(j->dt, j->M, j->N, j->K, j->alpha, ma, mb, out, j->N, 1, beta);
}

int cm_gemm_run(cm_gemm *g, int64_t K, const cm_gemm_operand *a, const cm_gemm_operand *b,
                void *out, float beta) {
  cm_gemm j = *g;
  j.K = K;
  int r = try_gemv(&j, a, b, out, beta);
  if (r) return r < 0 ? -1 : 0;
  /* halves on AMX tiles where the CPU has them (gemm_amx.c) */
  if (j.ct != j.dt && a->dtype == j.dt && b->dtype == j.dt) {
    r = cm_gemm_amx(j.dt, j.M, j.N, K, j.alpha, a->ptr, a->rs, a->cs, b->ptr, b->rs, b->cs, out, beta);
    if (r) return r < 0 ? -1 : 0;
  }
  operand probe;
  bool in_place = a->dtype == j.ct && b->dtype == j.ct && blas_view(j.M, K, a->rs, a->cs, &probe) &&
                  blas_view(K, j.N, b->rs, b->cs, &probe);
  if (!in_place || j.ct != j.dt) {
    if (scratch(g)) return -1;
    j.scratch = g->scratch, j.sa = g->sa, j.sb = g->sb, j.sc = g->sc;
  }
  operand oa, ob;
  place(&j, a->ptr, a->dtype, j.M, K, a->rs, a->cs, j.sa, &oa);
  place(&j, b->ptr, b->dtype, K, j.N, b->rs, b->cs, j.sb, &ob);
  if (j.ct == j.dt) {
    gemm(&j, &oa, &ob, out, beta);
    return 0;
  }
  /* halves: accumulate in float32 scratch, round once */
  int64_t mn = j.M * j.N;
  if (beta != 0.0f) cm_cpu_convert(j.sc, j.ct, out, j.dt, mn);
  gemm(&j, &oa, &ob, j.sc, beta);
  cm_cpu_convert(out, j.dt, j.sc, j.ct, mn);
  return 0;
}


/* A batch of small float32 products (each at most CM_SMALL_SGEMM_WORK), one
 * per task on the thread pool: no BLAS call, so no oversubscription. */
typedef struct small_batch {
  const cm_array *a, *b;
  float *out;
  int nb;
  int64_t M, N, K, a_rs;
  float alpha, beta;
} small_batch;

static void small_batch_range(void *ctx, int64_t begin, int64_t end) {
  const small_batch *j = ctx;
  const cm_array *a = j->a, *b = j->b;
  int nd = a->ndim;
  for (int64_t bi = begin; bi < end; bi++) {
    int64_t oa = j->nb == 1 ? bi * a->strides[0] : cm_batch_offset(bi, j->nb, a->shape, a->strides);
    int64_t ob = j->nb == 1 ? bi * b->strides[0] : cm_batch_offset(bi, j->nb, b->shape, b->strides);
    const float *pa = (const float *)cm_data(a) + oa, *pb = (const float *)cm_data(b) + ob;
    cm_cpu_small_sgemm(j->M, j->N, j->K, j->alpha, pa, j->a_rs, a->strides[nd - 1], pb,
                       b->strides[nd - 2], b->strides[nd - 1], j->out + bi * j->M * j->N, j->N,
                       j->beta);
  }
}

/* Fold the trailing batch axes over which b stays put and a's matrices
 * follow one another row after row into the rows of one tall product:
 * (B, M, K) @ (K, N) is one (B*M, K) @ (K, N) call, (B, H, M, K) @
 * (B, 1, K, N) is B calls of (H*M, K) @ (K, N).  Returns the number of
 * batch axes left to loop over; *rows and *rs are the tall product's row
 * count and row stride. */
static int fold_batch(const cm_array *a, const cm_array *b, int nb, int64_t M, int64_t K,
                      int64_t *rows, int64_t *rs) {
  int nd = a->ndim, f = nb;
  int64_t r = M, stride = a->strides[nd - 2];
  if (a->strides[nd - 1] != 1 && K != 1) return nb;
  for (int i = nb - 1; i >= 0; i--) {
    if (a->shape[i] == 1) { /* nothing to fold, nothing in the way */
      f = i;
      continue;
    }
    if (b->strides[i] != 0) break;
    if (r == 1) stride = a->strides[i]; /* one row so far: any row stride */
    else if (a->strides[i] != r * stride) break;
    if (r * a->shape[i] > INT_MAX) break;
    r *= a->shape[i];
    f = i;
  }
  if (r == M) return nb; /* nothing folded */
  *rows = r, *rs = stride;
  return f;
}

int cm_cpu_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_matmul_params *mp = cm_matmul_params_of(out);
  cm_array *a = in[0], *b = in[1], *c = nin > 2 ? in[2] : NULL;
  float beta = c ? mp->beta : 0.0f;
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim;
  int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
  bool have_c = c && beta != 0.0f;
  if (have_c) /* out = c (broadcast), scaled by BLAS's beta below */
    cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(c), c->dtype, c->strides,
                        c->ndim, c->shape);
  if (K == 0) {
    scale_output(out, beta, have_c);
    return 0;
  }
  int nb = nd - 2;
  int64_t a_rs = a->strides[nd - 2];
  if (nb > 0) nb = fold_batch(a, b, nb, M, K, &M, &a_rs);
  int64_t batches = out->size / (M * N);
  if (batches > 1 && out->dtype == CM_FLOAT32 && M * N * K <= CM_SMALL_SGEMM_WORK) {
    small_batch j = {a, b, cm_data(out), nb, M, N, K, a_rs, mp->alpha, have_c ? beta : 0.0f};
    cm_parallel_for(batches, cm_grain(M * N * K), small_batch_range, &j);
    return 0;
  }
  cm_gemm g;
  cm_gemm_init(&g, out->dtype, M, N, K, mp->alpha);
  const char *pa = cm_data(a), *pb = cm_data(b);
  char *po = cm_data(out);
  int rc = 0;
  for (int64_t bi = 0; bi < batches && !rc; bi++) {
    cm_gemm_operand oa = {pa + cm_batch_offset(bi, nb, a->shape, a->strides) * (int64_t)g.dsz,
                          a->dtype, a_rs, a->strides[nd - 1]};
    cm_gemm_operand ob = {pb + cm_batch_offset(bi, nb, b->shape, b->strides) * (int64_t)g.dsz,
                          b->dtype, b->strides[nd - 2], b->strides[nd - 1]};
    rc = cm_gemm_run(&g, K, &oa, &ob, po + bi * M * N * (int64_t)g.dsz, have_c ? beta : 0.0f);
  }
  cm_gemm_free(&g);
  return rc;
}
