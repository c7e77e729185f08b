/* C API: quantization (mlx_quantize, mlx_dequantize, mlx_quantized_matmul,
 * mlx_gather_qmm, mlx_qqmm, mlx_to_fp8, mlx_from_fp8), with MLX's
 * defaults for missing optionals and its errors. */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;
static const mlx_optional_int NONE = {0, false};

static mlx_array mat(const float *v, int rows, int cols) {
  int shape[2] = {rows, cols};
  return mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
}

static mlx_array item(mlx_vector_array v, size_t i) {
  mlx_array a = mlx_array_new();
  CHECK(mlx_vector_array_get(&a, v, i) == 0);
  return a;
}

/* max |a - b| over float32 arrays of equal size */
static double max_diff(mlx_array a, mlx_array b) {
  CHECK(mlx_array_eval(a) == 0 && mlx_array_eval(b) == 0);
  const float *p = mlx_array_data_float32(a), *q = mlx_array_data_float32(b);
  double m = 0;
  for (size_t i = 0; p && q && i < mlx_array_size(a); i++)
    m = fmax(m, fabs((double)p[i] - (double)q[i]));
  return (p && q) ? m : 1e30;
}

static void test_quantize_roundtrip(void) {
  float v[4 * 64];
  for (int i = 0; i < 4 * 64; i++) v[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  mlx_array w = mat(v, 4, 64), none = mlx_array_new();
  mlx_vector_array q = mlx_vector_array_new();
  /* defaults: affine, group 64, 4 bits */
  CHECK(mlx_quantize(&q, w, NONE, NONE, NULL, none, S) == 0);
  CHECK(mlx_vector_array_size(q) == 3);
  mlx_array wq = item(q, 0), sc = item(q, 1), bi = item(q, 2);
  CHECK(mlx_array_dtype(wq) == MLX_UINT32 && mlx_array_shape(wq)[1] == 8);
  CHECK(mlx_array_dtype(sc) == MLX_FLOAT32 && mlx_array_shape(sc)[1] == 1);
  mlx_array d = mlx_array_new();
  mlx_optional_dtype nodt = {MLX_FLOAT32, false};
  CHECK(mlx_dequantize(&d, wq, sc, bi, NONE, NONE, "affine", none, nodt, S) == 0);
  CHECK(mlx_array_dtype(d) == MLX_FLOAT32);
  CHECK(max_diff(d, w) <= 2.0 / 15 + 1e-6); /* within a level of a range of 2 */

  /* x @ w.T through the packed weights equals x @ dequantize(w).T */
  float xv[64];
  for (int i = 0; i < 64; i++) xv[i] = (float)(i % 7) - 3.0f;
  mlx_array x = mat(xv, 1, 64), y = mlx_array_new(), dt = mlx_array_new(), ref = mlx_array_new();
  CHECK(mlx_quantized_matmul(&y, x, wq, sc, bi, true, NONE, NONE, "affine", S) == 0);
  CHECK(mlx_transpose(&dt, d, S) == 0 && mlx_matmul(&ref, x, dt, S) == 0);
  CHECK(max_diff(y, ref) < 1e-4);

  /* gather_qmm with rhs indices over a batch of one */
  int one[1] = {1};
  uint32_t zero = 0;
  mlx_array idx = mlx_array_new_data(&zero, one, 1, MLX_UINT32), g = mlx_array_new();
  CHECK(mlx_gather_qmm(&g, x, wq, sc, bi, none, idx, true, NONE, NONE, "affine", false, S) == 0);
  CHECK(mlx_array_ndim(g) == 3 && mlx_array_shape(g)[0] == 1);
  CHECK(max_diff(g, ref) < 1e-4);

  /* fp modes: two outputs, uint8 scales */
  mlx_vector_array f = mlx_vector_array_new();
  CHECK(mlx_quantize(&f, w, NONE, NONE, "mxfp4", none, S) == 0);
  CHECK(mlx_vector_array_size(f) == 2);
  mlx_array fs = item(f, 1), fq = item(f, 0), fd = mlx_array_new(), qq = mlx_array_new();
  CHECK(mlx_array_dtype(fs) == MLX_UINT8);
  mlx_optional_dtype f32 = {MLX_FLOAT32, true};
  CHECK(mlx_dequantize(&fd, fq, fs, none, NONE, NONE, "mxfp4", none, f32, S) == 0);
  CHECK(max_diff(fd, w) < 0.3);
  CHECK(mlx_qqmm(&qq, x, fq, fs, NONE, NONE, "mxfp4", none, none, S) == 0);
  CHECK(mlx_array_eval(qq) == 0 && mlx_array_shape(qq)[1] == 4);

  mlx_array r = mlx_array_new();
  mlx_vector_array rv = mlx_vector_array_new();
  CHECK_FAILS(mlx_quantize(&rv, w, NONE, NONE, "xyz", none, S),
              "[quantize] Invalid quantization mode 'xyz'.");
  mlx_optional_int b7 = {7, true};
  CHECK_FAILS(mlx_quantize(&rv, w, NONE, b7, "affine", none, S),
              "[quantize] The requested number of bits 7 is not supported.");
  CHECK_FAILS(mlx_dequantize(&r, wq, sc, none, NONE, NONE, "affine", none, nodt, S),
              "[dequantize] Biases must be provided for affine quantization.");
  CHECK_FAILS(mlx_quantized_matmul(&r, x, wq, sc, bi, false, NONE, NONE, "affine", S),
              "[quantized_matmul] Last dimension of first input");
  CHECK(mlx_quantized_matmul(&r, x, wq, sc, bi, true, NONE, NONE, NULL, S) == 0); /* affine */
  CHECK(max_diff(r, ref) < 1e-4);
  mlx_array_free(r);
  mlx_vector_array_free(rv);
  mlx_array_free(qq);
  mlx_array_free(fd);
  mlx_array_free(fq);
  mlx_array_free(fs);
  mlx_vector_array_free(f);
  mlx_array_free(g);
  mlx_array_free(idx);
  mlx_array_free(ref);
  mlx_array_free(dt);
  mlx_array_free(y);
  mlx_array_free(x);
  mlx_array_free(d);
  mlx_array_free(bi);
  mlx_array_free(sc);
  mlx_array_free(wq);
  mlx_vector_array_free(q);
  mlx_array_free(none);
  mlx_array_free(w);
}

static void test_fp8(void) {
  float v[6] = {448.0f, 1.0f, -2.0f, 0.001953125f, 1e9f, NAN};
  mlx_array a = vec_f32(v, 6), e = mlx_array_new(), back = mlx_array_new();
  CHECK(mlx_to_fp8(&e, a, S) == 0 && mlx_array_eval(e) == 0);
  CHECK(mlx_array_dtype(e) == MLX_UINT8);
  const uint8_t *c = mlx_array_data_uint8(e);
  uint8_t want[6] = {0x7E, 0x38, 0xC0, 0x01, 0x7E, 0x7E};
  for (int i = 0; i < 6; i++) CHECK(c && c[i] == want[i]);
  CHECK(mlx_from_fp8(&back, e, MLX_FLOAT32, S) == 0 && mlx_array_eval(back) == 0);
  const float *f = mlx_array_data_float32(back);
  CHECK(f && f[0] == 448.0f && f[1] == 1.0f && f[2] == -2.0f && f[4] == 448.0f);
  CHECK_FAILS(mlx_to_fp8(&back, e, S), "[to_fp8] Only real floating types are supported");
  CHECK_FAILS(mlx_from_fp8(&back, a, MLX_FLOAT32, S), "[from_fp8] Input must have type uint8");
  CHECK_FAILS(mlx_from_fp8(&back, e, MLX_INT32, S), "[from_fp8] Only real floating types");
  mlx_array_free(back);
  mlx_array_free(e);
  mlx_array_free(a);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_quantize_roundtrip();
  test_fp8();
  mlx_stream_free(S);
  return t_finish();
}
