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
 * Batches are a plain loop of BLAS calls on the calling thread: OpenBLAS
 * threads each call itself, and calling it from inside our pool would
 * oversubscribe the cores (DESIGN.md). */
#include "backend/cpu/matmul.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/types.h"
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

typedef struct mm_job {
  cm_dtype dt;  /* storage dtype of everything */
  cm_dtype ct;  /* compute dtype: float32, float64 or complex64 */
  size_t dsz, csz;
  int64_t M, N, K;
  float alpha, beta;
  void *sa, *sb, *sc; /* scratch (compute type), or NULL */
} mm_job;

/* Place one operand: in place when possible, else packed into scratch
 * (row-major, compute type). */
static void place(const mm_job *j, const char *base, cm_dtype t, int64_t rows, int64_t cols,
                  int64_t rs, int64_t cs, void *scratch, operand *op) {
  if (t == j->ct && blas_view(rows, cols, rs, cs, op)) {
    op->ptr = base;
    return;
  }
  int64_t dst_st[2] = {cols, 1}, src_st[2] = {rs, cs};
  int32_t shape[2] = {(int32_t)rows, (int32_t)cols};
  cm_cpu_copy_strided(scratch, j->ct, dst_st, base, t, src_st, 2, shape);
  op->ptr = scratch;
  op->trans = CblasNoTrans;
  op->ld = cols > 1 ? (int)cols : 1;
}

/* Small float32 products are accumulated in double and rounded once:
 * each element is then the float32 nearest the exact product (sgemm's
 * float32 sums can miss it by many ulps where terms cancel, which MLX's
 * own float32-vs-float64 test notices), and for matrices this small the
 * loop is no slower than a BLAS call. */
#define SMALL_GEMM_WORK 16384 /* M * N * K */

static float element(const operand *op, int64_t r, int64_t col) {
  const float *p = op->ptr;
  return op->trans == CblasNoTrans ? p[r * op->ld + col] : p[col * op->ld + r];
}

static void small_sgemm(const mm_job *j, const operand *a, const operand *b, float *c, int ldc,
                        float beta) {
  for (int64_t r = 0; r < j->M; r++)
    for (int64_t col = 0; col < j->N; col++) {
      double acc = 0;
      for (int64_t k = 0; k < j->K; k++) acc += (double)element(a, r, k) * element(b, k, col);
      double v = (double)j->alpha * acc;
      if (beta != 0) v += (double)beta * c[r * ldc + col];
      c[r * ldc + col] = (float)v;
    }
}

static void gemm(const mm_job *j, const operand *a, const operand *b, void *c, float beta) {
  int M = (int)j->M, N = (int)j->N, K = (int)j->K, ldc = N > 1 ? N : 1;
  switch (j->ct) {
  case CM_FLOAT32:
    if (j->M * j->N * j->K <= SMALL_GEMM_WORK) {
      small_sgemm(j, a, b, c, ldc, beta);
      break;
    }
    cblas_sgemm(CblasRowMajor, a->trans, b->trans, M, N, K, j->alpha, a->ptr, a->ld, b->ptr,
                b->ld, beta, c, ldc);
    break;
  case CM_FLOAT64:
    cblas_dgemm(CblasRowMajor, a->trans, b->trans, M, N, K, (double)j->alpha, a->ptr, a->ld,
                b->ptr, b->ld, (double)beta, c, ldc);
    break;
  default: {
    cm_c64_t al = j->alpha, be = beta;
    cblas_cgemm(CblasRowMajor, a->trans, b->trans, M, N, K, &al, a->ptr, a->ld, b->ptr, b->ld,
                &be, c, ldc);
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

/* Offsets (elements) of batch element bi in an operand with the given
 * batch strides, walking the batch shape in row-major order. */
static int64_t batch_offset(int64_t bi, int nb, const int32_t *bshape, const int64_t *bstrides) {
  int64_t off = 0;
  for (int i = nb - 1; i >= 0; i--) {
    int64_t idx = bi % bshape[i];
    bi /= bshape[i];
    off += idx * bstrides[i];
  }
  return off;
}

int cm_cpu_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  const cm_matmul_params *mp = (const cm_matmul_params *)p;
  cm_array *a = in[0], *b = in[1], *c = nin > 2 ? in[2] : NULL;
  float beta = c ? mp->beta : 0.0f;
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim;
  mm_job j = {.dt = out->dtype, .M = out->shape[nd - 2], .N = out->shape[nd - 1],
              .K = a->shape[nd - 1], .alpha = mp->alpha, .beta = beta};
  j.ct = out->dtype == CM_FLOAT16 || out->dtype == CM_BFLOAT16 ? CM_FLOAT32 : out->dtype;
  j.dsz = cm_dtype_size(j.dt);
  j.csz = cm_dtype_size(j.ct);
  bool have_c = c && beta != 0.0f;
  if (have_c) /* out = c (broadcast), scaled by BLAS's beta below */
    cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(c), c->dtype, c->strides,
                        c->ndim, c->shape);
  if (j.K == 0) {
    scale_output(out, beta, have_c);
    return 0;
  }
  int nb = nd - 2;
  int64_t batches = out->size / (j.M * j.N);
  /* A row-contiguous batch of a against one shared b (batch strides all
   * zero, as broadcasting a 2-D b gives) is one tall product: a single
   * BLAS call instead of one per matrix. */
  bool shared_b = true;
  for (int i = 0; i < nb; i++) shared_b &= b->strides[i] == 0 || b->shape[i] == 1;
  int64_t a_rs = a->strides[nd - 2];
  if (batches > 1 && shared_b && cm_row_contiguous(a) && batches * j.M <= INT_MAX) {
    j.M *= batches;
    batches = 1;
    a_rs = j.K; /* the rows of all the matrices, back to back */
  }
  bool widen = j.ct != j.dt;
  int64_t mk = j.M * j.K, kn = j.K * j.N, mn = j.M * j.N;
  char *scratch = malloc((size_t)(mk + kn + (widen ? mn : 0)) * j.csz);
  if (!scratch) return cm_error(CM_ERR_MEMORY, "[matmul] Out of memory.");
  j.sa = scratch;
  j.sb = scratch + mk * (int64_t)j.csz;
  j.sc = widen ? scratch + (mk + kn) * (int64_t)j.csz : NULL;

  const char *pa = cm_data(a), *pb = cm_data(b);
  char *po = cm_data(out);
  for (int64_t bi = 0; bi < batches; bi++) {
    operand oa, ob;
    const char *ba = pa + batch_offset(bi, nb, a->shape, a->strides) * (int64_t)j.dsz;
    const char *bb = pb + batch_offset(bi, nb, b->shape, b->strides) * (int64_t)j.dsz;
    place(&j, ba, a->dtype, j.M, j.K, a_rs, a->strides[nd - 1], j.sa, &oa);
    place(&j, bb, b->dtype, j.K, j.N, b->strides[nd - 2], b->strides[nd - 1], j.sb, &ob);
    char *o = po + bi * mn * (int64_t)j.dsz;
    if (!widen) {
      gemm(&j, &oa, &ob, o, beta);
      continue;
    }
    /* halves: accumulate in float32 scratch, round once */
    if (have_c) cm_cpu_convert(j.sc, j.ct, o, j.dt, mn);
    gemm(&j, &oa, &ob, j.sc, have_c ? beta : 0.0f);
    cm_cpu_convert(o, j.dt, j.sc, j.ct, mn);
  }
  free(scratch);
  return 0;
}
