/* C API compile.h: a compiled closure traces the function once per input
 * signature and replays it; detail_compile shares a cache per fun_id with
 * constants in the key; compile modes; bad arguments. */
#include "capi_test.h"

static int calls;

/* out = [exp(x) * y + 1, x - y] */
static int body(mlx_vector_array *res, const mlx_vector_array in) {
  calls++;
  mlx_array x = mlx_array_new(), y = mlx_array_new(), e = mlx_array_new(), p = mlx_array_new(),
            one = mlx_array_new_float(1.0f), a = mlx_array_new(), b = mlx_array_new();
  mlx_stream s = mlx_default_cpu_stream_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
           mlx_exp(&e, x, s) || mlx_multiply(&p, e, y, s) || mlx_add(&a, p, one, s) ||
           mlx_subtract(&b, x, y, s);
  if (!rc) {
    mlx_vector_array_free(*res);
    *res = mlx_vector_array_new();
    rc = mlx_vector_array_append_value(*res, a) || mlx_vector_array_append_value(*res, b);
  }
  mlx_array_free(x), mlx_array_free(y), mlx_array_free(e), mlx_array_free(p);
  mlx_array_free(one), mlx_array_free(a), mlx_array_free(b);
  mlx_stream_free(s);
  return rc;
}

/* Apply cl to (x, y) of n elements and check both outputs. */
static void check_apply(mlx_closure cl, int n, float scale) {
  float xv[8], yv[8];
  for (int i = 0; i < n; i++) xv[i] = scale * (float)i / 4, yv[i] = 1.0f - (float)i / 8;
  mlx_array x = vec_f32(xv, n), y = vec_f32(yv, n);
  mlx_vector_array in = mlx_vector_array_new(), out = mlx_vector_array_new();
  mlx_vector_array_append_value(in, x);
  mlx_vector_array_append_value(in, y);
  CHECK(mlx_closure_apply(&out, cl, in) == 0);
  CHECK(mlx_vector_array_size(out) == 2);
  mlx_array a = mlx_array_new(), b = mlx_array_new();
  CHECK(mlx_vector_array_get(&a, out, 0) == 0 && mlx_vector_array_get(&b, out, 1) == 0);
  CHECK(mlx_array_eval(a) == 0 && mlx_array_eval(b) == 0);
  CHECK(mlx_array_size(a) == (size_t)n);
  const float *pa = mlx_array_data_float32(a), *pb = mlx_array_data_float32(b);
  for (int i = 0; pa && pb && i < n; i++) {
    CHECK_CLOSE(pa[i], expf(xv[i]) * yv[i] + 1, 1e-5);
    CHECK_CLOSE(pb[i], xv[i] - yv[i], 1e-6);
  }
  mlx_array_free(a), mlx_array_free(b), mlx_array_free(x), mlx_array_free(y);
  mlx_vector_array_free(in), mlx_vector_array_free(out);
}

int main(void) {
  t_init();
  mlx_closure fun = mlx_closure_new_func(body), cl = mlx_closure_new();
  CHECK(mlx_compile(&cl, fun, false) == 0);
  calls = 0;
  check_apply(cl, 4, 1.0f);
  check_apply(cl, 4, 2.0f); /* replayed */
  CHECK(calls == 1);
  check_apply(cl, 6, 1.0f); /* a new shape traces again */
  CHECK(calls == 2);

  /* shapeless: one trace for every length */
  mlx_closure sl = mlx_closure_new();
  CHECK(mlx_compile(&sl, fun, true) == 0);
  calls = 0;
  check_apply(sl, 3, 1.0f);
  check_apply(sl, 7, 1.0f);
  CHECK(calls == 1);

  /* disabled: the function runs every time */
  CHECK(mlx_disable_compile() == 0);
  calls = 0;
  check_apply(cl, 4, 1.0f);
  check_apply(cl, 4, 1.0f);
  CHECK(calls == 2);
  CHECK(mlx_enable_compile() == 0);
  calls = 0;
  check_apply(cl, 4, 1.0f);
  CHECK(calls == 0);
  CHECK(mlx_set_compile_mode(MLX_COMPILE_MODE_NO_FUSE) == 0);
  CHECK(mlx_set_compile_mode(MLX_COMPILE_MODE_ENABLED) == 0);
  CHECK_FAILS(mlx_set_compile_mode((mlx_compile_mode)42), "Invalid compile mode");

  /* detail: constants are part of the key, fun_id shares the cache */
  uint64_t k1[] = {1, 2}, k2[] = {3};
  mlx_closure d1 = mlx_closure_new(), d2 = mlx_closure_new(), d3 = mlx_closure_new();
  CHECK(mlx_detail_compile(&d1, fun, 77, false, k1, 2) == 0);
  CHECK(mlx_detail_compile(&d2, fun, 77, false, k1, 2) == 0);
  CHECK(mlx_detail_compile(&d3, fun, 77, false, k2, 1) == 0);
  calls = 0;
  check_apply(d1, 4, 1.0f);
  check_apply(d2, 4, 1.0f); /* same id and constants: the same trace */
  CHECK(calls == 1);
  check_apply(d3, 4, 1.0f); /* other constants */
  CHECK(calls == 2);
  CHECK(mlx_detail_compile_erase(77) == 0);
  check_apply(d1, 4, 1.0f);
  CHECK(calls == 3);
  CHECK(mlx_detail_compile_clear_cache() == 0);
  check_apply(d2, 4, 1.0f);
  CHECK(calls == 4);

  /* bad arguments */
  mlx_closure empty = mlx_closure_new();
  CHECK_FAILS(mlx_compile(&cl, empty, false), "without a target");
  CHECK_FAILS(mlx_compile(NULL, fun, false), "mlx_compile");
  CHECK_FAILS(mlx_detail_compile(&d1, fun, 1, false, NULL, 3), "constants");

  mlx_closure_free(fun), mlx_closure_free(cl), mlx_closure_free(sl);
  mlx_closure_free(d1), mlx_closure_free(d2), mlx_closure_free(d3);
  return t_finish();
}
