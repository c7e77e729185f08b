/* The factorisation constructors of mx.linalg: MLX's checks (in MLX's
 * order: stream, dtype, rank, squareness), then one primitive node, with
 * siblings for several results. */
#include "ops/linalg.h"

#include <string.h>

#include "core/error.h"
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/matmul.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "primitives/linalg.h"
#include "primitives/rules_util.h"

int cm_linalg_check_cpu(cm_stream *s, const char *fn) {
  if (cm_op_stream(s)) return -1;
  if (s->device.type == CM_GPU)
    return cm_error(CM_ERR_VALUE,
                    "%s This op is not yet supported on the GPU. Explicitly pass a CPU stream to "
                    "run it.",
                    fn);
  return 0;
}

int cm_linalg_check_float(cm_dtype t, const char *fn, bool complex_ok) {
  if (t == CM_FLOAT32 || t == CM_FLOAT64 || (complex_ok && t == CM_COMPLEX64)) return 0;
  return cm_error(CM_ERR_VALUE, "%s Arrays must have type %s. Received array with type %s.", fn,
                  complex_ok ? "float32, float64 or complex64" : "float32 or float64",
                  cm_dtype_name(t));
}

/* stream, dtype and rank (MLX's "Arrays must have >= 2 dimensions") */
static int check_matrix(cm_array *a, cm_stream *s, const char *fn, bool complex_ok) {
  if (cm_linalg_check_cpu(s, fn) || cm_linalg_check_float(a->dtype, fn, complex_ok)) return -1;
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "%s Arrays must have >= 2 dimensions. Received array with %d dimensions.", fn,
                    a->ndim);
  return 0;
}

int cm_linalg_rt_end(cm_rt *t) {
  bool fail = t->fail;
  cm_array *o;
  cm_rt_done(t, NULL, &o);
  return fail ? -1 : 0;
}

cm_array *cm_linalg_finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

cm_dtype cm_linalg_at_least_float(cm_dtype d) {
  return cm_dtype_is_inexact(d) ? d : cm_promote_types(d, CM_FLOAT32);
}

static bool square(const cm_array *a) { return a->shape[a->ndim - 1] == a->shape[a->ndim - 2]; }

/* ---- SVD, QR ------------------------------------------------------------- */

int cm_linalg_svd_uv(cm_array *a, bool compute_uv, cm_array **outs, int *nout, cm_stream s) {
  outs[0] = NULL;
  if (compute_uv) outs[1] = outs[2] = NULL;
  if (cm_linalg_check_cpu(&s, "[linalg::svd]") ||
      cm_linalg_check_float(a->dtype, "[linalg::svd]", true))
    return -1;
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[linalg::svd] Input array must have >= 2 dimensions. Received array with "
                    "%d dimensions.",
                    a->ndim);
  int nd = a->ndim;
  int32_t m = a->shape[nd - 2], n = a->shape[nd - 1];
  int32_t us[CM_MAX_DIMS], ss[CM_MAX_DIMS], vs[CM_MAX_DIMS];
  memcpy(us, a->shape, sizeof(int32_t) * nd);
  memcpy(ss, a->shape, sizeof(int32_t) * nd);
  memcpy(vs, a->shape, sizeof(int32_t) * nd);
  us[nd - 1] = m;
  vs[nd - 2] = n;
  ss[nd - 2] = m < n ? m : n;
  cm_dtype st = a->dtype == CM_COMPLEX64 ? CM_FLOAT32 : a->dtype;
  cm_svd_params p = {compute_uv};
  *nout = compute_uv ? 3 : 1;
  if (!compute_uv) {
    outs[0] = cm_op_node(st, nd - 1, ss, &cm_prim_svd, &p, sizeof p, &a, 1, s);
    return outs[0] ? 0 : -1;
  }
  const cm_dtype dts[3] = {a->dtype, st, a->dtype};
  const int ndims[3] = {nd, nd - 1, nd};
  const int32_t *shapes[3] = {us, ss, vs};
  return cm_node_new_multi(3, dts, ndims, shapes, &cm_prim_svd, &p, sizeof p, &a, 1, s, outs);
}

int cm_linalg_svd(cm_array *a, cm_array **outs, cm_stream s) {
  int n;
  return cm_linalg_svd_uv(a, true, outs, &n, s);
}

int cm_linalg_qr(cm_array *a, cm_array **q, cm_array **r, cm_stream s) {
  *q = *r = NULL;
  if (check_matrix(a, &s, "[linalg::qr]", false)) return -1;
  int nd = a->ndim;
  int32_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = m < n ? m : n;
  int32_t qs[CM_MAX_DIMS], rs[CM_MAX_DIMS];
  memcpy(qs, a->shape, sizeof(int32_t) * nd);
  memcpy(rs, a->shape, sizeof(int32_t) * nd);
  qs[nd - 1] = k;
  rs[nd - 2] = k;
  const cm_dtype dts[2] = {a->dtype, a->dtype};
  const int ndims[2] = {nd, nd};
  const int32_t *shapes[2] = {qs, rs};
  cm_array *outs[2];
  if (cm_node_new_multi(2, dts, ndims, shapes, &cm_prim_qrf, NULL, 0, &a, 1, s, outs)) return -1;
  *q = outs[0], *r = outs[1];
  return 0;
}

/* ---- inverse, Cholesky ----------------------------------------------------- */

static cm_array *inverse(cm_array *a, bool tri, bool upper, cm_stream s) {
  if (check_matrix(a, &s, "[linalg::inv]", false)) return NULL;
  if (!square(a))
    return cm_error(CM_ERR_VALUE, "[linalg::inv] Inverses are only defined for square matrices."),
           NULL;
  cm_inverse_params p = {tri, upper};
  return cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_inverse, &p, sizeof p, &a, 1, s);
}

cm_array *cm_linalg_inv(cm_array *a, cm_stream s) { return inverse(a, false, true, s); }

cm_array *cm_linalg_tri_inv(cm_array *a, bool upper, cm_stream s) {
  return inverse(a, true, upper, s);
}

cm_array *cm_linalg_cholesky(cm_array *a, bool upper, cm_stream s) {
  if (check_matrix(a, &s, "[linalg::cholesky]", false)) return NULL;
  if (!square(a))
    return cm_error(CM_ERR_VALUE, "[linalg::cholesky] Cholesky decomposition is only defined for "
                                  "square matrices."),
           NULL;
  cm_upper_params p = {upper};
  return cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_cholesky, &p, sizeof p, &a, 1, s);
}

/* ---- eigen decompositions ------------------------------------------------ */

static int check_eig(cm_array *a, cm_stream *s, const char *fn) {
  if (check_matrix(a, s, fn, true)) return -1;
  if (!square(a)) return cm_error(CM_ERR_VALUE, "%s Only defined for square matrices.", fn);
  return 0;
}

/* values (and vectors) of an eig or eigh node */
static int eig_node(cm_array *a, const cm_prim *prim, const void *p, size_t ps, bool vec,
                    cm_dtype wt, cm_dtype vt, cm_array **w, cm_array **v, cm_stream s) {
  if (!vec) {
    *w = cm_op_node(wt, a->ndim - 1, a->shape, prim, p, ps, &a, 1, s);
    return *w ? 0 : -1;
  }
  const cm_dtype dts[2] = {wt, vt};
  const int ndims[2] = {a->ndim - 1, a->ndim};
  const int32_t *shapes[2] = {a->shape, a->shape};
  cm_array *outs[2];
  if (cm_node_new_multi(2, dts, ndims, shapes, prim, p, ps, &a, 1, s, outs)) return -1;
  *w = outs[0], *v = outs[1];
  return 0;
}

int cm_linalg_eig(cm_array *a, cm_array **w, cm_array **v, cm_stream s) {
  *w = *v = NULL;
  if (check_eig(a, &s, "[linalg::eig]")) return -1;
  cm_eig_params p = {1};
  return eig_node(a, &cm_prim_eig, &p, sizeof p, true, CM_COMPLEX64, CM_COMPLEX64, w, v, s);
}

cm_array *cm_linalg_eigvals(cm_array *a, cm_stream s) {
  if (check_eig(a, &s, "[linalg::eigvals]")) return NULL;
  cm_eig_params p = {0};
  cm_array *w = NULL;
  eig_node(a, &cm_prim_eig, &p, sizeof p, false, CM_COMPLEX64, CM_COMPLEX64, &w, NULL, s);
  return w;
}

static int eigh(cm_array *a, const char *uplo, bool vec, cm_array **w, cm_array **v, cm_stream s,
                const char *fn) {
  if (check_eig(a, &s, fn)) return -1;
  cm_eigh_params p = {vec, !uplo || uplo[0] != 'L'};
  cm_dtype wt = a->dtype == CM_COMPLEX64 ? CM_FLOAT32 : a->dtype;
  return eig_node(a, &cm_prim_eigh, &p, sizeof p, vec, wt, a->dtype, w, v, s);
}

int cm_linalg_eigh(cm_array *a, const char *uplo, cm_array **w, cm_array **v, cm_stream s) {
  *w = *v = NULL;
  return eigh(a, uplo, true, w, v, s, "[linalg::eigh]");
}

cm_array *cm_linalg_eigvalsh(cm_array *a, const char *uplo, cm_stream s) {
  cm_array *w = NULL;
  eigh(a, uplo, false, &w, NULL, s, "[linalg::eigvalsh]");
  return w;
}

/* ---- LU ------------------------------------------------------------------ */

/* LU, pivots, row order: the LUF node */
static int luf(cm_array *a, cm_array **outs, cm_stream s, const char *fn) {
  outs[0] = outs[1] = outs[2] = NULL;
  if (check_matrix(a, &s, fn, false)) return -1;
  int nd = a->ndim;
  int32_t m = a->shape[nd - 2], n = a->shape[nd - 1];
  int32_t ps[CM_MAX_DIMS];
  memcpy(ps, a->shape, sizeof(int32_t) * nd);
  ps[nd - 2] = m < n ? m : n;
  const cm_dtype dts[3] = {a->dtype, CM_UINT32, CM_UINT32};
  const int ndims[3] = {nd, nd - 1, nd - 1};
  const int32_t *shapes[3] = {a->shape, ps, a->shape};
  return cm_node_new_multi(3, dts, ndims, shapes, &cm_prim_luf, NULL, 0, &a, 1, s, outs);
}

int cm_linalg_luf(cm_array *a, cm_array **outs, cm_stream s) {
  return luf(a, outs, s, "[linalg::lu_factor]");
}

int cm_linalg_lu_factor(cm_array *a, cm_array **lu, cm_array **pivots, cm_stream s) {
  cm_array *outs[3];
  *lu = *pivots = NULL;
  if (luf(a, outs, s, "[linalg::lu_factor]")) return -1;
  *lu = outs[0], *pivots = outs[1];
  cm_release(outs[2]);
  return 0;
}

int cm_linalg_lu(cm_array *a, cm_array **res, cm_stream s) {
  cm_array *outs[3];
  res[0] = res[1] = res[2] = NULL;
  if (luf(a, outs, s, "[linalg::lu]")) return -1;
  cm_stream cs = s;
  cm_op_stream(&cs);
  int nd = a->ndim;
  int32_t M = a->shape[nd - 2], N = a->shape[nd - 1], K = M < N ? M : N;
  cm_rt t = {.n = 0};
  for (int i = 0; i < 3; i++) RT(&t, outs[i]);
  cm_array *L = RT(&t, cm_tril(outs[0], -1, cs)), *U = RT(&t, cm_triu(outs[0], 0, cs));
  int32_t start[CM_MAX_DIMS] = {0}, stop[CM_MAX_DIMS];
  memcpy(stop, a->shape, sizeof(int32_t) * nd);
  if (N != K) {
    stop[nd - 1] = K;
    L = RT(&t, cm_slice(L, nd, start, nd, stop, 0, NULL, cs));
  } else if (M != K) {
    stop[nd - 2] = K;
    U = RT(&t, cm_slice(U, nd, start, nd, stop, 0, NULL, cs));
  }
  cm_array *I = RT(&t, cm_eye(M, K, 0, a->dtype, cs));
  cm_array *L1 = RT(&t, cm_add(L, I, cs));
  if (t.fail) return cm_linalg_rt_end(&t);
  res[0] = cm_retain(outs[2]);
  res[1] = cm_retain(L1);
  res[2] = cm_retain(U);
  return cm_linalg_rt_end(&t);
}

/* ---- solve --------------------------------------------------------------- */

static int check_solve(cm_array *a, cm_array *b, cm_stream *s, const char *fn) {
  if (cm_linalg_check_cpu(s, fn)) return -1;
  char sa[96], sb[96];
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "%s First input must have >= 2 dimensions. Received array with %d "
                    "dimensions.",
                    fn, a->ndim);
  if (b->ndim < 1)
    return cm_error(CM_ERR_VALUE,
                    "%s Second input must have >= 1 dimensions. Received array with %d "
                    "dimensions.",
                    fn, b->ndim);
  cm_shape_str(sa, sizeof sa, a->ndim, a->shape);
  cm_shape_str(sb, sizeof sb, b->ndim, b->shape);
  if (!square(a))
    return cm_error(CM_ERR_VALUE,
                    "%s First input must be a square matrix. Received array with shape %s.", fn,
                    sa);
  int last = b->ndim > 1 ? b->ndim - 2 : b->ndim - 1;
  if (a->shape[a->ndim - 1] != b->shape[last])
    return cm_error(CM_ERR_VALUE,
                    "%s Last dimension of first input with shape %s must match second to last "
                    "dimension of second input with shape %s.",
                    fn, sa, sb);
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (t != CM_FLOAT32 && t != CM_FLOAT64)
    return cm_error(CM_ERR_VALUE,
                    "%s Input arrays must promote to float32 or float64.  Received arrays with "
                    "type %s and %s.",
                    fn, cm_dtype_name(a->dtype), cm_dtype_name(b->dtype));
  return 0;
}

cm_array *cm_linalg_solve(cm_array *a, cm_array *b, cm_stream s) {
  /* MLX factors a as it is (lu), so a itself must be float */
  if (check_solve(a, b, &s, "[linalg::solve]") ||
      cm_linalg_check_float(a->dtype, "[linalg::lu]", false))
    return NULL;
  cm_dtype dt = cm_promote_types(a->dtype, b->dtype);
  int m1 = -1;
  bool vec = b->ndim == 1;
  cm_rt t = {.n = 0};
  cm_array *A = RT(&t, cm_astype(a, dt, s)), *B = RT(&t, cm_astype(b, dt, s));
  if (vec) B = RT(&t, cm_expand_dims(B, 1, &m1, s));
  if (t.fail) return cm_linalg_rt_end(&t), NULL;
  /* broadcast the batches */
  int nb;
  int32_t batch[CM_MAX_DIMS], sa[CM_MAX_DIMS], sb[CM_MAX_DIMS];
  if (cm_broadcast_shapes(A->ndim - 2, A->shape, B->ndim - 2, B->shape, &nb, batch))
    return cm_linalg_rt_end(&t), NULL;
  memcpy(sa, batch, sizeof(int32_t) * nb);
  memcpy(sb, batch, sizeof(int32_t) * nb);
  sa[nb] = sa[nb + 1] = A->shape[A->ndim - 1];
  sb[nb] = B->shape[B->ndim - 2];
  sb[nb + 1] = B->shape[B->ndim - 1];
  A = RT(&t, cm_broadcast_to(A, nb + 2, sa, s));
  B = RT(&t, cm_broadcast_to(B, nb + 2, sb, s));
  cm_array *in[2] = {A, B};
  cm_array *x =
      t.fail ? NULL : RT(&t, cm_op_node(dt, nb + 2, sb, &cm_prim_solve, NULL, 0, in, 2, s));
  if (vec) x = RT(&t, cm_squeeze(x, 1, &m1, s));
  cm_array *r;
  cm_rt_done(&t, x, &r);
  return r;
}

cm_array *cm_linalg_solve_triangular(cm_array *a, cm_array *b, bool upper, cm_stream s) {
  if (check_solve(a, b, &s, "[linalg::solve_triangular]")) return NULL;
  cm_rt t = {.n = 0};
  cm_array *ai = RT(&t, cm_linalg_tri_inv(a, upper, s));
  cm_array *r;
  cm_rt_done(&t, RT(&t, cm_matmul(ai, b, s)), &r);
  return r;
}
