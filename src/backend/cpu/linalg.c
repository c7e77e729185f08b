/* The SVD kernel (LAPACK's divide and conquer, gesdd, as MLX's CPU backend
 * uses) and the packing helpers every linear algebra kernel shares.
 *
 * LAPACK is column-major: a row-major M x N matrix is its N x M transpose,
 * so LAPACK factors A^T = U' S V'^H.  Then A = conj(V') S U'^T: the buffer
 * LAPACK fills as U' (N x N, column-major) is A's Vh read row-major, and
 * the one it fills as V'^H is A's U — no transposes are needed. */
#include "backend/cpu/linalg.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/lapack.h"
#include "core/error.h"

/* ---- shared helpers ---------------------------------------------------- */

static void dense_strides(int nd, const int32_t *shape, bool col, int64_t *st) {
  cm_row_major_strides(nd, shape, st);
  if (col && nd >= 2) {
    st[nd - 1] = shape[nd - 2];
    st[nd - 2] = 1;
  }
}

void cm_lin_pack(void *dst, const cm_array *a, bool col) {
  int64_t st[CM_MAX_DIMS];
  dense_strides(a->ndim, a->shape, col, st);
  cm_cpu_copy_strided(dst, a->dtype, st, cm_data(a), a->dtype, a->strides, a->ndim, a->shape);
}

void cm_lin_unpack(cm_array *out, const void *src, bool col) {
  int64_t st[CM_MAX_DIMS];
  dense_strides(out->ndim, out->shape, col, st);
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, src, out->dtype, st, out->ndim,
                      out->shape);
}

int64_t cm_lin_batch(const cm_array *a) {
  int64_t b = 1;
  for (int d = 0; d < a->ndim - 2; d++) b *= a->shape[d];
  return b;
}

void *cm_lin_malloc(size_t n, const char *prim) {
  void *p = malloc(n ? n : 1);
  if (!p) cm_error(CM_ERR_MEMORY, "[%s::eval_cpu] Out of memory.", prim);
  return p;
}

/* ---- SVD ----------------------------------------------------------------- */

/* One gesdd call of the dtype's routine (m, n: LAPACK's, i.e. swapped). */
static int gesdd(cm_dtype t, char jobz, int m, int n, void *a, void *s, void *u, int ldu, void *vt,
                 int ldvt, void *work, int lwork, float *rwork, int *iwork) {
  int info = 0;
  if (t == CM_FLOAT64)
    dgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
  else if (t == CM_FLOAT32)
    sgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
  else cgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info);
  return info;
}

/* Identity matrices in every (..., n, n) block of o (the factors of an
 * empty matrix, as LAPACK and NumPy give them). */
static void fill_identity(cm_array *o) {
  memset(cm_data(o), 0, cm_nbytes(o));
  if (o->size == 0) return;
  int n = o->shape[o->ndim - 1];
  size_t es = cm_itemsize(o);
  char *p = cm_data(o);
  float one32 = 1;
  double one64 = 1;
  const void *one = o->dtype == CM_FLOAT64 ? (const void *)&one64 : (const void *)&one32;
  for (int64_t b = 0; b < o->size; b += (int64_t)n * n)
    for (int j = 0; j < n; j++) memcpy(p + (size_t)(b + (int64_t)j * n + j) * es, one, es);
}

int cm_cpu_svd(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_svd_params *sp = cm_svd_params_of(out);
  const cm_array *a = in[0];
  bool uv = sp->compute_uv;
  cm_array *U = uv ? cm_output(out, 0) : NULL, *S = uv ? cm_output(out, 1) : out,
           *Vt = uv ? cm_output(out, 2) : NULL;
  if (cm_alloc_output(S) || (uv && (cm_alloc_output(U) || cm_alloc_output(Vt)))) return -1;
  int nd = a->ndim;
  int M = a->shape[nd - 2], N = a->shape[nd - 1], K = M < N ? M : N;
  if (a->size == 0) {
    if (uv) fill_identity(U), fill_identity(Vt);
    return 0;
  }
  cm_dtype t = a->dtype;
  size_t es = cm_itemsize(a), rs = t == CM_FLOAT64 ? 8 : 4;
  int64_t batch = cm_lin_batch(a);
  char jobz = uv ? 'A' : 'N';
  int mx = M > N ? M : N;
  size_t lrwork =
      uv ? (size_t)K * (size_t)(5 * K + 7 > 2 * mx + 2 * K + 1 ? 5 * K + 7 : 2 * mx + 2 * K + 1)
         : 7 * (size_t)K;
  void *scratch = cm_lin_malloc(cm_nbytes(a), "SVD"), *work = NULL;
  int *iwork = cm_lin_malloc(sizeof(int) * 8 * (size_t)K, "SVD");
  float *rwork = t == CM_COMPLEX64 ? cm_lin_malloc(sizeof(float) * lrwork, "SVD") : NULL;
  int rc = -1;
  if (!scratch || !iwork || (t == CM_COMPLEX64 && !rwork)) goto done;
  cm_lin_pack(scratch, a, false);
  double q[2] = {0, 0}; /* a float, double or complex64 workspace size */
  int info =
      gesdd(t, jobz, N, M, NULL, NULL, NULL, uv ? N : 1, NULL, uv ? M : 1, q, -1, rwork, iwork);
  if (info) {
    cm_error(CM_ERR_RUNTIME, "[SVD::eval_cpu] workspace calculation failed with code %d", info);
    goto done;
  }
  int lwork = cm_lin_query(t, q);
  if (!(work = cm_lin_malloc(es * (size_t)lwork, "SVD"))) goto done;
  rc = 0;
  for (int64_t b = 0; b < batch && !rc; b++) {
    char *ab = (char *)scratch + (size_t)b * M * N * es;
    char *sb = (char *)cm_data(S) + (size_t)b * K * rs;
    char *ub = uv ? (char *)cm_data(U) + (size_t)b * M * M * es : NULL;
    char *vb = uv ? (char *)cm_data(Vt) + (size_t)b * N * N * es : NULL;
    info = gesdd(t, jobz, N, M, ab, sb, vb, uv ? N : 1, ub, uv ? M : 1, work, lwork, rwork, iwork);
    if (info) rc = cm_error(CM_ERR_RUNTIME, "[SVD::eval_cpu] SVD failed with error code %d", info);
  }
done:
  free(scratch);
  free(iwork);
  free(rwork);
  free(work);
  return rc;
}
