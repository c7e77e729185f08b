/* C API: sorting and selection (sort, argsort, partition, argpartition,
 * topk), cumulative scans (cumsum, cumprod, cummax, cummin,
 * logcumsumexp) and matrix products (matmul, addmm), with their errors.
 * Expected values and printed forms are MLX 0.32's. */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

static mlx_array mat_f32(const float *v, int rows, int cols) {
  int shape[2] = {rows, cols};
  return mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
}

static void test_sort(void) {
  float v[8] = {3, 1, NAN, 2, 0, -1, 5, -INFINITY};
  mlx_array a = mat_f32(v, 2, 4);
  EXPECT(mlx_sort_axis(&r_, a, -1, S), "array([[1, 2, 3, nan],\n       [-inf, -1, 0, 5]], dtype=float32)");
  EXPECT(mlx_argsort_axis(&r_, a, -1, S), "array([[1, 3, 0, 2],\n       [3, 1, 0, 2]], dtype=uint32)");
  EXPECT(mlx_argsort_axis(&r_, a, 0, S), "array([[1, 1, 1, 1],\n       [0, 0, 0, 0]], dtype=uint32)");
  /* flattened (axis=None): check through the data */
  mlx_array r = mlx_array_new();
  CHECK(mlx_sort(&r, a, S) == 0 && mlx_array_eval(r) == 0);
  CHECK(mlx_array_ndim(r) == 1 && mlx_array_size(r) == 8);
  const float *d = mlx_array_data_float32(r);
  float want[7] = {-INFINITY, -1, 0, 1, 2, 3, 5};
  for (int i = 0; i < 7; i++) CHECK(d && d[i] == want[i]);
  CHECK(d && isnan(d[7]));
  CHECK(mlx_argsort(&r, a, S) == 0 && mlx_array_eval(r) == 0);
  CHECK(mlx_array_dtype(r) == MLX_UINT32);
  const uint32_t *ix = mlx_array_data_uint32(r);
  uint32_t want_ix[8] = {7, 5, 4, 1, 3, 0, 6, 2};
  for (int i = 0; i < 8; i++) CHECK(ix && ix[i] == want_ix[i]);

  /* stable: equal keys keep their order, -0.0 equals 0.0 */
  float z[4] = {0.0f, -0.0f, 0.0f, -0.0f};
  int s4[1] = {4};
  mlx_array zz = mlx_array_new_data(z, s4, 1, MLX_FLOAT32);
  EXPECT(mlx_argsort(&r_, zz, S), "array([0, 1, 2, 3], dtype=uint32)");

  /* a transposed view sorts like its copy */
  mlx_array t = mlx_array_new();
  CHECK(mlx_transpose(&t, a, S) == 0);
  EXPECT(mlx_sort_axis(&r_, t, 0, S), "array([[1, -inf],\n       [2, -1],\n       [3, 0],\n       [nan, 5]], dtype=float32)");

  CHECK_FAILS(mlx_sort_axis(&r, a, 2, S), "[sort] Axis 2 is out of bounds for array with 2 dimensions.");
  mlx_array s0 = mlx_array_new_float(3.0f);
  CHECK_FAILS(mlx_argsort_axis(&r, s0, -1, S), "[argsort] Axis -1 is out of bounds for array with 0 dimensions.");
  EXPECT(mlx_sort(&r_, s0, S), "array([3], dtype=float32)");
  mlx_array_free(s0);
  mlx_array_free(t);
  mlx_array_free(zz);
  mlx_array_free(r);
  mlx_array_free(a);
}

static void test_partition(void) {
  int32_t v[7] = {5, 3, 1, 4, 2, 9, 0};
  mlx_array a = vec_i32(v, 7), r = mlx_array_new();
  /* the value at kth is exact; the sides hold the smaller / larger ones */
  CHECK(mlx_partition(&r, a, 3, S) == 0 && mlx_array_eval(r) == 0);
  const int32_t *p = mlx_array_data_int32(r);
  CHECK(p && p[3] == 3);
  for (int i = 0; p && i < 7; i++) CHECK(i < 3 ? p[i] < 3 : i > 3 ? p[i] > 3 : 1);
  CHECK(mlx_argpartition_axis(&r, a, -2, 0, S) == 0 && mlx_array_eval(r) == 0);
  const uint32_t *ip = mlx_array_data_uint32(r);
  CHECK(ip && ip[5] == 0); /* the second largest, 5, sits at index 0 */
  /* topk: the k largest, in any order */
  CHECK(mlx_topk(&r, a, 3, S) == 0 && mlx_array_eval(r) == 0);
  CHECK(mlx_array_size(r) == 3);
  const int32_t *tk = mlx_array_data_int32(r);
  int sum = 0;
  for (int i = 0; tk && i < 3; i++) sum += tk[i];
  CHECK(sum == 5 + 4 + 9);
  EXPECT(mlx_topk(&r_, a, 0, S), "array([], dtype=int32)");
  CHECK_FAILS(mlx_partition(&r, a, 7, S), "[partition] Received invalid kth 7along axis 0 for array with shape: (7)");
  CHECK_FAILS(mlx_argpartition_axis(&r, a, -8, -1, S),
              "[argpartition] Received invalid kth -8 along axis -1 for array with shape: (7)");
  CHECK_FAILS(mlx_topk_axis(&r, a, 8, -1, S), "[topk] Received invalid k=8 along axis -1 for array with shape: (7)");
  CHECK_FAILS(mlx_topk_axis(&r, a, 1, 1, S), "[topk] Axis 1 is out of bounds for array with 1 dimensions.");
  mlx_array_free(r);
  mlx_array_free(a);
}

static void test_scans(void) {
  int32_t v[6] = {1, 2, 3, 4, 5, 6};
  int s23[2] = {2, 3};
  mlx_array x = mlx_array_new_data(v, s23, 2, MLX_INT32);
  EXPECT(mlx_cumsum(&r_, x, 1, false, true, S), "array([[1, 3, 6],\n       [4, 9, 15]], dtype=int32)");
  EXPECT(mlx_cumsum(&r_, x, 0, true, true, S), "array([[5, 7, 9],\n       [4, 5, 6]], dtype=int32)");
  EXPECT(mlx_cumprod(&r_, x, 1, false, false, S), "array([[1, 1, 2],\n       [1, 4, 20]], dtype=int32)");
  int32_t m[5] = {1, 3, 2, 5, 4}, n[5] = {3, 1, 2, 0, 4};
  mlx_array mx_ = vec_i32(m, 5), mn = vec_i32(n, 5);
  EXPECT(mlx_cummax(&r_, mx_, 0, true, true, S), "array([5, 5, 5, 5, 4], dtype=int32)");
  EXPECT(mlx_cummin(&r_, mn, 0, false, false, S), "array([2147483647, 3, 1, 1, 0], dtype=int32)");
  float zeros[4] = {0, 0, 0, 0};
  int s4[1] = {4};
  mlx_array z = mlx_array_new_data(zeros, s4, 1, MLX_FLOAT32);
  EXPECT(mlx_logcumsumexp(&r_, z, 0, false, true, S), "array([0, 0.693147, 1.09861, 1.38629], dtype=float32)");
  bool bv[3] = {true, true, false};
  int s3[1] = {3};
  mlx_array b = mlx_array_new_data(bv, s3, 1, MLX_BOOL);
  EXPECT(mlx_cumsum(&r_, b, 0, false, true, S), "array([1, 2, 2], dtype=int32)");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_cumsum(&r, x, 2, false, true, S), "[cumsum] Axis 2 is out of bounds for array with 2 dimensions.");
  CHECK_FAILS(mlx_logcumsumexp(&r, x, -3, false, true, S),
              "[logcumsumexp] Axis -3 is out of bounds for array with 2 dimensions.");
  mlx_array_free(r);
  mlx_array_free(b);
  mlx_array_free(z);
  mlx_array_free(mn);
  mlx_array_free(mx_);
  mlx_array_free(x);
}

static void test_matmul(void) {
  float v[6] = {1, 2, 3, 4, 5, 6};
  mlx_array m = mat_f32(v, 2, 3), t = mlx_array_new();
  CHECK(mlx_transpose(&t, m, S) == 0); /* a transposed view: BLAS reads it in place */
  EXPECT(mlx_matmul(&r_, m, t, S), "array([[14, 32],\n       [32, 77]], dtype=float32)");
  EXPECT(mlx_matmul(&r_, t, m, S),
         "array([[17, 22, 27],\n       [22, 29, 36],\n       [27, 36, 45]], dtype=float32)");
  float w[3] = {1, 2, 3};
  int s3[1] = {3};
  mlx_array u = mlx_array_new_data(w, s3, 1, MLX_FLOAT32);
  EXPECT(mlx_matmul(&r_, u, t, S), "array([14, 32], dtype=float32)");
  EXPECT(mlx_matmul(&r_, u, u, S), "array(14, dtype=float32)");
  float ones2[2] = {1, 1}, ones3[3] = {1, 1, 1};
  int s2[1] = {2};
  mlx_array c = mlx_array_new_data(ones2, s2, 1, MLX_FLOAT32);
  mlx_array o3 = mlx_array_new_data(ones3, s3, 1, MLX_FLOAT32);
  EXPECT(mlx_addmm(&r_, c, m, o3, 2.0f, 0.5f, S), "array([12.5, 30.5], dtype=float32)");

  /* batch broadcasting: (2,1,3,4) @ (5,4,2) -> (2,5,3,2) */
  int sa[4] = {2, 1, 3, 4}, sb[3] = {5, 4, 2};
  mlx_array A = mlx_array_new(), B = mlx_array_new(), r = mlx_array_new();
  CHECK(mlx_ones(&A, sa, 4, MLX_FLOAT32, S) == 0 && mlx_ones(&B, sb, 3, MLX_FLOAT32, S) == 0);
  CHECK(mlx_matmul(&r, A, B, S) == 0 && mlx_array_eval(r) == 0);
  CHECK(mlx_array_ndim(r) == 4 && mlx_array_dim(r, 0) == 2 && mlx_array_dim(r, 1) == 5 &&
        mlx_array_dim(r, 2) == 3 && mlx_array_dim(r, 3) == 2);
  const float *d = mlx_array_data_float32(r);
  CHECK(d && d[0] == 4.0f && d[59] == 4.0f);

  CHECK_FAILS(mlx_matmul(&r, m, m, S),
              "[matmul] Last dimension of first input with shape (2,3) must match second to last "
              "dimension of second input with shape (2,3).");
  mlx_array s0 = mlx_array_new_float(1.0f);
  CHECK_FAILS(mlx_matmul(&r, s0, u, S), "[matmul] Got 0 dimension input. Inputs must have at least one dimension.");
  int32_t iv[4] = {1, 2, 3, 4};
  int s22[2] = {2, 2};
  mlx_array im = mlx_array_new_data(iv, s22, 2, MLX_INT32);
  CHECK_FAILS(mlx_matmul(&r, im, im, S),
              "[matmul] Only inexact types are supported but int32 and int32 were provided which "
              "results in int32, which is not a floating point type.");
  CHECK_FAILS(mlx_addmm(&r, im, im, im, 1.0f, 1.0f, S),
              "[addmm] Only real floating point types are supported but int32, int32 and int32 "
              "were provided which results in int32, which is not a real floating point type.");
  mlx_array_free(im);
  mlx_array_free(s0);
  mlx_array_free(r);
  mlx_array_free(B);
  mlx_array_free(A);
  mlx_array_free(o3);
  mlx_array_free(c);
  mlx_array_free(u);
  mlx_array_free(t);
  mlx_array_free(m);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_sort();
  test_partition();
  test_scans();
  test_matmul();
  mlx_stream_free(S);
  return t_finish();
}
