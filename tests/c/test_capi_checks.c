/* C API argument checks that mlx-c makes or that stand where mlx-c would
 * crash: an empty mlx_stream is rejected ("expected a non-empty
 * mlx_stream", as mlx-c reports), a NULL result pointer is an error, not a
 * crash, mlx_array_new_data(NULL, ...) with elements is an error (mlx-c
 * would copy from NULL), and negative counts are reported with mlx-c's
 * std::length_error message instead of "too many dimensions".  Every
 * failure leaves existing arrays as they were. */
#include <stdint.h>
#include <stdlib.h>

#include "capi_test.h"

static mlx_stream S;

#define NULL_RES "expected a non-NULL result pointer"
#define NO_STREAM "expected a non-empty mlx_stream"
#define LENGTH_ERROR "cannot create std::vector larger than max_size()"

static mlx_array iota(int n) {
  float v[16];
  for (int i = 0; i < n; i++) v[i] = (float)i;
  return vec_f32(v, n);
}

/* One function of every adapter family, with an empty stream: reported
 * once, nothing written. */
static void test_empty_stream(void) {
  mlx_stream e = mlx_stream_new();
  mlx_array a = iota(4), b = iota(4), r = mlx_array_new();
  int shape[2] = {2, 2}, axes[1] = {0};
  CHECK_FAILS(mlx_abs(&r, a, e), NO_STREAM);
  CHECK_FAILS(mlx_add(&r, a, b, e), NO_STREAM);
  CHECK_FAILS(mlx_sum(&r, a, false, e), NO_STREAM);
  CHECK_FAILS(mlx_sum_axis(&r, a, 0, false, e), NO_STREAM);
  CHECK_FAILS(mlx_sum_axes(&r, a, axes, 1, false, e), NO_STREAM);
  CHECK_FAILS(mlx_var(&r, a, false, 0, e), NO_STREAM);
  CHECK_FAILS(mlx_argmax(&r, a, false, e), NO_STREAM);
  CHECK_FAILS(mlx_sort(&r, a, e), NO_STREAM);
  CHECK_FAILS(mlx_topk(&r, a, 2, e), NO_STREAM);
  CHECK_FAILS(mlx_cumsum(&r, a, 0, false, true, e), NO_STREAM);
  CHECK_FAILS(mlx_reshape(&r, a, shape, 2, e), NO_STREAM);
  CHECK_FAILS(mlx_atleast_2d(&r, a, e), NO_STREAM);
  CHECK_FAILS(mlx_kron(&r, a, b, e), NO_STREAM);
  CHECK_FAILS(mlx_hanning(&r, 4, e), NO_STREAM);
  CHECK_FAILS(mlx_zeros(&r, shape, 2, MLX_FLOAT32, e), NO_STREAM);
  CHECK_FAILS(mlx_arange(&r, 0, 4, 1, MLX_FLOAT32, e), NO_STREAM);
  CHECK_FAILS(mlx_take_axis(&r, a, b, 0, e), NO_STREAM);
  CHECK_FAILS(mlx_where(&r, a, a, b, e), NO_STREAM);
  CHECK_FAILS(mlx_astype(&r, a, MLX_INT32, e), NO_STREAM);
  CHECK_FAILS(mlx_matmul(&r, a, b, e), NO_STREAM);
  CHECK(r.ctx == NULL);
  mlx_vector_array v = mlx_vector_array_new();
  CHECK_FAILS(mlx_split(&v, a, 2, 0, e), NO_STREAM);
  CHECK(mlx_vector_array_size(v) == 0);
  CHECK_FAILS(mlx_divmod(&v, a, b, e), NO_STREAM);
  /* the stream functions themselves */
  int index = 0;
  CHECK_FAILS(mlx_synchronize(e), NO_STREAM);
  CHECK_FAILS(mlx_set_default_stream(e), NO_STREAM);
  CHECK_FAILS(mlx_stream_get_index(&index, e), NO_STREAM);
  mlx_stream copy = mlx_default_cpu_stream_new();
  CHECK_FAILS(mlx_stream_set(&copy, e), NO_STREAM);
  CHECK(copy.ctx != NULL && mlx_stream_equal(copy, S)); /* untouched */
  int errs = t_errors;
  CHECK(!mlx_stream_equal(e, S) && t_errors == errs + 1);
  CHECK(mlx_stream_free(e) == 0); /* freeing an empty handle is fine */
  mlx_stream_free(copy);
  /* the inputs are intact and still usable */
  CHECK_PRINTS(a, "array([0, 1, 2, 3], dtype=float32)");
  EXPECT(mlx_add(&r_, a, b, S), "array([0, 2, 4, 6], dtype=float32)");
  mlx_vector_array_free(v);
  mlx_array_free(a);
  mlx_array_free(b);
}

/* A NULL result pointer is reported (mlx-c dereferences it). */
static void test_null_result(void) {
  mlx_array a = iota(4), b = iota(4);
  int shape[2] = {2, 2}, axes[1] = {0};
  CHECK_FAILS(mlx_abs(NULL, a, S), NULL_RES);
  CHECK_FAILS(mlx_add(NULL, a, b, S), NULL_RES);
  CHECK_FAILS(mlx_sum_axes(NULL, a, axes, 1, false, S), NULL_RES);
  CHECK_FAILS(mlx_std_axis(NULL, a, 0, false, 1, S), NULL_RES);
  CHECK_FAILS(mlx_argsort_axis(NULL, a, 0, S), NULL_RES);
  CHECK_FAILS(mlx_cumprod(NULL, a, 0, false, true, S), NULL_RES);
  CHECK_FAILS(mlx_reshape(NULL, a, shape, 2, S), NULL_RES);
  CHECK_FAILS(mlx_outer(NULL, a, b, S), NULL_RES);
  CHECK_FAILS(mlx_ones(NULL, shape, 2, MLX_FLOAT32, S), NULL_RES);
  CHECK_FAILS(mlx_eye(NULL, 2, 2, 0, MLX_FLOAT32, S), NULL_RES);
  CHECK_FAILS(mlx_take(NULL, a, b, S), NULL_RES);
  mlx_vector_array idx = mlx_vector_array_new();
  CHECK_FAILS(mlx_scatter(NULL, a, idx, b, axes, 1, S), NULL_RES);
  CHECK_FAILS(mlx_scatter_add_single(NULL, a, b, b, 0, S), NULL_RES);
  int start[1] = {0}, stop[1] = {2}, step[1] = {1};
  CHECK_FAILS(mlx_slice_update_add(NULL, a, b, start, 1, stop, 1, step, 1, S), NULL_RES);
  CHECK_FAILS(mlx_clip(NULL, a, a, b, S), NULL_RES);
  CHECK_FAILS(mlx_addmm(NULL, a, a, b, 1, 1, S), NULL_RES);
  CHECK_FAILS(mlx_split(NULL, a, 2, 0, S), NULL_RES);
  CHECK_FAILS(mlx_meshgrid(NULL, idx, false, "xy", S), NULL_RES);
  /* arrays, strings, devices, streams */
  float f;
  int i;
  size_t n;
  CHECK_FAILS(mlx_array_item_float32(NULL, a), NULL_RES);
  CHECK_FAILS(mlx_array_tostring(NULL, a), NULL_RES);
  CHECK_FAILS(mlx_array_set(NULL, a), NULL_RES);
  CHECK_FAILS(mlx_array_set_float32(NULL, 1.0f), NULL_RES);
  CHECK_FAILS(mlx_array_set_data(NULL, &f, shape, 0, MLX_FLOAT32), NULL_RES);
  CHECK_FAILS(_mlx_array_is_contiguous(NULL, a), NULL_RES);
  mlx_string str = mlx_string_new_data("x");
  CHECK_FAILS(mlx_string_set(NULL, str), NULL_RES);
  mlx_string_free(str);
  CHECK_FAILS(mlx_version(NULL), NULL_RES);
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  CHECK_FAILS(mlx_device_get_index(NULL, cpu), NULL_RES);
  CHECK_FAILS(mlx_device_is_available(NULL, cpu), NULL_RES);
  CHECK_FAILS(mlx_get_default_device(NULL), NULL_RES);
  CHECK_FAILS(mlx_stream_get_index(NULL, S), NULL_RES);
  CHECK_FAILS(mlx_stream_get_device(NULL, S), NULL_RES);
  CHECK_FAILS(mlx_get_default_stream(NULL, cpu), NULL_RES);
  CHECK_FAILS(mlx_metal_is_available(NULL), NULL_RES);
  /* memory */
  CHECK_FAILS(mlx_get_active_memory(NULL), NULL_RES);
  CHECK_FAILS(mlx_get_peak_memory(NULL), NULL_RES);
  size_t limit = 0;
  CHECK(mlx_set_cache_limit(&limit, 12345) == 0 && mlx_set_cache_limit(&n, limit) == 0 &&
        n == 12345);
  CHECK_FAILS(mlx_set_cache_limit(NULL, 0), NULL_RES);
  CHECK(mlx_set_cache_limit(&n, limit) == 0 && n == limit); /* limit unchanged */
  /* vectors and maps */
  mlx_vector_array va = mlx_vector_array_new_value(a);
  CHECK_FAILS(mlx_vector_array_get(NULL, va, 0), NULL_RES);
  CHECK_FAILS(mlx_vector_array_set(NULL, va), NULL_RES);
  mlx_vector_int vi = mlx_vector_int_new_value(3);
  CHECK_FAILS(mlx_vector_int_get(NULL, vi, 0), NULL_RES);
  CHECK(mlx_vector_int_get(&i, vi, 0) == 0 && i == 3);
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  CHECK(mlx_map_string_to_array_insert(m, "a", a) == 0);
  CHECK_FAILS(mlx_map_string_to_array_get(NULL, m, "a"), NULL_RES);
  /* transforms */
  mlx_closure c = mlx_closure_new();
  CHECK_FAILS(mlx_closure_apply(NULL, c, va), NULL_RES);
  CHECK_FAILS(mlx_vjp(NULL, NULL, c, va, va), NULL_RES);
  int argnums[1] = {0};
  CHECK_FAILS(mlx_value_and_grad(NULL, c, argnums, 1), NULL_RES);
  /* nothing was disturbed */
  CHECK_PRINTS(a, "array([0, 1, 2, 3], dtype=float32)");
  mlx_closure_free(c);
  mlx_map_string_to_array_free(m);
  mlx_vector_int_free(vi);
  mlx_vector_array_free(va);
  mlx_vector_array_free(idx);
  mlx_device_free(cpu);
  mlx_array_free(a);
  mlx_array_free(b);
}

static int dtor_calls;
static void count_dtor(void *p) {
  (void)p;
  dtor_calls++;
}

static void test_new_data(void) {
  int shape[2] = {2, 3}, empty[2] = {0, 3}, neg[2] = {-2, 3};
  float v[6] = {1, 2, 3, 4, 5, 6};
  int errs = t_errors;
  /* NULL data with elements: an error, not zeros */
  mlx_array a = mlx_array_new_data(NULL, shape, 2, MLX_FLOAT32);
  CHECK(a.ctx == NULL && t_errors == errs + 1);
  CHECK(strstr(t_last_error, "[mlx_array_new_data] data is NULL.") != NULL);
  /* NULL data with no elements is an empty array */
  a = mlx_array_new_data(NULL, empty, 2, MLX_FLOAT32);
  CHECK(a.ctx != NULL && mlx_array_size(a) == 0 && mlx_array_ndim(a) == 2);
  mlx_array_free(a);
  /* dim = -1: mlx-c's std::vector(shape, shape - 1) message, not "dimensions" */
  errs = t_errors;
  a = mlx_array_new_data(v, shape, -1, MLX_FLOAT32);
  CHECK(a.ctx == NULL && t_errors == errs + 1);
  CHECK(strstr(t_last_error, LENGTH_ERROR) != NULL && strstr(t_last_error, "dim = -1") != NULL);
  CHECK(strstr(t_last_error, "dimensions") == NULL);
  a = mlx_array_new_data(v, neg, 2, MLX_FLOAT32);
  CHECK(a.ctx == NULL && strstr(t_last_error, "Negative dimensions not allowed.") != NULL);
  /* set_data leaves the old value on failure */
  mlx_array keep = vec_f32(v, 2);
  CHECK_FAILS(mlx_array_set_data(&keep, NULL, shape, 2, MLX_FLOAT32), "data is NULL.");
  CHECK_FAILS(mlx_array_set_data(&keep, v, shape, -3, MLX_FLOAT32), LENGTH_ERROR);
  CHECK_PRINTS(keep, "array([1, 2], dtype=float32)");
  mlx_array_free(keep);
  /* managed: same checks, and the caller keeps the memory on failure */
  errs = t_errors;
  a = mlx_array_new_data_managed(NULL, shape, 2, MLX_FLOAT32, count_dtor);
  CHECK(a.ctx == NULL && t_errors == errs + 1 && dtor_calls == 0);
  CHECK(strstr(t_last_error, "[mlx_array_new_data_managed] data is NULL.") != NULL);
  a = mlx_array_new_data_managed_payload(v, shape, -1, MLX_FLOAT32, v, count_dtor);
  CHECK(a.ctx == NULL && dtor_calls == 0 && strstr(t_last_error, LENGTH_ERROR) != NULL);
  a = mlx_array_new_data_managed(v, shape, 2, MLX_FLOAT32, count_dtor);
  CHECK(a.ctx != NULL);
  mlx_array_free(a);
  CHECK(dtor_calls == 1);
}

static void test_negative_counts(void) {
  mlx_array a = iota(6), r = mlx_array_new();
  int shape[2] = {2, 3}, axes[1] = {0};
  size_t minus_one = (size_t)-1;
  CHECK_FAILS(mlx_reshape(&r, a, shape, minus_one, S), LENGTH_ERROR);
  CHECK(strstr(t_last_error, "dimensions") == NULL);
  CHECK_FAILS(mlx_zeros(&r, shape, minus_one, MLX_FLOAT32, S), LENGTH_ERROR);
  CHECK_FAILS(mlx_broadcast_to(&r, a, shape, (size_t)-2, S), LENGTH_ERROR);
  CHECK_FAILS(mlx_sum_axes(&r, a, axes, minus_one, false, S), LENGTH_ERROR);
  CHECK_FAILS(mlx_transpose_axes(&r, a, axes, minus_one, S), LENGTH_ERROR);
  /* a large positive count is still "too many dimensions" */
  CHECK_FAILS(mlx_reshape(&r, a, shape, 65, S), "at most 64 dimensions");
  /* negative entries are MLX's errors */
  int neg[2] = {-2, 3}, infer[2] = {-1, -1};
  CHECK_FAILS(mlx_zeros(&r, neg, 2, MLX_FLOAT32, S), "[full] Negative dimensions not allowed.");
  CHECK_FAILS(mlx_reshape(&r, a, infer, 2, S), "Reshape can only infer one dimension.");
  CHECK(r.ctx == NULL);
  /* vectors: NULL data with entries, negative sizes */
  mlx_vector_int vi = mlx_vector_int_new();
  CHECK_FAILS(mlx_vector_int_append_data(vi, NULL, 3), "data is NULL.");
  int vals[2] = {1, 2};
  CHECK_FAILS(mlx_vector_int_append_data(vi, vals, minus_one), LENGTH_ERROR);
  CHECK(mlx_vector_int_append_data(vi, NULL, 0) == 0 && mlx_vector_int_size(vi) == 0);
  CHECK(mlx_vector_int_append_data(vi, vals, 2) == 0 && mlx_vector_int_size(vi) == 2);
  mlx_vector_array va = mlx_vector_array_new();
  CHECK_FAILS(mlx_vector_array_append_data(va, NULL, 2), "data is NULL.");
  mlx_vector_string vs = mlx_vector_string_new();
  CHECK_FAILS(mlx_vector_string_append_data(vs, NULL, 1), "data is NULL.");
  CHECK(mlx_vector_string_size(vs) == 0);
  mlx_vector_string_free(vs);
  mlx_vector_array_free(va);
  mlx_vector_int_free(vi);
  mlx_array_free(a);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_empty_stream();
  test_null_result();
  test_new_data();
  test_negative_counts();
  mlx_stream_free(S);
  return t_finish();
}
