/* mlx/c/linalg.h: linear algebra, adapters over src/ops/linalg.h.  The
 * functions with two results take two result pointers (both checked);
 * lu and svd return an mlx_vector_array. */
#include "ops/linalg.h"
#include "capi/capi.h"

/* the prologue of a one-input function */
static int start1(const char *fn, const void *res, mlx_array a, mlx_stream s) {
  return capi_op(fn, res, s) || capi_need(fn, a);
}

static int start2(const char *fn, const void *res, mlx_array a, mlx_array b, mlx_stream s) {
  return start1(fn, res, a, s) || capi_need(fn, b);
}

/* two results of a core call that returned rc */
static int set2(int rc, mlx_array *r0, mlx_array *r1, cm_array *x, cm_array *y) {
  if (rc) return capi_fail();
  if (capi_set(r0, x)) {
    cm_release(y);
    return 1;
  }
  return capi_set(r1, y);
}

static int set_vector(int rc, mlx_vector_array *res, cm_array **outs, int n) {
  if (rc) return capi_fail();
  int r = capi_vector_set_arrays(res, outs, (size_t)n);
  for (int i = 0; i < n; i++) cm_release(outs[i]);
  return r;
}

int mlx_linalg_cholesky(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s) {
  if (start1("linalg_cholesky", res, a, s)) return 1;
  return capi_set(res, cm_linalg_cholesky(capi_arr(a), upper, capi_stream(s)));
}

int mlx_linalg_cholesky_inv(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s) {
  if (start1("linalg_cholesky_inv", res, a, s)) return 1;
  return capi_set(res, cm_linalg_cholesky_inv(capi_arr(a), upper, capi_stream(s)));
}

int mlx_linalg_cross(mlx_array *res, const mlx_array a, const mlx_array b, int axis,
                     const mlx_stream s) {
  if (start2("linalg_cross", res, a, b, s)) return 1;
  return capi_set(res, cm_linalg_cross(capi_arr(a), capi_arr(b), axis, capi_stream(s)));
}

int mlx_linalg_eig(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const mlx_stream s) {
  if (capi_out("linalg_eig", res_1) || start1("linalg_eig", res_0, a, s)) return 1;
  cm_array *w, *v;
  int rc = cm_linalg_eig(capi_arr(a), &w, &v, capi_stream(s));
  return set2(rc, res_0, res_1, w, v);
}

int mlx_linalg_eigh(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const char *UPLO,
                    const mlx_stream s) {
  if (capi_out("linalg_eigh", res_1) || start1("linalg_eigh", res_0, a, s)) return 1;
  cm_array *w, *v;
  int rc = cm_linalg_eigh(capi_arr(a), UPLO ? UPLO : "L", &w, &v, capi_stream(s));
  return set2(rc, res_0, res_1, w, v);
}

int mlx_linalg_eigvals(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (start1("linalg_eigvals", res, a, s)) return 1;
  return capi_set(res, cm_linalg_eigvals(capi_arr(a), capi_stream(s)));
}

int mlx_linalg_eigvalsh(mlx_array *res, const mlx_array a, const char *UPLO, const mlx_stream s) {
  if (start1("linalg_eigvalsh", res, a, s)) return 1;
  return capi_set(res, cm_linalg_eigvalsh(capi_arr(a), UPLO ? UPLO : "L", capi_stream(s)));
}

int mlx_linalg_inv(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (start1("linalg_inv", res, a, s)) return 1;
  return capi_set(res, cm_linalg_inv(capi_arr(a), capi_stream(s)));
}

int mlx_linalg_lu(mlx_vector_array *res, const mlx_array a, const mlx_stream s) {
  if (start1("linalg_lu", res, a, s)) return 1;
  cm_array *o[3];
  int rc = cm_linalg_lu(capi_arr(a), o, capi_stream(s));
  return set_vector(rc, res, o, 3);
}

int mlx_linalg_lu_factor(mlx_array *res_0, mlx_array *res_1, const mlx_array a,
                         const mlx_stream s) {
  if (capi_out("linalg_lu_factor", res_1) || start1("linalg_lu_factor", res_0, a, s)) return 1;
  cm_array *lu, *p;
  int rc = cm_linalg_lu_factor(capi_arr(a), &lu, &p, capi_stream(s));
  return set2(rc, res_0, res_1, lu, p);
}

/* axis NULL is MLX's axis=None */
static int norm_axes(const char *fn, const int *axis, size_t axis_num, int *n) {
  if (!axis) {
    *n = -1;
    return 0;
  }
  return capi_list(fn, axis, axis_num, n);
}

int mlx_linalg_norm(mlx_array *res, const mlx_array a, double ord, const int *axis, size_t axis_num,
                    bool keepdims, const mlx_stream s) {
  int n;
  if (start1("linalg_norm", res, a, s) || norm_axes("linalg_norm", axis, axis_num, &n)) return 1;
  return capi_set(res, cm_linalg_norm_ord(capi_arr(a), ord, axis, n, keepdims, capi_stream(s)));
}

int mlx_linalg_norm_matrix(mlx_array *res, const mlx_array a, const char *ord, const int *axis,
                           size_t axis_num, bool keepdims, const mlx_stream s) {
  int n;
  if (start1("linalg_norm_matrix", res, a, s) ||
      norm_axes("linalg_norm_matrix", axis, axis_num, &n))
    return 1;
  if (!ord) return capi_errorf("[linalg_norm_matrix] expected a non-NULL ord string");
  return capi_set(res, cm_linalg_norm_str(capi_arr(a), ord, axis, n, keepdims, capi_stream(s)));
}

int mlx_linalg_norm_l2(mlx_array *res, const mlx_array a, const int *axis, size_t axis_num,
                       bool keepdims, const mlx_stream s) {
  int n;
  if (start1("linalg_norm_l2", res, a, s) || norm_axes("linalg_norm_l2", axis, axis_num, &n))
    return 1;
  return capi_set(res, cm_linalg_norm_l2(capi_arr(a), axis, n, keepdims, capi_stream(s)));
}

int mlx_linalg_pinv(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (start1("linalg_pinv", res, a, s)) return 1;
  return capi_set(res, cm_linalg_pinv(capi_arr(a), capi_stream(s)));
}

int mlx_linalg_qr(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const mlx_stream s) {
  if (capi_out("linalg_qr", res_1) || start1("linalg_qr", res_0, a, s)) return 1;
  cm_array *q, *r;
  int rc = cm_linalg_qr(capi_arr(a), &q, &r, capi_stream(s));
  return set2(rc, res_0, res_1, q, r);
}

int mlx_linalg_solve(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) {
  if (start2("linalg_solve", res, a, b, s)) return 1;
  return capi_set(res, cm_linalg_solve(capi_arr(a), capi_arr(b), capi_stream(s)));
}

int mlx_linalg_solve_triangular(mlx_array *res, const mlx_array a, const mlx_array b, bool upper,
                                const mlx_stream s) {
  if (start2("linalg_solve_triangular", res, a, b, s)) return 1;
  return capi_set(res, cm_linalg_solve_triangular(capi_arr(a), capi_arr(b), upper, capi_stream(s)));
}

int mlx_linalg_svd(mlx_vector_array *res, const mlx_array a, bool compute_uv, const mlx_stream s) {
  if (start1("linalg_svd", res, a, s)) return 1;
  cm_array *o[3];
  int n = 0;
  int rc = cm_linalg_svd_uv(capi_arr(a), compute_uv, o, &n, capi_stream(s));
  return set_vector(rc, res, o, n);
}

int mlx_linalg_tri_inv(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s) {
  if (start1("linalg_tri_inv", res, a, s)) return 1;
  return capi_set(res, cm_linalg_tri_inv(capi_arr(a), upper, capi_stream(s)));
}
