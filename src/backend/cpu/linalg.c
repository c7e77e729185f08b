/* SVD by LAPACK's divide and conquer (gesdd, jobz = 'A'), as MLX's CPU
 * backend does.  LAPACK is column-major: a row-major M x N matrix is its
 * N x M transpose, so LAPACK factors A^T = U' S V'^T, and since
 * A = V' S U'^T, the buffer LAPACK fills as U' (N x N, column-major) is
 * A's Vt read row-major, and the one it fills as V'^T is A's U. */
#include "backend/cpu/linalg.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"

/* LAPACK's Fortran entry points (OpenBLAS exports them). */
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s,
             float *u, const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork,
             int *iwork, int *info);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s,
             double *u, const int *ldu, double *vt, const int *ldvt, double *work,
             const int *lwork, int *iwork, int *info);

static int gesdd(bool dbl, int m, int n, void *a, void *s, void *u, void *vt, void *work,
                 int lwork, int *iwork) {
  const char jobz = 'A';
  int info = 0;
  if (dbl)
    dgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &n, work, &lwork, iwork, &info);
  else
    sgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &n, work, &lwork, iwork, &info);
  return info;
}

int cm_cpu_svd(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_array *a = in[0];
  cm_array *U = cm_output(out, 0), *S = cm_output(out, 1), *Vt = cm_output(out, 2);
  if (cm_alloc_output(U) || cm_alloc_output(S) || cm_alloc_output(Vt)) return -1;
  int nd = a->ndim;
  int M = a->shape[nd - 2], N = a->shape[nd - 1], K = M < N ? M : N;
  if (a->size == 0 || K == 0) {
    /* nothing to factor: identities for U and Vt of an empty matrix */
    memset(cm_data(U), 0, cm_nbytes(U));
    memset(cm_data(Vt), 0, cm_nbytes(Vt));
    return 0;
  }
  bool dbl = a->dtype == CM_FLOAT64;
  size_t es = cm_itemsize(a);
  int64_t batch = a->size / ((int64_t)M * N);
  /* the input, row-major and contiguous (LAPACK overwrites it) */
  void *scratch = malloc(cm_nbytes(a));
  int *iwork = malloc(sizeof(int) * 8 * (size_t)K);
  void *work = NULL;
  int rc = 0;
  if (!scratch || !iwork) {
    rc = cm_error(CM_ERR_MEMORY, "[SVD::eval_cpu] Out of memory.");
    goto done;
  }
  int64_t dense[CM_MAX_DIMS];
  cm_row_major_strides(nd, a->shape, dense);
  cm_cpu_copy_strided(scratch, a->dtype, dense, cm_data(a), a->dtype, a->strides, nd, a->shape);
  double query = 0;
  float queryf = 0;
  int info = gesdd(dbl, N, M, NULL, NULL, NULL, NULL, dbl ? (void *)&query : (void *)&queryf, -1,
                   iwork);
  if (info) {
    rc = cm_error(CM_ERR_RUNTIME, "[SVD::eval_cpu] workspace calculation failed with code %d",
                  info);
    goto done;
  }
  int lwork = dbl ? (int)query : (int)queryf;
  if (!(work = malloc(es * (size_t)(lwork > 1 ? lwork : 1)))) {
    rc = cm_error(CM_ERR_MEMORY, "[SVD::eval_cpu] Out of memory.");
    goto done;
  }
  for (int64_t b = 0; b < batch && !rc; b++) {
    char *ab = (char *)scratch + (size_t)b * M * N * es;
    char *sb = (char *)cm_data(S) + (size_t)b * K * es;
    char *ub = (char *)cm_data(U) + (size_t)b * M * M * es;
    char *vb = (char *)cm_data(Vt) + (size_t)b * N * N * es;
    info = gesdd(dbl, N, M, ab, sb, vb, ub, work, lwork, iwork);
    if (info) rc = cm_error(CM_ERR_RUNTIME, "[SVD::eval_cpu] SVD failed with error code %d", info);
  }
done:
  free(scratch);
  free(iwork);
  free(work);
  return rc;
}
