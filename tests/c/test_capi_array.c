/* C API: array construction, queries, item/data access, set semantics,
 * managed data, and the printed form (mlx_array_tostring), checked against
 * what MLX 0.32 prints. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>

#include "capi_test.h"

static mlx_array i32(const int32_t *data, const int *shape, int dim) {
  return mlx_array_new_data(data, shape, dim, MLX_INT32);
}

static mlx_array f32(const float *data, const int *shape, int dim) {
  return mlx_array_new_data(data, shape, dim, MLX_FLOAT32);
}

/* An int32 array holding 0..n-1 in the given shape. */
static mlx_array iota(const int *shape, int dim) {
  int n = 1;
  for (int i = 0; i < dim; i++) n *= shape[i];
  int32_t *v = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) v[i] = i;
  mlx_array a = i32(v, shape, dim);
  free(v);
  return a;
}

static void test_scalars(void) {
  mlx_array a = mlx_array_new_int(7);
  CHECK(mlx_array_ndim(a) == 0);
  CHECK(mlx_array_size(a) == 1);
  CHECK(mlx_array_dtype(a) == MLX_INT32);
  CHECK(mlx_array_itemsize(a) == 4);
  CHECK(mlx_array_nbytes(a) == 4);
  int32_t v = 0;
  CHECK(mlx_array_item_int32(&v, a) == 0 && v == 7);
  double d = 0;
  CHECK(mlx_array_item_float64(&d, a) == 0 && d == 7.0); /* converted */
  CHECK_PRINTS(a, "array(7, dtype=int32)");
  mlx_array_free(a);

  a = mlx_array_new_bool(true);
  bool b = false;
  CHECK(mlx_array_dtype(a) == MLX_BOOL && mlx_array_item_bool(&b, a) == 0 && b);
  CHECK_PRINTS(a, "array(True, dtype=bool)");
  mlx_array_free(a);

  a = mlx_array_new_float(1.5f);
  float f = 0;
  CHECK(mlx_array_dtype(a) == MLX_FLOAT32 && mlx_array_item_float32(&f, a) == 0 && f == 1.5f);
  CHECK_PRINTS(a, "array(1.5, dtype=float32)");
  mlx_array_free(a);

  a = mlx_array_new_float32(1.0f);
  CHECK_PRINTS(a, "array(1, dtype=float32)");
  mlx_array_free(a);

  a = mlx_array_new_double(1.0 / 3.0);
  CHECK(mlx_array_dtype(a) == MLX_FLOAT64 && mlx_array_itemsize(a) == 8);
  CHECK(mlx_array_item_float64(&d, a) == 0 && d == 1.0 / 3.0);
  CHECK_PRINTS(a, "array(0.333333, dtype=float64)");
  mlx_array_free(a);

  a = mlx_array_new_float64(3.0);
  CHECK_PRINTS(a, "array(3, dtype=float64)");
  mlx_array_free(a);

  a = mlx_array_new_complex(1.0f, 2.0f);
  mlx_complex64_t c = 0;
  CHECK(mlx_array_dtype(a) == MLX_COMPLEX64 && mlx_array_item_complex64(&c, a) == 0);
  CHECK(crealf(c) == 1.0f && cimagf(c) == 2.0f);
  CHECK_PRINTS(a, "array(1+2j, dtype=complex64)");
  mlx_array_free(a);

  a = mlx_array_new_float(NAN);
  CHECK_PRINTS(a, "array(nan, dtype=float32)");
  mlx_array_free(a);
  a = mlx_array_new_float(-0.0f);
  CHECK_PRINTS(a, "array(-0, dtype=float32)");
  mlx_array_free(a);
  a = mlx_array_new_float(123456789.0f);
  CHECK_PRINTS(a, "array(1.23457e+08, dtype=float32)");
  mlx_array_free(a);
  a = mlx_array_new_float(1e-10f);
  CHECK_PRINTS(a, "array(1e-10, dtype=float32)");
  mlx_array_free(a);

  CHECK(mlx_dtype_size(MLX_BOOL) == 1 && mlx_dtype_size(MLX_FLOAT16) == 2 &&
        mlx_dtype_size(MLX_BFLOAT16) == 2 && mlx_dtype_size(MLX_INT64) == 8 &&
        mlx_dtype_size(MLX_COMPLEX64) == 8);
}

static void test_data_and_shape(void) {
  int32_t v[6] = {1, 2, 3, 4, 5, 6};
  int shape[2] = {2, 3};
  mlx_array a = i32(v, shape, 2);
  v[0] = 100; /* new_data copied */
  CHECK(mlx_array_ndim(a) == 2);
  CHECK(mlx_array_shape(a)[0] == 2 && mlx_array_shape(a)[1] == 3);
  CHECK(mlx_array_dim(a, 1) == 3 && mlx_array_dim(a, -2) == 2);
  CHECK(mlx_array_strides(a)[0] == 3 && mlx_array_strides(a)[1] == 1);
  CHECK(mlx_array_size(a) == 6 && mlx_array_nbytes(a) == 24);
  const int32_t *p = mlx_array_data_int32(a);
  CHECK(p && p[0] == 1 && p[5] == 6);
  bool flag = false;
  CHECK(_mlx_array_is_available(&flag, a) == 0 && flag);
  CHECK(_mlx_array_is_row_contiguous(&flag, a) == 0 && flag);
  CHECK(_mlx_array_is_contiguous(&flag, a) == 0 && flag);
  CHECK(_mlx_array_is_col_contiguous(&flag, a) == 0 && !flag);
  CHECK(_mlx_array_wait(a) == 0);
  CHECK(mlx_array_eval(a) == 0);
  CHECK_PRINTS(a, "array([[1, 2, 3],\n       [4, 5, 6]], dtype=int32)");

  /* errors: item of a non-scalar, out-of-range dim, empty arrays */
  int32_t x;
  CHECK_FAILS(mlx_array_item_int32(&x, a), "item can only be called on arrays of size 1.");
  int errs = t_errors;
  CHECK(mlx_array_dim(a, 2) == 0 && t_errors == errs + 1);
  mlx_array empty = mlx_array_new();
  CHECK(empty.ctx == NULL && mlx_array_ndim(empty) == 0 && mlx_array_size(empty) == 0);
  CHECK_FAILS(mlx_array_eval(empty), "non-empty");
  errs = t_errors;
  CHECK(mlx_array_data_float32(empty) == NULL && t_errors == errs + 1);
  mlx_string s = mlx_string_new();
  CHECK_FAILS(mlx_array_tostring(&s, empty), "non-empty");
  mlx_string_free(s);
  CHECK(mlx_array_free(empty) == 0);

  /* bad construction arguments report and give an empty array */
  int neg[1] = {-2};
  errs = t_errors;
  mlx_array bad = mlx_array_new_data(v, neg, 1, MLX_INT32);
  CHECK(bad.ctx == NULL && t_errors == errs + 1);
  errs = t_errors;
  bad = mlx_array_new_data(v, shape, 2, (mlx_dtype)99);
  CHECK(bad.ctx == NULL && t_errors == errs + 1);
  mlx_array_free(a);

  /* every element type round-trips through new_data / data_* */
  uint8_t u8[3] = {0, 128, 255};
  int n3[1] = {3};
  a = mlx_array_new_data(u8, n3, 1, MLX_UINT8);
  CHECK(mlx_array_data_uint8(a)[2] == 255);
  CHECK_PRINTS(a, "array([0, 128, 255], dtype=uint8)");
  mlx_array_free(a);
  int8_t i8[2] = {-128, 127};
  int n2[1] = {2};
  a = mlx_array_new_data(i8, n2, 1, MLX_INT8);
  CHECK(mlx_array_data_int8(a)[0] == -128);
  CHECK_PRINTS(a, "array([-128, 127], dtype=int8)");
  mlx_array_free(a);
  int64_t i64[2] = {INT64_MAX, INT64_MIN};
  a = mlx_array_new_data(i64, n2, 1, MLX_INT64);
  CHECK(mlx_array_data_int64(a)[1] == INT64_MIN);
  CHECK_PRINTS(a, "array([9223372036854775807, -9223372036854775808], dtype=int64)");
  mlx_array_free(a);
  uint64_t u64[1] = {UINT64_MAX};
  int n1[1] = {1};
  a = mlx_array_new_data(u64, n1, 1, MLX_UINT64);
  CHECK(mlx_array_data_uint64(a)[0] == UINT64_MAX);
  CHECK_PRINTS(a, "array([18446744073709551615], dtype=uint64)");
  mlx_array_free(a);
  uint16_t u16[2] = {1, 65535};
  a = mlx_array_new_data(u16, n2, 1, MLX_UINT16);
  CHECK(mlx_array_data_uint16(a)[1] == 65535);
  mlx_array_free(a);
  int16_t i16[2] = {-5, 5};
  a = mlx_array_new_data(i16, n2, 1, MLX_INT16);
  CHECK(mlx_array_data_int16(a)[0] == -5);
  mlx_array_free(a);
  uint32_t u32[1] = {4000000000u};
  a = mlx_array_new_data(u32, n1, 1, MLX_UINT32);
  uint32_t u32v = 0;
  CHECK(mlx_array_item_uint32(&u32v, a) == 0 && u32v == 4000000000u);
  CHECK_PRINTS(a, "array([4000000000], dtype=uint32)");
  mlx_array_free(a);
  bool bools[2] = {true, false};
  a = mlx_array_new_data(bools, n2, 1, MLX_BOOL);
  CHECK(mlx_array_data_bool(a)[0] == true);
  CHECK_PRINTS(a, "array([True, False], dtype=bool)");
  mlx_array_free(a);
  double f64[2] = {1.1, 2.2};
  a = mlx_array_new_data(f64, n2, 1, MLX_FLOAT64);
  CHECK(mlx_array_data_float64(a)[1] == 2.2);
  CHECK_PRINTS(a, "array([1.1, 2.2], dtype=float64)");
  mlx_array_free(a);
  uint16_t h[2] = {0x3C66, 0x4066}; /* float16 1.1, 2.2 */
  a = mlx_array_new_data(h, n2, 1, MLX_FLOAT16);
  CHECK_PRINTS(a, "array([1.09961, 2.19922], dtype=float16)");
  float hf = 0;
  CHECK(mlx_array_item_float32(&hf, mlx_array_new()) != 0); /* empty array */
#ifdef HAS_FLOAT16
  {
    int one[1] = {1};
    mlx_array h1 = mlx_array_new_data(h, one, 1, MLX_FLOAT16);
    float16_t hv = 0;
    CHECK(mlx_array_item_float16(&hv, h1) == 0 && (float)hv > 1.0996f && (float)hv < 1.0997f);
    CHECK(mlx_array_data_float16(h1) != NULL);
    mlx_array_free(h1);
  }
#endif
  mlx_array_free(a);
  uint16_t bf[2] = {0x3F8D, 0x400D}; /* bfloat16 1.1, 2.2 */
  a = mlx_array_new_data(bf, n2, 1, MLX_BFLOAT16);
  CHECK_PRINTS(a, "array([1.10156, 2.20312], dtype=bfloat16)");
  mlx_array_free(a);
  float cx[4] = {1, 2, 3, -4.5f};
  a = mlx_array_new_data(cx, n2, 1, MLX_COMPLEX64);
  CHECK(crealf(mlx_array_data_complex64(a)[1]) == 3.0f);
  CHECK_PRINTS(a, "array([1+2j, 3-4.5j], dtype=complex64)");
  mlx_array_free(a);
  float cz[8] = {0, 0, -0.0f, -1.5f, INFINITY, NAN, -0.0f, -0.0f};
  int n4[1] = {4};
  a = mlx_array_new_data(cz, n4, 1, MLX_COMPLEX64);
  CHECK_PRINTS(a, "array([0+0j, -0-1.5j, inf+nanj, -0+-0j], dtype=complex64)");
  mlx_array_free(a);
}

static void test_print_floats(void) {
  int n[1];
  float a1[3] = {1.5f, 2.25f, 3};
  n[0] = 3;
  mlx_array a = f32(a1, n, 1);
  CHECK_PRINTS(a, "array([1.5, 2.25, 3], dtype=float32)");
  mlx_array_free(a);
  float a2[3] = {0.1f, 0.2f, 1e-5f};
  a = f32(a2, n, 1);
  CHECK_PRINTS(a, "array([0.1, 0.2, 1e-05], dtype=float32)");
  mlx_array_free(a);
  float a3[3] = {INFINITY, -INFINITY, NAN};
  a = f32(a3, n, 1);
  CHECK_PRINTS(a, "array([inf, -inf, nan], dtype=float32)");
  mlx_array_free(a);
  float a4[6] = {0.5f, 1e-4f, 1e-5f, 123456, 1234567, 0.000123456789f};
  n[0] = 6;
  a = f32(a4, n, 1);
  CHECK_PRINTS(a, "array([0.5, 0.0001, 1e-05, 123456, 1.23457e+06, 0.000123457], dtype=float32)");
  mlx_array_free(a);
  float a5[2] = {1e10f, 1};
  n[0] = 2;
  a = f32(a5, n, 1);
  CHECK_PRINTS(a, "array([1e+10, 1], dtype=float32)");
  mlx_array_free(a);
  float a6[8] = {1e-5f, 1e5f, 3, 4, 5, 6, 7, 8};
  n[0] = 8;
  a = f32(a6, n, 1);
  CHECK_PRINTS(a, "array([1e-05, 100000, 3, ..., 6, 7, 8], dtype=float32)");
  mlx_array_free(a);
  float a7[2] = {1.0f / 3, 2.0f / 3};
  n[0] = 2;
  a = f32(a7, n, 1);
  CHECK_PRINTS(a, "array([0.333333, 0.666667], dtype=float32)");
  mlx_array_free(a);
  float a8[4] = {1.5f, 2, 3, 4};
  int s22[2] = {2, 2};
  a = f32(a8, s22, 2);
  CHECK_PRINTS(a, "array([[1.5, 2],\n       [3, 4]], dtype=float32)");
  mlx_array_free(a);
}

static void test_print_shapes(void) {
  struct { int dim; int shape[4]; const char *expected; } cases[] = {
      {1, {3}, "array([0, 1, 2], dtype=int32)"},
      {1, {6}, "array([0, 1, 2, 3, 4, 5], dtype=int32)"},
      {1, {7}, "array([0, 1, 2, ..., 4, 5, 6], dtype=int32)"},
      {1, {1001}, "array([0, 1, 2, ..., 998, 999, 1000], dtype=int32)"},
      {2, {6, 1}, "array([[0],\n       [1],\n       [2],\n       [3],\n       [4],\n       [5]], dtype=int32)"},
      {2, {7, 1}, "array([[0],\n       [1],\n       [2],\n       ...,\n       [4],\n       [5],\n       [6]], dtype=int32)"},
      {2, {7, 2}, "array([[0, 1],\n       [2, 3],\n       [4, 5],\n       ...,\n       [8, 9],\n       [10, 11],\n       [12, 13]], dtype=int32)"},
      {2, {2, 7}, "array([[0, 1, 2, ..., 4, 5, 6],\n       [7, 8, 9, ..., 11, 12, 13]], dtype=int32)"},
      {2, {1, 1000}, "array([[0, 1, 2, ..., 997, 998, 999]], dtype=int32)"},
      {2, {10, 100}, "array([[0, 1, 2, ..., 97, 98, 99],\n       [100, 101, 102, ..., 197, 198, 199],\n       [200, 201, 202, ..., 297, 298, 299],\n       ...,\n       [700, 701, 702, ..., 797, 798, 799],\n       [800, 801, 802, ..., 897, 898, 899],\n       [900, 901, 902, ..., 997, 998, 999]], dtype=int32)"},
      {3, {2, 3, 4}, "array([[[0, 1, 2, 3],\n        [4, 5, 6, 7],\n        [8, 9, 10, 11]],\n       [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], dtype=int32)"},
      {3, {1, 1, 1}, "array([[[0]]], dtype=int32)"},
      {4, {2, 2, 2, 2}, "array([[[[0, 1],\n         [2, 3]],\n        [[4, 5],\n         [6, 7]]],\n       [[[8, 9],\n         [10, 11]],\n        [[12, 13],\n         [14, 15]]]], dtype=int32)"},
      {1, {0}, "array([], dtype=int32)"},
      {2, {0, 3}, "array([], dtype=int32)"},
      {2, {2, 0}, "array([[],\n       []], dtype=int32)"},
      {3, {2, 2, 0}, "array([[[],\n        []],\n       [[],\n        []]], dtype=int32)"},
      {2, {8, 0}, "array([[],\n       [],\n       [],\n       ...,\n       [],\n       [],\n       []], dtype=int32)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mlx_array a = iota(cases[i].shape, cases[i].dim);
    CHECK_PRINTS(a, cases[i].expected);
    mlx_array_free(a);
  }
  /* the (10,10,10) block elides on every axis */
  int s3[3] = {10, 10, 10};
  mlx_array a = iota(s3, 3);
  mlx_string s = mlx_string_new();
  CHECK(mlx_array_tostring(&s, a) == 0);
  const char *txt = mlx_string_data(s);
  CHECK(strncmp(txt, "array([[[0, 1, 2, ..., 7, 8, 9],\n        [10, 11, 12, ..., 17, 18, 19],", 70) == 0);
  CHECK(strstr(txt, "        [290, 291, 292, ..., 297, 298, 299]],\n       ...,\n       [[700, 701, 702, ..., 707, 708, 709],") != NULL);
  CHECK(strstr(txt, "[990, 991, 992, ..., 997, 998, 999]]], dtype=int32)") != NULL);
  mlx_string_free(s);
  mlx_array_free(a);
}

/* set semantics: results replace what the handle held, sources are shared */
static void test_set(void) {
  mlx_array a = mlx_array_new_int(1);
  mlx_array b = mlx_array_new();
  /* b is a handle of its own to the same array, as in mlx-c (freeing one
   * leaves the other valid) */
  CHECK(mlx_array_set(&b, a) == 0 && b.ctx && b.ctx != a.ctx);
  mlx_array_free(a); /* b still holds its own reference */
  int32_t v = 0;
  CHECK(mlx_array_item_int32(&v, b) == 0 && v == 1);
  CHECK(mlx_array_set_float(&b, 2.5f) == 0 && mlx_array_dtype(b) == MLX_FLOAT32);
  CHECK(mlx_array_set_bool(&b, false) == 0 && mlx_array_dtype(b) == MLX_BOOL);
  CHECK(mlx_array_set_int(&b, 3) == 0 && mlx_array_item_int32(&v, b) == 0 && v == 3);
  CHECK(mlx_array_set_double(&b, 4.0) == 0 && mlx_array_dtype(b) == MLX_FLOAT64);
  CHECK(mlx_array_set_float64(&b, 4.0) == 0 && mlx_array_dtype(b) == MLX_FLOAT64);
  CHECK(mlx_array_set_float32(&b, 4.0f) == 0 && mlx_array_dtype(b) == MLX_FLOAT32);
  CHECK(mlx_array_set_complex(&b, 1, -1) == 0 && mlx_array_dtype(b) == MLX_COMPLEX64);
  int64_t data[3] = {5, 6, 7};
  int shape[1] = {3};
  CHECK(mlx_array_set_data(&b, data, shape, 1, MLX_INT64) == 0);
  CHECK(mlx_array_size(b) == 3 && mlx_array_data_int64(b)[2] == 7);
  CHECK(mlx_array_set(&b, mlx_array_new()) == 0 && b.ctx == NULL);
  mlx_array_free(b);
}

static int dtor_calls;
static void *dtor_seen;
static void count_dtor(void *p) {
  dtor_calls++;
  dtor_seen = p;
}

static void test_managed(void) {
  float *buf = malloc(4 * sizeof(float));
  for (int i = 0; i < 4; i++) buf[i] = (float)i;
  int shape[2] = {2, 2};
  dtor_calls = 0;
  mlx_array a = mlx_array_new_data_managed(buf, shape, 2, MLX_FLOAT32, count_dtor);
  CHECK(a.ctx != NULL);
  CHECK(mlx_array_data_float32(a) == buf); /* no copy */
  buf[3] = 42; /* visible through the array */
  float f = 0;
  mlx_array b = mlx_array_new();
  mlx_array_set(&b, a);
  mlx_array_free(a);
  CHECK(dtor_calls == 0); /* b still uses the memory */
  CHECK_PRINTS(b, "array([[0, 1],\n       [2, 42]], dtype=float32)");
  mlx_array_free(b);
  CHECK(dtor_calls == 1 && dtor_seen == buf);
  free(buf);

  int payload = 5;
  double *d = malloc(2 * sizeof(double));
  d[0] = 1;
  d[1] = 2;
  int n[1] = {2};
  dtor_calls = 0;
  a = mlx_array_new_data_managed_payload(d, n, 1, MLX_FLOAT64, &payload, count_dtor);
  mlx_array c = mlx_array_new();
  mlx_array one = mlx_array_new_float(1);
  CHECK(mlx_array_item_float32(&f, one) == 0 && f == 1.0f);
  mlx_array_free(one);
  CHECK(mlx_array_data_float64(a)[1] == 2.0);
  mlx_array_free(c);
  mlx_array_free(a);
  CHECK(dtor_calls == 1 && dtor_seen == &payload);
  free(d);

  /* a failed construction leaves the memory with the caller */
  int neg[1] = {-1};
  dtor_calls = 0;
  int errs = t_errors;
  a = mlx_array_new_data_managed(&payload, neg, 1, MLX_INT32, count_dtor);
  CHECK(a.ctx == NULL && t_errors == errs + 1 && dtor_calls == 0);
}

int main(void) {
  t_init();
  test_scalars();
  test_data_and_shape();
  test_print_floats();
  test_print_shapes();
  test_set();
  test_managed();
  return t_finish();
}
