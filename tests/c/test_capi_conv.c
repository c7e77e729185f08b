/* C API: convolutions (conv1d/2d/3d, conv_general, conv_transpose1d/2d/3d)
 * through the public headers, with MLX 0.32's values and errors. */
#include "capi_test.h"

static mlx_stream S;

/* 0, 1, ..., n - 1 in the given shape (float32). */
static mlx_array seq(int n, int ndim, const int *shape) {
  float v[64];
  for (int i = 0; i < n; i++) v[i] = (float)i;
  return mlx_array_new_data(v, shape, ndim, MLX_FLOAT32);
}

static void test_conv1d(void) {
  int sx[3] = {1, 5, 1}, sw[3] = {1, 3, 1};
  float wv[3] = {1, 2, 3};
  mlx_array x = seq(5, 3, sx), w = mlx_array_new_data(wv, sw, 3, MLX_FLOAT32);
  EXPECT(mlx_conv1d(&r_, x, w, 1, 0, 1, 1, S),
         "array([[[8],\n        [14],\n        [20]]], dtype=float32)");
  EXPECT(mlx_conv1d(&r_, x, w, 2, 1, 1, 1, S),
         "array([[[3],\n        [14],\n        [11]]], dtype=float32)");
  EXPECT(
      mlx_conv1d(&r_, x, w, 1, 2, 2, 1, S),
      "array([[[6],\n        [11],\n        [16],\n        [7],\n        [10]]], dtype=float32)");
  /* conv_general: flip, input dilation, asymmetric padding; NULL lists */
  int lo[1] = {1}, hi[1] = {0}, idil[1] = {2};
  EXPECT(mlx_conv_general(&r_, x, w, NULL, 0, lo, 1, hi, 1, NULL, 0, idil, 1, 1, true, S),
         "array([[[0],\n        [1],\n        [2],\n        ...,\n        [9],\n        [6],\n     "
         "   [13]]], dtype=float32)");
  /* transposed: the adjoint of the strided convolution */
  EXPECT(mlx_conv_transpose1d(&r_, x, w, 2, 0, 1, 0, 1, S),
         "array([[[0],\n        [0],\n        [1],\n        ...,\n        [13],\n        [8],\n    "
         "    [12]]], dtype=float32)");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_conv1d(&r, x, w, 0, 0, 1, 1, S),
              "[conv] Stride sizes must be positive. Got strides (0).");
  CHECK_FAILS(mlx_conv1d(&r, x, w, 1, 0, 1, 2, S),
              "[conv] The input channels must be divisible by the number of groups. Got input "
              "with shape (1,5,1) and 2 groups.");
  int st2[2] = {1, 1};
  CHECK_FAILS(mlx_conv_general(&r, x, w, st2, 2, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 1, false, S),
              "[conv] Invalid strides (1,1) for 1D convolution.");
  CHECK_FAILS(mlx_conv_general(&r, x, w, NULL, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 1, false, S),
              "A list argument is NULL");
  int32_t iv[5] = {0, 1, 2, 3, 4};
  mlx_array xi = mlx_array_new_data(iv, sx, 3, MLX_INT32);
  CHECK_FAILS(mlx_conv1d(&r, xi, w, 1, 0, 1, 1, S),
              "[conv] Invalid input array with type int32. Convolution currently only supports "
              "floating point types");
  CHECK(r.ctx == NULL);
  mlx_array_free(xi);
  mlx_array_free(r);
  mlx_array_free(w);
  mlx_array_free(x);
}

static void test_conv2d_3d(void) {
  int sx[4] = {1, 3, 3, 1}, sw[4] = {1, 2, 2, 1};
  mlx_array x = seq(9, 4, sx), w = mlx_array_new(), r = mlx_array_new();
  CHECK(mlx_ones(&w, sw, 4, MLX_FLOAT32, S) == 0);
  EXPECT(mlx_conv2d(&r_, x, w, 1, 1, 0, 0, 1, 1, 1, S),
         "array([[[[8],\n         [12]],\n        [[20],\n         [24]]]], dtype=float32)");
  CHECK(mlx_conv_transpose2d(&r, x, w, 2, 2, 0, 0, 1, 1, 1, 1, 1, S) == 0 &&
        mlx_array_eval(r) == 0);
  CHECK(mlx_array_ndim(r) == 4 && mlx_array_dim(r, 1) == 7 && mlx_array_dim(r, 2) == 7);
  int s3[5] = {1, 2, 2, 2, 1}, w3[5] = {2, 2, 2, 2, 1};
  mlx_array x3 = seq(8, 5, s3), k3 = mlx_array_new();
  CHECK(mlx_ones(&k3, w3, 5, MLX_FLOAT32, S) == 0);
  EXPECT(mlx_conv3d(&r_, x3, k3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, S),
         "array([[[[[28, 28]]]]], dtype=float32)");
  CHECK(mlx_conv_transpose3d(&r, x3, k3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, S) == 0 &&
        mlx_array_eval(r) == 0);
  CHECK(mlx_array_dim(r, 1) == 3 && mlx_array_dim(r, 4) == 2);
  const float *d = mlx_array_data_float32(r);
  CHECK(d && d[0] == 0.0f && d[53] == 7.0f);
  CHECK_FAILS(mlx_conv3d(&r, x3, k3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, S),
              "[conv] Can only handle groups != 1 in 1D or 2D convolutions.");
  mlx_array_free(k3);
  mlx_array_free(x3);
  mlx_array_free(r);
  mlx_array_free(w);
  mlx_array_free(x);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_conv1d();
  test_conv2d_3d();
  mlx_stream_free(S);
  return t_finish();
}
