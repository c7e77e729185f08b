/* C API: arange, linspace, eye, identity, tri, full/zeros/ones.  Expected
 * printed forms are MLX 0.32's unless a comment says otherwise. */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

static void test_arange(void) {
  EXPECT(mlx_arange(&r_, 0, 5, 1, MLX_INT32, S), "array([0, 1, 2, 3, 4], dtype=int32)");
  EXPECT(mlx_arange(&r_, 0, 1, 0.3, MLX_FLOAT32, S), "array([0, 0.3, 0.6, 0.9], dtype=float32)");
  EXPECT(mlx_arange(&r_, 5, 0, -1, MLX_INT32, S), "array([5, 4, 3, 2, 1], dtype=int32)");
  EXPECT(mlx_arange(&r_, 5, 0, 1, MLX_INT32, S), "array([], dtype=int32)");
  EXPECT(mlx_arange(&r_, 0, 5, -1, MLX_INT32, S), "array([], dtype=int32)");
  EXPECT(mlx_arange(&r_, 0, 5, 1.5, MLX_INT32, S), "array([0, 1, 2, 3], dtype=int32)");
  EXPECT(mlx_arange(&r_, 0.5, 5, 1, MLX_INT32, S), "array([0, 1, 2, 3, 4], dtype=int32)");
  /* MLX's integer step is T(start + step) - T(start) */
  EXPECT(mlx_arange(&r_, -0.5, 5, 1, MLX_INT32, S), "array([0, 0, 0, 0, 0, 0], dtype=int32)");
  EXPECT(mlx_arange(&r_, 0, 10, 0.5, MLX_INT32, S), "array([0, 0, 0, ..., 0, 0, 0], dtype=int32)");
  EXPECT(mlx_arange(&r_, 250, 260, 1, MLX_UINT8, S), "array([250, 251, 252, ..., 1, 2, 3], dtype=uint8)");
  EXPECT(mlx_arange(&r_, -3, 0, 1, MLX_UINT32, S), "array([4294967293, 4294967294, 4294967295], dtype=uint32)");
  EXPECT(mlx_arange(&r_, 10, 20, 3, MLX_INT8, S), "array([10, 13, 16, 19], dtype=int8)");
  EXPECT(mlx_arange(&r_, 0, 2.5, 1, MLX_FLOAT32, S), "array([0, 1, 2], dtype=float32)");
  EXPECT(mlx_arange(&r_, 1.0, 0.1, -0.3, MLX_FLOAT32, S), "array([1, 0.7, 0.4], dtype=float32)");
  EXPECT(mlx_arange(&r_, 0, 10, 2.7, MLX_FLOAT16, S), "array([0, 2.69922, 5.39844, 8.09375], dtype=float16)");
  EXPECT(mlx_arange(&r_, 1, 2, 0.1, MLX_FLOAT16, S),
         "array([1, 1.09961, 1.19922, ..., 1.69727, 1.79688, 1.89648], dtype=float16)");
  EXPECT(mlx_arange(&r_, 0, 5, 1, MLX_BFLOAT16, S), "array([0, 1, 2, 3, 4], dtype=bfloat16)");
  EXPECT(mlx_arange(&r_, 0, 3, 1, MLX_COMPLEX64, S), "array([0+0j, 1+0j, 2+0j], dtype=complex64)");
  EXPECT(mlx_arange(&r_, 0, 3, 1, MLX_FLOAT64, S), "array([0, 1, 2], dtype=float64)");
  EXPECT(mlx_arange(&r_, 0, 3, 1, MLX_UINT64, S), "array([0, 1, 2], dtype=uint64)");
  /* an infinite step gives [start] when the range is non-empty */
  EXPECT(mlx_arange(&r_, 0, 5, INFINITY, MLX_FLOAT32, S), "array([0], dtype=float32)");
  EXPECT(mlx_arange(&r_, 5, 0, INFINITY, MLX_FLOAT32, S), "array([], dtype=float32)");
  EXPECT(mlx_arange(&r_, 5, 0, -INFINITY, MLX_INT32, S), "array([5], dtype=int32)");

  /* int64 ranges beyond 2^53 are exact (MLX itself rounds start + step) */
  EXPECT(mlx_arange(&r_, 9007199254740992.0, 9007199254740996.0, 1, MLX_INT64, S),
         "array([9007199254740992, 9007199254740993, 9007199254740994, 9007199254740995], dtype=int64)");
  EXPECT(mlx_arange(&r_, 4611686018427387904.0, 4611686018427387904.0 + 2048, 512, MLX_INT64, S),
         "array([4611686018427387904, 4611686018427388416, 4611686018427388928, 4611686018427389440], "
         "dtype=int64)");

  /* errors */
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_arange(&r, 0, 5, 0, MLX_FLOAT32, S), "[arange] step must be nonzero.");
  CHECK_FAILS(mlx_arange(&r, NAN, 5, 1, MLX_FLOAT32, S), "[arange] Cannot compute length.");
  CHECK_FAILS(mlx_arange(&r, 0, INFINITY, 1, MLX_FLOAT32, S), "[arange] Cannot compute length.");
  CHECK_FAILS(mlx_arange(&r, 0, INFINITY, 0, MLX_FLOAT32, S), "[arange] Cannot compute length.");
  CHECK_FAILS(mlx_arange(&r, 0, 5, NAN, MLX_FLOAT32, S), "[arange] Cannot compute length.");
  CHECK_FAILS(mlx_arange(&r, 0, 5, 1, MLX_BOOL, S), "bool not supported for arange.");
  CHECK_FAILS(mlx_arange(&r, 0, 2147483648.0, 1, MLX_FLOAT32, S), "[arange] Maximum size exceeded.");
  CHECK_FAILS(mlx_arange(&r, 0, 5, 1e-300, MLX_FLOAT32, S), "[arange] Maximum size exceeded.");
  CHECK(r.ctx == NULL); /* untouched by the failures */

  /* large ranges run in parallel chunks; every element must be right */
  CHECK(mlx_arange(&r, 0, 3000000, 1, MLX_INT32, S) == 0);
  const int32_t *pi = mlx_array_data_int32(r);
  int bad = 0;
  for (int i = 0; i < 3000000; i++) bad += pi[i] != i;
  CHECK(bad == 0 && mlx_array_size(r) == 3000000);
  CHECK(mlx_arange(&r, -1, 1000000, 0.5, MLX_FLOAT64, S) == 0); /* replaces r */
  const double *pd = mlx_array_data_float64(r);
  bad = 0;
  for (int i = 0; i < 2000002; i++) bad += pd[i] != -1 + 0.5 * i;
  CHECK(bad == 0 && mlx_array_size(r) == 2000002);
  CHECK(mlx_arange(&r, 0, 1 << 22, 1, MLX_FLOAT32, S) == 0);
  const float *pf = mlx_array_data_float32(r);
  bad = 0;
  for (int i = 0; i < (1 << 22); i++) bad += pf[i] != (float)i;
  CHECK(bad == 0);
  mlx_array_free(r);
}

static void test_linspace(void) {
  EXPECT(mlx_linspace(&r_, 0, 1, 5, MLX_FLOAT32, S), "array([0, 0.25, 0.5, 0.75, 1], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 0, 1, 0, MLX_FLOAT32, S), "array([], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 0, 1, 1, MLX_FLOAT32, S), "array([0], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 1, 0, 4, MLX_FLOAT32, S), "array([1, 0.666667, 0.333333, 0], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 0, 1, 7, MLX_FLOAT32, S),
         "array([0, 0.166667, 0.333333, ..., 0.666667, 0.833333, 1], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 0, 10, 5, MLX_INT32, S), "array([0, 2, 5, 7, 10], dtype=int32)");
  EXPECT(mlx_linspace(&r_, 0, 9, 4, MLX_INT32, S), "array([0, 3, 6, 9], dtype=int32)");
  EXPECT(mlx_linspace(&r_, -1, 1, 4, MLX_INT32, S), "array([-1, 0, 0, 1], dtype=int32)");
  EXPECT(mlx_linspace(&r_, 0, 1, 3, MLX_BOOL, S), "array([False, True, True], dtype=bool)");
  EXPECT(mlx_linspace(&r_, 0, 1, 3, MLX_COMPLEX64, S), "array([0+0j, 0.5+0j, 1+0j], dtype=complex64)");
  EXPECT(mlx_linspace(&r_, 0, 1, 3, MLX_FLOAT16, S), "array([0, 0.5, 1], dtype=float16)");
  EXPECT(mlx_linspace(&r_, 0, 0.3, 4, MLX_FLOAT32, S), "array([0, 0.1, 0.2, 0.3], dtype=float32)");
  EXPECT(mlx_linspace(&r_, 3, 3, 3, MLX_FLOAT32, S), "array([3, 3, 3], dtype=float32)");
  /* integer outputs are computed in double, so large int64 spans stay exact */
  EXPECT(mlx_linspace(&r_, 1099511627776.0, 1099511627784.0, 5, MLX_INT64, S),
         "array([1099511627776, 1099511627778, 1099511627780, 1099511627782, 1099511627784], dtype=int64)");

  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_linspace(&r, 0, 1, -1, MLX_FLOAT32, S), "[linspace] number of samples, -1, must be non-negative.");
  /* both endpoints are exact */
  CHECK(mlx_linspace(&r, 0.1, 0.7, 1000, MLX_FLOAT64, S) == 0);
  const double *d = mlx_array_data_float64(r);
  CHECK(d[0] == 0.1 && d[999] == 0.7);
  CHECK_CLOSE(d[500], 0.1 + 500 * (0.6 / 999), 1e-15);
  CHECK(mlx_linspace(&r, -3.3, 7.7, 100001, MLX_FLOAT32, S) == 0);
  const float *f = mlx_array_data_float32(r);
  CHECK(f[0] == -3.3f && f[100000] == 7.7f);
  mlx_array_free(r);
}

static void test_eye_tri(void) {
  EXPECT(mlx_eye(&r_, 3, 3, 0, MLX_FLOAT32, S),
         "array([[1, 0, 0],\n       [0, 1, 0],\n       [0, 0, 1]], dtype=float32)");
  EXPECT(mlx_eye(&r_, 2, 3, 0, MLX_FLOAT32, S), "array([[1, 0, 0],\n       [0, 1, 0]], dtype=float32)");
  EXPECT(mlx_eye(&r_, 3, 2, 1, MLX_FLOAT32, S), "array([[0, 1],\n       [0, 0],\n       [0, 0]], dtype=float32)");
  EXPECT(mlx_eye(&r_, 3, 3, -1, MLX_FLOAT32, S),
         "array([[0, 0, 0],\n       [1, 0, 0],\n       [0, 1, 0]], dtype=float32)");
  EXPECT(mlx_eye(&r_, 3, 3, 5, MLX_FLOAT32, S),
         "array([[0, 0, 0],\n       [0, 0, 0],\n       [0, 0, 0]], dtype=float32)");
  EXPECT(mlx_eye(&r_, 3, 3, -5, MLX_INT32, S), "array([[0, 0, 0],\n       [0, 0, 0],\n       [0, 0, 0]], dtype=int32)");
  EXPECT(mlx_eye(&r_, 0, 0, 0, MLX_FLOAT32, S), "array([], dtype=float32)");
  EXPECT(mlx_eye(&r_, 3, 0, 0, MLX_FLOAT32, S), "array([[],\n       [],\n       []], dtype=float32)");
  EXPECT(mlx_eye(&r_, 2, 2, 0, MLX_BOOL, S), "array([[True, False],\n       [False, True]], dtype=bool)");
  EXPECT(mlx_eye(&r_, 2, 2, 0, MLX_COMPLEX64, S), "array([[1+0j, 0+0j],\n       [0+0j, 1+0j]], dtype=complex64)");
  EXPECT(mlx_identity(&r_, 2, MLX_FLOAT16, S), "array([[1, 0],\n       [0, 1]], dtype=float16)");
  EXPECT(mlx_identity(&r_, 2, MLX_BFLOAT16, S), "array([[1, 0],\n       [0, 1]], dtype=bfloat16)");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_eye(&r, -1, 3, 0, MLX_FLOAT32, S), "[eye] N and M must be positive integers.");
  CHECK_FAILS(mlx_identity(&r, -2, MLX_FLOAT32, S), "[eye] N and M must be positive integers.");

  EXPECT(mlx_tri(&r_, 3, 3, 0, MLX_FLOAT32, S),
         "array([[1, 0, 0],\n       [1, 1, 0],\n       [1, 1, 1]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 4, 0, MLX_FLOAT32, S),
         "array([[1, 0, 0, 0],\n       [1, 1, 0, 0],\n       [1, 1, 1, 0]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 4, 1, MLX_FLOAT32, S),
         "array([[1, 1, 0, 0],\n       [1, 1, 1, 0],\n       [1, 1, 1, 1]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 3, -1, MLX_FLOAT32, S),
         "array([[0, 0, 0],\n       [1, 0, 0],\n       [1, 1, 0]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 3, 10, MLX_FLOAT32, S),
         "array([[1, 1, 1],\n       [1, 1, 1],\n       [1, 1, 1]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 3, -10, MLX_FLOAT32, S),
         "array([[0, 0, 0],\n       [0, 0, 0],\n       [0, 0, 0]], dtype=float32)");
  EXPECT(mlx_tri(&r_, 2, 2, 0, MLX_INT32, S), "array([[1, 0],\n       [1, 1]], dtype=int32)");
  EXPECT(mlx_tri(&r_, 2, 2, 0, MLX_BOOL, S), "array([[True, False],\n       [True, True]], dtype=bool)");
  EXPECT(mlx_tri(&r_, 0, 0, 0, MLX_FLOAT32, S), "array([], dtype=float32)");
  EXPECT(mlx_tri(&r_, -1, -1, 0, MLX_FLOAT32, S), "array([], dtype=float32)");
  EXPECT(mlx_tri(&r_, 3, 0, 0, MLX_FLOAT32, S), "array([[],\n       [],\n       []], dtype=float32)");

  /* a big eye: ones exactly on the diagonal */
  CHECK(mlx_eye(&r, 1000, 1200, 3, MLX_FLOAT32, S) == 0);
  CHECK(mlx_array_shape(r)[0] == 1000 && mlx_array_shape(r)[1] == 1200);
  const float *e = mlx_array_data_float32(r);
  int bad = 0;
  for (int i = 0; i < 1000; i++)
    for (int j = 0; j < 1200; j++) bad += e[i * 1200 + j] != (j - i == 3 ? 1.0f : 0.0f);
  CHECK(bad == 0);
  CHECK(mlx_tri(&r, 700, 500, -2, MLX_INT16, S) == 0);
  const int16_t *t = mlx_array_data_int16(r);
  bad = 0;
  for (int i = 0; i < 700; i++)
    for (int j = 0; j < 500; j++) bad += t[i * 500 + j] != (j <= i - 2);
  CHECK(bad == 0);
  mlx_array_free(r);
}

static void test_full(void) {
  int shape[2] = {2, 3};
  EXPECT(mlx_zeros(&r_, shape, 2, MLX_INT32, S), "array([[0, 0, 0],\n       [0, 0, 0]], dtype=int32)");
  EXPECT(mlx_ones(&r_, shape, 1, MLX_FLOAT32, S), "array([1, 1], dtype=float32)");
  mlx_array v = mlx_array_new_float(2.5f);
  EXPECT(mlx_full(&r_, shape, 2, v, MLX_FLOAT32, S), "array([[2.5, 2.5, 2.5],\n       [2.5, 2.5, 2.5]], dtype=float32)");
  EXPECT(mlx_full(&r_, shape, 2, v, MLX_INT32, S), "array([[2, 2, 2],\n       [2, 2, 2]], dtype=int32)");
  float row[3] = {1, 2, 3};
  int n3[1] = {3};
  mlx_array rv = mlx_array_new_data(row, n3, 1, MLX_FLOAT32);
  EXPECT(mlx_full(&r_, shape, 2, rv, MLX_FLOAT32, S), "array([[1, 2, 3],\n       [1, 2, 3]], dtype=float32)");
  EXPECT(mlx_zeros_like(&r_, rv, S), "array([0, 0, 0], dtype=float32)");
  EXPECT(mlx_ones_like(&r_, rv, S), "array([1, 1, 1], dtype=float32)");
  EXPECT(mlx_full_like(&r_, rv, v, MLX_FLOAT64, S), "array([2.5, 2.5, 2.5], dtype=float64)");
  mlx_array r = mlx_array_new();
  int bad_shape[2] = {2, 4};
  CHECK_FAILS(mlx_full(&r, bad_shape, 2, rv, MLX_FLOAT32, S), "[broadcast_shapes] Shapes (3) and (2,4) cannot be broadcast.");
  int neg[1] = {-1};
  CHECK_FAILS(mlx_zeros(&r, neg, 1, MLX_FLOAT32, S), "[full] Negative dimensions not allowed.");
  CHECK_FAILS(mlx_zeros(&r, shape, 2, (mlx_dtype)77, S), "Invalid dtype");
  CHECK_FAILS(mlx_full(&r, shape, 2, mlx_array_new(), MLX_FLOAT32, S), "non-empty");
  mlx_array_free(v);
  mlx_array_free(rv);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_arange();
  test_linspace();
  test_eye_tri();
  test_full();
  /* an empty stream is no stream, as in mlx-c */
  mlx_stream empty = mlx_stream_new();
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_arange(&r, 0, 3, 1, MLX_INT32, empty), "expected a non-empty mlx_stream");
  CHECK(r.ctx == NULL);
  mlx_array_free(r);
  mlx_stream_free(S);
  return t_finish();
}
