/* Kernels of the eigen decompositions: geev (general, float32, float64 or
 * complex64 input; complex64 eigenvalues and eigenvectors) and syevd /
 * heevd (symmetric or Hermitian; real ascending eigenvalues).  The
 * eigenvector of values[..., i] is vectors[..., :, i], as in MLX.
 *
 * As MLX does, LAPACK gets the row-major buffer, i.e. B = A^T in
 * column-major, so eigenvalues come in MLX's order and eigenvectors with
 * MLX's normalisation:
 *   geev computes B's left eigenvectors u (u^H B = w u^H), and A conj(u)
 *   = w conj(u): the eigenvectors of A are the conjugated left ones
 *   (MLX conjugates them for real input only; cmlx for complex64 too,
 *   where MLX's are not eigenvectors);
 *   for a Hermitian A, B = conj(A) with the other triangle, whose
 *   eigenvectors are the conjugates of A's. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/lapack.h"
#include "backend/cpu/linalg.h"
#include "core/error.h"

typedef float _Complex c64;

/* ---- general ------------------------------------------------------------- */

int cm_cpu_eig(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  bool vec = cm_eig_params_of(out)->vectors;
  const cm_array *a = in[0];
  cm_array *W = cm_output(out, 0), *V = vec ? cm_output(out, 1) : NULL;
  if (cm_alloc_output(W) || (vec && cm_alloc_output(V))) return -1;
  if (a->size == 0) return 0;
  int N = a->shape[a->ndim - 1], info = 0, lwork = -1, one = 1;
  cm_dtype t = a->dtype;
  size_t es = cm_itemsize(a);
  int64_t batch = cm_lin_batch(a);
  char jl = vec ? 'V' : 'N', jr = 'N';
  void *col = cm_lin_malloc(cm_nbytes(a), "Eig");
  /* vr: N x N (complex64: complex entries); wr/wi for the real routines */
  void *vr = cm_lin_malloc(es * (size_t)N * N, "Eig");
  void *wri = cm_lin_malloc(es * 2 * (size_t)N, "Eig");
  float *rwork = cm_lin_malloc(sizeof(float) * 2 * (size_t)N, "Eig");
  void *work = NULL;
  int rc = -1, ldv = vec ? N : 1;
  if (!col || !vr || !wri || !rwork) goto done;
  cm_lin_pack(col, a, false);
  double q[2] = {0, 0};
  if (t == CM_FLOAT64)
    dgeev_(&jl, &jr, &N, NULL, &N, NULL, NULL, NULL, &ldv, NULL, &one, q, &lwork, &info);
  else if (t == CM_FLOAT32)
    sgeev_(&jl, &jr, &N, NULL, &N, NULL, NULL, NULL, &ldv, NULL, &one, (float *)q, &lwork, &info);
  else cgeev_(&jl, &jr, &N, NULL, &N, NULL, NULL, &ldv, NULL, &one, q, &lwork, rwork, &info);
  lwork = cm_lin_query(t, q);
  if (!(work = cm_lin_malloc(es * (size_t)lwork, "Eig"))) goto done;
  for (int64_t b = 0; b < batch; b++) {
    char *ab = (char *)col + (size_t)b * N * N * es;
    c64 *wb = (c64 *)cm_data(W) + b * N;
    c64 *vb = vec ? (c64 *)cm_data(V) + b * N * N : NULL;
    if (t == CM_COMPLEX64) {
      cgeev_(&jl, &jr, &N, ab, &N, wb, vr, &ldv, NULL, &one, work, &lwork, rwork, &info);
    } else if (t == CM_FLOAT64) {
      double *wr = wri, *wi = wr + N;
      dgeev_(&jl, &jr, &N, (double *)ab, &N, wr, wi, vr, &ldv, NULL, &one, work, &lwork, &info);
    } else {
      float *wr = wri, *wi = wr + N;
      sgeev_(&jl, &jr, &N, (float *)ab, &N, wr, wi, vr, &ldv, NULL, &one, work, &lwork, &info);
    }
    if (info) {
      cm_error(CM_ERR_RUNTIME, "[Eig::eval_cpu] Eigenvalue decomposition failed with error code %d",
               info);
      goto done;
    }
    if (t == CM_COMPLEX64) {
      if (vec)
        for (int i = 0; i < N; i++)
          for (int j = 0; j < N; j++)
            vb[(int64_t)i * N + j] = conjf(((c64 *)vr)[i + (int64_t)j * N]);
      continue;
    }
    /* real routines: a complex pair (j, j+1) is stored as the columns
     * re, im: u_j = re + i im, u_j+1 = re - i im, conjugated here */
    for (int j = 0; j < N; j++) {
      double re = t == CM_FLOAT64 ? ((double *)wri)[j] : ((float *)wri)[j];
      double im = t == CM_FLOAT64 ? ((double *)wri)[N + j] : ((float *)wri)[N + j];
      wb[j] = (float)re + I * (float)im;
    }
    if (!vec) continue;
#define VR(r, c)                                          \
  (t == CM_FLOAT64 ? ((double *)vr)[(r) + (int64_t)(c)*N] \
                   : (double)((float *)vr)[(r) + (int64_t)(c)*N])
    for (int j = 0; j < N; j++) {
      if (cimagf(wb[j]) != 0 && j + 1 < N) {
        for (int r = 0; r < N; r++) {
          float re = (float)VR(r, j), im = (float)VR(r, j + 1);
          vb[(int64_t)r * N + j] = re - I * im;
          vb[(int64_t)r * N + j + 1] = re + I * im;
        }
        j++;
      } else {
        for (int r = 0; r < N; r++) vb[(int64_t)r * N + j] = (float)VR(r, j);
      }
    }
#undef VR
  }
  rc = 0;
done:
  free(col);
  free(vr);
  free(wri);
  free(rwork);
  free(work);
  return rc;
}

/* ---- symmetric / Hermitian ----------------------------------------------- */

int cm_cpu_eigh(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_eigh_params *ep = cm_eigh_params_of(out);
  bool vec = ep->vectors;
  const cm_array *a = in[0];
  cm_array *W = cm_output(out, 0), *V = vec ? cm_output(out, 1) : NULL;
  if (cm_alloc_output(W) || (vec && cm_alloc_output(V))) return -1;
  if (a->size == 0) return 0;
  int N = a->shape[a->ndim - 1], info = 0, lwork = -1, lrwork = -1, liwork = -1, iq = 0;
  cm_dtype t = a->dtype;
  size_t es = cm_itemsize(a), rs = t == CM_FLOAT64 ? 8 : 4;
  /* the row-major buffer: the triangle LAPACK reads is the other one */
  char jobz = vec ? 'V' : 'N', uplo = ep->upper ? 'L' : 'U';
  void *col = cm_lin_malloc(cm_nbytes(a), "Eigh"), *work = NULL;
  float *rwork = NULL;
  int *iwork = NULL, rc = -1;
  if (!col) goto done;
  cm_lin_pack(col, a, false);
  double q[2] = {0, 0};
  float rq = 0;
  if (t == CM_FLOAT64) dsyevd_(&jobz, &uplo, &N, NULL, &N, NULL, q, &lwork, &iq, &liwork, &info);
  else if (t == CM_FLOAT32)
    ssyevd_(&jobz, &uplo, &N, NULL, &N, NULL, (float *)q, &lwork, &iq, &liwork, &info);
  else cheevd_(&jobz, &uplo, &N, NULL, &N, NULL, q, &lwork, &rq, &lrwork, &iq, &liwork, &info);
  lwork = cm_lin_query(t, q);
  liwork = iq < 1 ? 1 : iq;
  lrwork = cm_lin_lwork(rq);
  work = cm_lin_malloc(es * (size_t)lwork, "Eigh");
  iwork = cm_lin_malloc(sizeof(int) * (size_t)liwork, "Eigh");
  rwork = cm_lin_malloc(sizeof(float) * (size_t)lrwork, "Eigh");
  if (!work || !iwork || !rwork) goto done;
  for (int64_t b = 0; b < cm_lin_batch(a); b++) {
    char *ab = (char *)col + (size_t)b * N * N * es;
    char *wb = (char *)cm_data(W) + (size_t)b * N * rs;
    if (t == CM_FLOAT64)
      dsyevd_(&jobz, &uplo, &N, (double *)ab, &N, (double *)wb, work, &lwork, iwork, &liwork,
              &info);
    else if (t == CM_FLOAT32)
      ssyevd_(&jobz, &uplo, &N, (float *)ab, &N, (float *)wb, work, &lwork, iwork, &liwork, &info);
    else
      cheevd_(&jobz, &uplo, &N, ab, &N, (float *)wb, work, &lwork, rwork, &lrwork, iwork, &liwork,
              &info);
    if (info) {
      cm_error(CM_ERR_RUNTIME,
               "[Eigh::eval_cpu] Eigenvalue decomposition failed with error code %d", info);
      goto done;
    }
  }
  if (vec && t == CM_COMPLEX64)
    for (int64_t i = 0; i < a->size; i++) ((c64 *)col)[i] = conjf(((c64 *)col)[i]);
  /* eigenvector j is column j of the column-major result */
  if (vec) cm_lin_unpack(V, col, true);
  rc = 0;
done:
  free(col);
  free(work);
  free(iwork);
  free(rwork);
  return rc;
}
