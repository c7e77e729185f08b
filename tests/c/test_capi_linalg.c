/* C API: mlx/c/linalg.h.  Each function on a small matrix with a known
 * answer (its values checked to float32 precision), the two-result and
 * vector-result forms, the norm variants (axis NULL is axis=None), and
 * MLX's errors through the handler. */
#include <complex.h>

#include "capi_test.h"

static mlx_stream S;

static mlx_array mat(const float *v, int rows, int cols) {
  int shape[2] = {rows, cols};
  return mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
}

/* the float32 array a holds want[0..n) within tol */
static int near(mlx_array a, const float *want, size_t n, float tol) {
  if (mlx_array_eval(a) || mlx_array_size(a) != n || mlx_array_dtype(a) != MLX_FLOAT32) return 0;
  const float *p = mlx_array_data_float32(a);
  for (size_t i = 0; i < n; i++)
    if (fabsf(p[i] - want[i]) > tol) return 0;
  return 1;
}

static const float A[] = {4, 1, 2, 1, 5, 3, 2, 3, 6}; /* symmetric positive definite */

static void test_single_results(void) {
  mlx_array a = mat(A, 3, 3), r = mlx_array_new();
  /* inv(A) = adj(A) / det(A), det(A) = 70 */
  const float inv[] = {21 / 70.f,  0,         -7 / 70.f,  0,        20 / 70.f,
                       -10 / 70.f, -7 / 70.f, -10 / 70.f, 19 / 70.f};
  CHECK(mlx_linalg_inv(&r, a, S) == 0 && near(r, inv, 9, 1e-5f));
  CHECK(mlx_linalg_pinv(&r, a, S) == 0 && near(r, inv, 9, 1e-4f));
  CHECK(mlx_linalg_cholesky(&r, a, false, S) == 0);
  const float l00 = 2, l10 = 0.5f, l20 = 1, l11 = sqrtf(4.75f);
  const float l21 = (3 - l20 * l10) / l11, l22 = sqrtf(6 - l20 * l20 - l21 * l21);
  const float chol[] = {l00, 0, 0, l10, l11, 0, l20, l21, l22};
  CHECK(near(r, chol, 9, 1e-5f));
  mlx_array lo = mlx_array_new();
  CHECK(mlx_linalg_cholesky(&lo, a, false, S) == 0);
  CHECK(mlx_linalg_cholesky_inv(&r, lo, false, S) == 0 && near(r, inv, 9, 1e-5f));
  const float tri[] = {1, 0, 2, 4}, tri_inv[] = {1, 0, -0.5f, 0.25f};
  mlx_array t = mat(tri, 2, 2);
  CHECK(mlx_linalg_tri_inv(&r, t, false, S) == 0 && near(r, tri_inv, 4, 1e-6f));
  const float b[] = {7, 9, 11};
  int bs[1] = {3};
  mlx_array bv = mlx_array_new_data(b, bs, 1, MLX_FLOAT32);
  /* A x = b with x = A^-1 b */
  float x[3];
  for (int i = 0; i < 3; i++) x[i] = inv[3 * i] * 7 + inv[3 * i + 1] * 9 + inv[3 * i + 2] * 11;
  CHECK(mlx_linalg_solve(&r, a, bv, S) == 0 && near(r, x, 3, 1e-5f));
  const float tb[] = {2, 10}, tx[] = {2, 1.5f};
  int ts[1] = {2};
  mlx_array tbv = mlx_array_new_data(tb, ts, 1, MLX_FLOAT32);
  CHECK(mlx_linalg_solve_triangular(&r, t, tbv, false, S) == 0 && near(r, tx, 2, 1e-6f));
  const float c1[] = {1, 0, 0}, c2[] = {0, 1, 0}, c3[] = {0, 0, 1};
  mlx_array e1 = mlx_array_new_data(c1, bs, 1, MLX_FLOAT32);
  mlx_array e2 = mlx_array_new_data(c2, bs, 1, MLX_FLOAT32);
  CHECK(mlx_linalg_cross(&r, e1, e2, -1, S) == 0 && near(r, c3, 3, 0));
  const float w[] = {1.0f, 4.0f}; /* eigenvalues of [[2, 1], [2, 3]]: 1 and 4 */
  const float g[] = {2, 1, 2, 3};
  mlx_array ga = mat(g, 2, 2);
  CHECK(mlx_linalg_eigvalsh(&r, a, "L", S) == 0 && mlx_array_size(r) == 3);
  CHECK(mlx_linalg_eigvals(&r, ga, S) == 0 && mlx_array_dtype(r) == MLX_COMPLEX64);
  CHECK(mlx_array_eval(r) == 0);
  const mlx_complex64_t *ev = mlx_array_data_complex64(r);
  float re0 = crealf(ev[0]), re1 = crealf(ev[1]);
  CHECK(fabsf((re0 < re1 ? re0 : re1) - w[0]) < 1e-5f &&
        fabsf((re0 < re1 ? re1 : re0) - w[1]) < 1e-5f);
  mlx_array_free(a);
  mlx_array_free(r);
  mlx_array_free(lo);
  mlx_array_free(t);
  mlx_array_free(bv);
  mlx_array_free(tbv);
  mlx_array_free(e1);
  mlx_array_free(e2);
  mlx_array_free(ga);
}

static void test_multi_results(void) {
  mlx_array a = mat(A, 3, 3), r0 = mlx_array_new(), r1 = mlx_array_new(), p = mlx_array_new();
  CHECK(mlx_linalg_qr(&r0, &r1, a, S) == 0);
  CHECK(mlx_matmul(&p, r0, r1, S) == 0 && near(p, A, 9, 1e-5f));
  CHECK(mlx_linalg_eigh(&r0, &r1, a, "U", S) == 0);
  CHECK(mlx_array_ndim(r0) == 1 && mlx_array_ndim(r1) == 2);
  CHECK(mlx_linalg_eig(&r0, &r1, a, S) == 0 && mlx_array_dtype(r1) == MLX_COMPLEX64);
  CHECK(mlx_linalg_lu_factor(&r0, &r1, a, S) == 0 && mlx_array_dtype(r1) == MLX_UINT32);
  mlx_vector_array v = mlx_vector_array_new();
  CHECK(mlx_linalg_svd(&v, a, true, S) == 0 && mlx_vector_array_size(v) == 3);
  CHECK(mlx_linalg_svd(&v, a, false, S) == 0 && mlx_vector_array_size(v) == 1);
  CHECK(mlx_linalg_lu(&v, a, S) == 0 && mlx_vector_array_size(v) == 3);
  mlx_array P = mlx_array_new(), Lo = mlx_array_new(), U = mlx_array_new();
  CHECK(mlx_vector_array_get(&P, v, 0) == 0 && mlx_vector_array_get(&Lo, v, 1) == 0 &&
        mlx_vector_array_get(&U, v, 2) == 0);
  CHECK(mlx_array_dtype(P) == MLX_UINT32);
  /* L[P] @ U = A */
  mlx_array lp = mlx_array_new();
  CHECK(mlx_take_axis(&lp, Lo, P, 0, S) == 0 && mlx_matmul(&p, lp, U, S) == 0);
  CHECK(near(p, A, 9, 1e-5f));
  mlx_array_free(a), mlx_array_free(r0), mlx_array_free(r1), mlx_array_free(p);
  mlx_array_free(P), mlx_array_free(Lo), mlx_array_free(U), mlx_array_free(lp);
  mlx_vector_array_free(v);
}

static void test_norms(void) {
  const float v[] = {3, -4, 0, 12};
  mlx_array a = mat(v, 2, 2), r = mlx_array_new();
  const float l2[] = {13}, fro[] = {13}, one[] = {16}, rows[] = {5, 12};
  CHECK(mlx_linalg_norm_l2(&r, a, NULL, 0, false, S) == 0 && near(r, l2, 1, 1e-5f));
  CHECK(mlx_linalg_norm_matrix(&r, a, "fro", NULL, 0, false, S) == 0 && near(r, fro, 1, 1e-5f));
  CHECK(mlx_linalg_norm(&r, a, 1.0, NULL, 0, false, S) == 0 && near(r, one, 1, 0));
  int ax[1] = {1};
  CHECK(mlx_linalg_norm(&r, a, 2.0, ax, 1, false, S) == 0 && near(r, rows, 2, 1e-5f));
  CHECK(mlx_linalg_norm_l2(&r, a, ax, 1, true, S) == 0 && mlx_array_ndim(r) == 2);
  CHECK_FAILS(mlx_linalg_norm(&r, a, 3.0, NULL, 0, false, S), "Invalid ord 3 for matrix norm");
  CHECK_FAILS(mlx_linalg_norm_matrix(&r, a, "fro", ax, 1, false, S), "only supported for matrices");
  mlx_array_free(a);
  mlx_array_free(r);
}

static void test_errors(void) {
  mlx_array r = mlx_array_new(), r1 = mlx_array_new();
  mlx_array iv = mlx_array_new_int(3), vec = mlx_array_new_float(1.0f);
  const int m[] = {1, 2, 3, 4};
  int sh[2] = {2, 2};
  mlx_array im = mlx_array_new_data(m, sh, 2, MLX_INT32);
  CHECK_FAILS(mlx_linalg_inv(&r, im, S),
              "[linalg::inv] Arrays must have type float32 or float64. Received array with type "
              "int32.");
  CHECK_FAILS(mlx_linalg_qr(&r, &r1, vec, S), "[linalg::qr] Arrays must have >= 2 dimensions");
  CHECK_FAILS(mlx_linalg_eigh(&r, &r1, im, "L", S), "float32, float64 or complex64");
  CHECK_FAILS(mlx_linalg_inv(&r, mlx_array_new(), S), "expected a non-empty mlx_array");
  CHECK_FAILS(mlx_linalg_qr(&r, NULL, vec, S), "non-NULL result pointer");
  const float sing[] = {1, 2, 2, 4};
  mlx_array s = mat(sing, 2, 2);
  CHECK(mlx_linalg_inv(&r, s, S) == 0);
  CHECK_FAILS(mlx_array_eval(r), "[Inverse::eval_cpu] LU factorization failed with error code 2");
  mlx_array_free(r), mlx_array_free(r1), mlx_array_free(iv), mlx_array_free(vec);
  mlx_array_free(im), mlx_array_free(s);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_single_results();
  test_multi_results();
  test_norms();
  test_errors();
  mlx_stream_free(S);
  return t_finish();
}
