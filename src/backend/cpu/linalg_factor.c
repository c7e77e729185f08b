/* Kernels of the factorisations: QR (geqrf + orgqr), LU (getrf), Cholesky
 * (potrf), the inverse (getrf + getri, or trtri for a triangle) and the
 * linear solve (getrf + getrs).  Batches are factored one matrix after
 * another; each LAPACK call uses OpenBLAS's threads.
 *
 * Where a matrix is symmetric or only its inverse is wanted, the
 * row-major buffer is handed to LAPACK as it is (the column-major
 * transpose): (A^T)^-1 = (A^-1)^T, and the triangle LAPACK reads is then
 * the opposite one.  QR and LU transpose into column-major blocks. */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/lapack.h"
#include "backend/cpu/linalg.h"
#include "core/error.h"

#define ELEM(t, p, i) ((t) == CM_FLOAT64 ? ((double *)(p))[i] : (double)((float *)(p))[i])

static void set_elem(cm_dtype t, void *p, int64_t i, double v) {
  if (t == CM_FLOAT64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* ---- QR ------------------------------------------------------------------ */

int cm_cpu_qrf(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_array *a = in[0];
  cm_array *Q = cm_output(out, 0), *R = cm_output(out, 1);
  if (cm_alloc_output(Q) || cm_alloc_output(R)) return -1;
  int nd = a->ndim, M = a->shape[nd - 2], N = a->shape[nd - 1], K = M < N ? M : N;
  if (a->size == 0) return 0;
  cm_dtype t = a->dtype;
  bool dbl = t == CM_FLOAT64;
  size_t es = cm_itemsize(a);
  int64_t batch = cm_lin_batch(a);
  void *col = cm_lin_malloc(cm_nbytes(a), "QRF"), *tau = cm_lin_malloc(es * (size_t)K, "QRF");
  void *work = NULL;
  int rc = -1, info = 0, lwork = -1;
  if (!col || !tau) goto done;
  cm_lin_pack(col, a, true);
  double q1 = 0, q2 = 0;
  float f1 = 0, f2 = 0;
  if (dbl) {
    dgeqrf_(&M, &N, NULL, &M, NULL, &q1, &lwork, &info);
    dorgqr_(&M, &K, &K, NULL, &M, NULL, &q2, &lwork, &info);
  } else {
    sgeqrf_(&M, &N, NULL, &M, NULL, &f1, &lwork, &info);
    sorgqr_(&M, &K, &K, NULL, &M, NULL, &f2, &lwork, &info);
    q1 = f1, q2 = f2;
  }
  lwork = cm_lin_lwork(q1 > q2 ? q1 : q2);
  if (!(work = cm_lin_malloc(es * (size_t)lwork, "QRF"))) goto done;
  for (int64_t b = 0; b < batch; b++) {
    char *ab = (char *)col + (size_t)b * M * N * es;
    char *qb = (char *)cm_data(Q) + (size_t)b * M * K * es;
    char *rb = (char *)cm_data(R) + (size_t)b * K * N * es;
    if (dbl) dgeqrf_(&M, &N, (double *)ab, &M, tau, work, &lwork, &info);
    else sgeqrf_(&M, &N, (float *)ab, &M, tau, work, &lwork, &info);
    /* R: the upper triangle of the first K rows */
    for (int i = 0; i < K; i++)
      for (int j = 0; j < N; j++)
        set_elem(t, rb, (int64_t)i * N + j, j < i ? 0 : ELEM(t, ab, i + (int64_t)j * M));
    if (dbl) dorgqr_(&M, &K, &K, (double *)ab, &M, tau, work, &lwork, &info);
    else sorgqr_(&M, &K, &K, (float *)ab, &M, tau, work, &lwork, &info);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < K; j++)
        set_elem(t, qb, (int64_t)i * K + j, ELEM(t, ab, i + (int64_t)j * M));
  }
  rc = 0;
done:
  free(col);
  free(tau);
  free(work);
  return rc;
}

/* ---- LU ------------------------------------------------------------------ */

int cm_cpu_luf(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_array *a = in[0];
  cm_array *LU = cm_output(out, 0), *P = cm_output(out, 1), *R = cm_output(out, 2);
  if (cm_alloc_output(LU) || cm_alloc_output(P) || cm_alloc_output(R)) return -1;
  int nd = a->ndim, M = a->shape[nd - 2], N = a->shape[nd - 1], K = M < N ? M : N;
  int64_t batch = cm_lin_batch(a);
  uint32_t *piv = cm_data(P), *rows = cm_data(R);
  if (a->size == 0) {
    /* nothing to pivot: identity row orders */
    for (int64_t b = 0; b < (M ? R->size / M : 0); b++)
      for (int i = 0; i < M; i++) rows[b * M + i] = (uint32_t)i;
    return 0;
  }
  void *col = cm_lin_malloc(cm_nbytes(a), "LUF");
  if (!col) return -1;
  cm_lin_pack(col, a, true);
  size_t es = cm_itemsize(a);
  for (int64_t b = 0; b < batch; b++) {
    char *ab = (char *)col + (size_t)b * M * N * es;
    int *ip = (int *)(piv + b * K), info = 0;
    uint32_t *rb = rows + b * M;
    if (a->dtype == CM_FLOAT64) dgetrf_(&M, &N, (double *)ab, &M, ip, &info);
    else sgetrf_(&M, &N, (float *)ab, &M, ip, &info);
    /* info > 0 (an exact zero pivot) still gives a valid factorisation */
    for (int i = 0; i < K; i++) piv[b * K + i] = (uint32_t)(ip[i] - 1);
    for (int i = 0; i < M; i++) rb[i] = (uint32_t)i;
    for (int j = K - 1; j >= 0; j--) {
      uint32_t pj = piv[b * K + j], t = rb[pj];
      rb[pj] = rb[j];
      rb[j] = t;
    }
  }
  cm_lin_unpack(LU, col, true);
  free(col);
  return 0;
}

/* ---- Cholesky ------------------------------------------------------------ */

/* Zero the triangle above (upper false) or below (upper true) the
 * diagonal of an n x n row-major block. */
static void zero_triangle(cm_dtype t, void *m, int n, bool upper) {
  size_t es = t == CM_FLOAT64 ? 8 : 4;
  for (int i = 0; i < n; i++) {
    char *row = (char *)m + (size_t)i * n * es;
    if (upper) memset(row, 0, (size_t)i * es);
    else memset(row + (size_t)(i + 1) * es, 0, (size_t)(n - i - 1) * es);
  }
}

int cm_cpu_cholesky(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  bool upper = cm_upper_params_of(out)->upper;
  const cm_array *a = in[0];
  if (cm_alloc_output(out)) return -1;
  if (a->size == 0) return 0;
  cm_lin_pack(cm_data(out), a, false);
  int N = a->shape[a->ndim - 1];
  char uplo = upper ? 'L' : 'U';
  size_t es = cm_itemsize(a);
  for (int64_t b = 0; b < cm_lin_batch(a); b++) {
    char *m = (char *)cm_data(out) + (size_t)b * N * N * es;
    int info = 0;
    if (a->dtype == CM_FLOAT64) dpotrf_(&uplo, &N, (double *)m, &N, &info);
    else spotrf_(&uplo, &N, (float *)m, &N, &info);
    if (info > 0)
      return cm_error(CM_ERR_RUNTIME,
                      "[Cholesky::eval_cpu] Cholesky decomposition failed: the matrix is not "
                      "positive definite (its leading minor of order %d is not positive).",
                      info);
    if (info < 0)
      return cm_error(CM_ERR_RUNTIME,
                      "[Cholesky::eval_cpu] Cholesky decomposition failed with error code %d",
                      info);
    zero_triangle(a->dtype, m, N, upper);
  }
  return 0;
}

/* ---- inverse ------------------------------------------------------------- */

int cm_cpu_inverse(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_inverse_params *ip = cm_inverse_params_of(out);
  const cm_array *a = in[0];
  if (cm_alloc_output(out)) return -1;
  if (a->size == 0) return 0;
  cm_lin_pack(cm_data(out), a, false);
  int N = a->shape[a->ndim - 1], info = 0;
  bool dbl = a->dtype == CM_FLOAT64;
  size_t es = cm_itemsize(a);
  int *piv = NULL;
  void *work = NULL;
  int lwork = -1, rc = -1;
  if (!ip->tri) {
    double q = 0;
    float f = 0;
    if (dbl) dgetri_(&N, NULL, &N, NULL, &q, &lwork, &info);
    else sgetri_(&N, NULL, &N, NULL, &f, &lwork, &info), q = f;
    lwork = cm_lin_lwork(q);
    piv = cm_lin_malloc(sizeof(int) * (size_t)N, "Inverse");
    work = piv ? cm_lin_malloc(es * (size_t)lwork, "Inverse") : NULL;
    if (!work) goto done;
  }
  char uplo = ip->upper ? 'L' : 'U', diag = 'N';
  for (int64_t b = 0; b < cm_lin_batch(a); b++) {
    char *m = (char *)cm_data(out) + (size_t)b * N * N * es;
    if (ip->tri) {
      if (dbl) dtrtri_(&uplo, &diag, &N, (double *)m, &N, &info);
      else strtri_(&uplo, &diag, &N, (float *)m, &N, &info);
      if (info) {
        cm_error(CM_ERR_RUNTIME,
                 "[Inverse::eval_cpu] triangular inversion failed with error code %d", info);
        goto done;
      }
      zero_triangle(a->dtype, m, N, ip->upper);
      continue;
    }
    if (dbl) dgetrf_(&N, &N, (double *)m, &N, piv, &info);
    else sgetrf_(&N, &N, (float *)m, &N, piv, &info);
    if (info) {
      cm_error(CM_ERR_RUNTIME, "[Inverse::eval_cpu] LU factorization failed with error code %d",
               info);
      goto done;
    }
    if (dbl) dgetri_(&N, (double *)m, &N, piv, work, &lwork, &info);
    else sgetri_(&N, (float *)m, &N, piv, work, &lwork, &info);
    if (info) {
      cm_error(CM_ERR_RUNTIME, "[Inverse::eval_cpu] inversion failed with error code %d", info);
      goto done;
    }
  }
  rc = 0;
done:
  free(piv);
  free(work);
  return rc;
}

/* ---- solve --------------------------------------------------------------- */

/* in[0]: A (..., N, N), in[1]: B (..., N, K) with the same batch; out X. */
int cm_cpu_solve(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_array *a = in[0], *bm = in[1];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = a->ndim, N = a->shape[nd - 1], K = bm->shape[nd - 1], info = 0;
  bool dbl = a->dtype == CM_FLOAT64;
  size_t es = cm_itemsize(a);
  /* A row-major is A^T column-major: factor it, then solve with trans 'T' */
  void *lu = cm_lin_malloc(cm_nbytes(a), "Solve"), *x = cm_lin_malloc(cm_nbytes(out), "Solve");
  int *piv = cm_lin_malloc(sizeof(int) * (size_t)N, "Solve");
  int rc = -1;
  if (!lu || !x || !piv) goto done;
  cm_lin_pack(lu, a, false);
  cm_lin_pack(x, bm, true);
  char tr = 'T';
  for (int64_t b = 0; b < cm_lin_batch(a); b++) {
    char *ab = (char *)lu + (size_t)b * N * N * es, *xb = (char *)x + (size_t)b * N * K * es;
    if (dbl) dgetrf_(&N, &N, (double *)ab, &N, piv, &info);
    else sgetrf_(&N, &N, (float *)ab, &N, piv, &info);
    if (info) {
      /* MLX's message: its solve fails inverting the singular U */
      cm_error(CM_ERR_RUNTIME, "[Inverse::eval_cpu] triangular inversion failed with error code %d",
               info);
      goto done;
    }
    if (dbl) dgetrs_(&tr, &N, &K, (double *)ab, &N, piv, (double *)xb, &N, &info);
    else sgetrs_(&tr, &N, &K, (float *)ab, &N, piv, (float *)xb, &N, &info);
  }
  cm_lin_unpack(out, x, true);
  rc = 0;
done:
  free(lu);
  free(x);
  free(piv);
  return rc;
}
