/* LAPACK's Fortran entry points that the linear algebra kernels call
 * (OpenBLAS exports them), and helpers to move matrices between an
 * array's layout and the dense column-major blocks LAPACK works on.
 * Complex64 matrices are passed as interleaved float pairs. */
#ifndef CMLX_BACKEND_CPU_LAPACK_H
#define CMLX_BACKEND_CPU_LAPACK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/array.h"

/* SVD (divide and conquer) */
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s,
             float *u, const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork,
             int *iwork, int *info);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s,
             double *u, const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork,
             int *iwork, int *info);
void cgesdd_(const char *jobz, const int *m, const int *n, void *a, const int *lda, float *s,
             void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork,
             float *rwork, int *iwork, int *info);
/* QR */
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau,
             float *work, const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau,
             double *work, const int *lwork, int *info);
/* LU, inverse, triangular inverse, solve */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void sgetri_(const int *n, float *a, const int *lda, const int *ipiv, float *work, const int *lwork,
             int *info);
void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work,
             const int *lwork, int *info);
void sgetrs_(const char *trans, const int *n, const int *nrhs, const float *a, const int *lda,
             const int *ipiv, float *b, const int *ldb, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info);
void strtri_(const char *uplo, const char *diag, const int *n, float *a, const int *lda, int *info);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda,
             int *info);
/* Cholesky */
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
/* eigen decompositions */
void sgeev_(const char *jobvl, const char *jobvr, const int *n, float *a, const int *lda, float *wr,
            float *wi, float *vl, const int *ldvl, float *vr, const int *ldvr, float *work,
            const int *lwork, int *info);
void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda,
            double *wr, double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr,
            double *work, const int *lwork, int *info);
void cgeev_(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *w,
            void *vl, const int *ldvl, void *vr, const int *ldvr, void *work, const int *lwork,
            float *rwork, int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w,
             float *work, const int *lwork, int *iwork, const int *liwork, int *info);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info);
void cheevd_(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, float *w,
             void *work, const int *lwork, float *rwork, const int *lrwork, int *iwork,
             const int *liwork, int *info);

/* Copy every matrix of a (any layout) into dst, dense: row-major, or
 * column-major per matrix (col) — the batch stays in row-major order. */
void cm_lin_pack(void *dst, const cm_array *a, bool col);
/* Copy dense matrices src (dtype and shape of out; column-major per matrix
 * when col) into out's buffer, allocated by the caller. */
void cm_lin_unpack(cm_array *out, const void *src, bool col);
/* Number of matrices in a (..., M, N) array with M, N > 0. */
int64_t cm_lin_batch(const cm_array *a);
/* A workspace size LAPACK returned through its query (at least 1). */
static inline int cm_lin_lwork(double q) { return q < 1 ? 1 : (int)q; }
/* The size a query wrote into q: a double (float64), else a float (the
 * real part for complex64). */
static inline int cm_lin_query(cm_dtype t, const double *q) {
  if (t == CM_FLOAT64) return cm_lin_lwork(q[0]);
  float f;
  memcpy(&f, q, sizeof f);
  return cm_lin_lwork(f);
}
/* malloc that reports "[prim::eval_cpu] Out of memory." */
void *cm_lin_malloc(size_t n, const char *prim);

#endif
