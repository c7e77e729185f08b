/* C API: mlx/c/fast.h.  rms_norm, layer_norm, rope (static and dynamic
 * offsets) and scaled_dot_product_attention against hand-computed values,
 * MLX's errors for bad input, and the custom kernels' errors on a build
 * without Metal or CUDA. */
#include "capi_test.h"

static mlx_stream S;

static mlx_array from(const float *v, const int *shape, int ndim) {
  return mlx_array_new_data(v, shape, ndim, MLX_FLOAT32);
}

/* a holds want[0..n) within tol (float32). */
static int near(mlx_array a, const float *want, size_t n, float tol) {
  if (mlx_array_eval(a) || mlx_array_size(a) != n || mlx_array_dtype(a) != MLX_FLOAT32) return 0;
  const float *p = mlx_array_data_float32(a);
  for (size_t i = 0; i < n; i++)
    if (!(fabsf(p[i] - want[i]) <= tol)) return 0;
  return 1;
}

static void test_norms(void) {
  const float xv[] = {1, 2, 3, 4, -1, 0, 1, 2}, wv[] = {1, 2, 1, 0.5f}, bv[] = {0, 1, 0, -1};
  int xs[] = {2, 4}, ws[] = {4};
  mlx_array x = from(xv, xs, 2), w = from(wv, ws, 1), b = from(bv, ws, 1), r = mlx_array_new(),
            none = mlx_array_new();
  /* row 0: rms = sqrt(7.5); row 1: sqrt(1.5) */
  float r0 = 1 / sqrtf(7.5f), r1 = 1 / sqrtf(1.5f);
  const float rms[] = {1 * r0, 4 * r0, 3 * r0, 2 * r0, -1 * r1, 0, 1 * r1, 1 * r1};
  CHECK(mlx_fast_rms_norm(&r, x, w, 0.0f, S) == 0);
  CHECK(near(r, rms, 8, 1e-6f));
  const float rms1[] = {1 * r0, 2 * r0, 3 * r0, 4 * r0, -1 * r1, 0, 1 * r1, 2 * r1};
  CHECK(mlx_fast_rms_norm(&r, x, none, 0.0f, S) == 0);
  CHECK(near(r, rms1, 8, 1e-6f));
  /* each row: mean 2.5 / 0.5, var 1.25 */
  float n = 1 / sqrtf(1.25f);
  const float ln[] = {-1.5f * n, -0.5f * n * 2 + 1, 0.5f * n, 1.5f * n * 0.5f - 1,
                      -1.5f * n, -0.5f * n * 2 + 1, 0.5f * n, 1.5f * n * 0.5f - 1};
  CHECK(mlx_fast_layer_norm(&r, x, w, b, 0.0f, S) == 0);
  CHECK(near(r, ln, 8, 1e-6f));
  mlx_array w3 = from(wv, (int[]){3}, 1);
  CHECK_FAILS(mlx_fast_rms_norm(&r, x, w3, 1e-5f, S),
              "[rms_norm] (*weight) must have the same size as the last dimension of x but has 3 "
              "elements.");
  CHECK_FAILS(mlx_fast_layer_norm(&r, x, none, w3, 1e-5f, S), "[layer_norm] bias must have");
  CHECK_FAILS(mlx_fast_rms_norm(&r, none, w, 1e-5f, S), "expected a non-empty mlx_array");
  mlx_array_free(w3);
  mlx_array_free(x);
  mlx_array_free(w);
  mlx_array_free(b);
  mlx_array_free(r);
}

static void test_rope(void) {
  /* (1, 2, 2): two positions of one pair; base 1 makes every angle the
   * position itself (inv_freq = 1) */
  const float xv[] = {1, 0, 1, 0};
  int xs[] = {1, 2, 2};
  mlx_array x = from(xv, xs, 3), r = mlx_array_new(), none = mlx_array_new();
  mlx_optional_float base = {1.0f, true};
  const float want[] = {cosf(3), sinf(3), cosf(4), sinf(4)};
  CHECK(mlx_fast_rope(&r, x, 2, false, base, 1.0f, 3, none, S) == 0);
  CHECK(near(r, want, 4, 1e-6f));
  mlx_array off = mlx_array_new_int(3);
  CHECK(mlx_fast_rope_dynamic(&r, x, 2, true, base, 1.0f, off, none, S) == 0);
  CHECK(near(r, want, 4, 1e-6f));
  mlx_optional_float nob = {0, false};
  const float fv[] = {0.5f};
  mlx_array freqs = from(fv, (int[]){1}, 1);
  const float want2[] = {cosf(6), sinf(6), cosf(8), sinf(8)}; /* inv_freq 1 / 0.5 */
  CHECK(mlx_fast_rope(&r, x, 2, false, nob, 1.0f, 3, freqs, S) == 0);
  CHECK(near(r, want2, 4, 1e-5f));
  CHECK_FAILS(mlx_fast_rope(&r, x, 3, false, base, 1.0f, 0, none, S),
              "[rope] dims must be even but got 3.");
  CHECK_FAILS(mlx_fast_rope(&r, x, 2, false, nob, 1.0f, 0, none, S),
              "[rope] Neither base nor freqs has a value.");
  mlx_array_free(off);
  mlx_array_free(freqs);
  mlx_array_free(x);
  mlx_array_free(r);
}

static void test_sdpa(void) {
  /* one query against two keys with scores 0 and log(3): weights 1/4, 3/4 */
  float l3 = logf(3);
  const float qv[] = {1, 0}, kv[] = {0, 0, l3, 0}, vv[] = {1, 0, 0, 1};
  mlx_array q = from(qv, (int[]){1, 1, 1, 2}, 4), k = from(kv, (int[]){1, 1, 2, 2}, 4),
            v = from(vv, (int[]){1, 1, 2, 2}, 4), r = mlx_array_new(), none = mlx_array_new();
  const float want[] = {0.25f, 0.75f};
  CHECK(mlx_fast_scaled_dot_product_attention(&r, q, k, v, 1.0f, "", none, none, S) == 0);
  CHECK(near(r, want, 2, 1e-6f));
  /* a bool mask that hides the second key leaves the first value */
  const bool mv[] = {true, false};
  mlx_array m = mlx_array_new_data(mv, (int[]){2}, 1, MLX_BOOL);
  const float first[] = {1, 0};
  CHECK(mlx_fast_scaled_dot_product_attention(&r, q, k, v, 1.0f, "array", m, none, S) == 0);
  CHECK(near(r, first, 2, 1e-6f));
  /* causal, lower-right aligned: the single query sees both keys */
  CHECK(mlx_fast_scaled_dot_product_attention(&r, q, k, v, 1.0f, "causal", none, none, S) == 0);
  CHECK(near(r, want, 2, 1e-6f));
  /* a sink logit of log(4) takes half the weight */
  mlx_array sk = mlx_array_new_float(logf(4));
  mlx_array sinks = mlx_array_new();
  CHECK(mlx_reshape(&sinks, sk, (int[]){1}, 1, S) == 0);
  const float half[] = {0.125f, 0.375f};
  CHECK(mlx_fast_scaled_dot_product_attention(&r, q, k, v, 1.0f, "", none, sinks, S) == 0);
  CHECK(near(r, half, 2, 1e-6f));
  CHECK_FAILS(mlx_fast_scaled_dot_product_attention(&r, q, k, v, 1.0f, "bad", none, none, S),
              "Invalid mask_mode bad. mask_mode must be 'causal', 'array' or ''.");
  CHECK_FAILS(mlx_fast_scaled_dot_product_attention(&r, v, k, q, 1.0f, "", none, none, S),
              "keys, values expected to have matching sequence lengths");
  mlx_array_free(sk);
  mlx_array_free(sinks);
  mlx_array_free(m);
  mlx_array_free(q);
  mlx_array_free(k);
  mlx_array_free(v);
  mlx_array_free(r);
}

static void test_kernels(void) {
  mlx_vector_array outs = mlx_vector_array_new(), ins = mlx_vector_array_new();
  mlx_vector_string names = mlx_vector_string_new(), one = mlx_vector_string_new();
  mlx_vector_string_append_value(one, "out");
  mlx_fast_metal_kernel mk = mlx_fast_metal_kernel_new("k", names, one, "", "", true, false);
  CHECK(mk.ctx != NULL);
  mlx_fast_metal_kernel_config mc = mlx_fast_metal_kernel_config_new();
  CHECK(mlx_fast_metal_kernel_config_set_grid(mc, 1, 1, 1) == 0);
  int shape[1] = {3};
  CHECK(mlx_fast_metal_kernel_config_add_output_arg(mc, shape, 1, MLX_FLOAT32) == 0);
  CHECK_FAILS(mlx_fast_metal_kernel_apply(&outs, mk, ins, mc, S),
              "[metal_kernel] No Metal back-end.");
  mlx_fast_metal_kernel_free(mk);
  /* MLX's checks of the call come first */
  mk = mlx_fast_metal_kernel_new("k", names, names, "", "", true, false);
  CHECK_FAILS(mlx_fast_metal_kernel_apply(&outs, mk, ins, mc, S),
              "[metal_kernel] Must specify at least one output.");
  mlx_fast_metal_kernel_free(mk);
  mk = mlx_fast_metal_kernel_new("k", one, one, "", "", true, false);
  CHECK_FAILS(mlx_fast_metal_kernel_apply(&outs, mk, ins, mc, S), "inputs");
  mlx_fast_metal_kernel_free(mk);
  mlx_fast_metal_kernel_config empty = {0};
  CHECK_FAILS(mlx_fast_metal_kernel_config_set_grid(empty, 1, 1, 1), "empty");
  CHECK_FAILS(mlx_fast_metal_kernel_new(NULL, one, one, "", "", true, false).ctx == NULL, "NULL");
  mlx_fast_metal_kernel_config_free(mc);
  mlx_vector_string_free(one);
  int errs = t_errors;
  mlx_fast_cuda_kernel ck = mlx_fast_cuda_kernel_new("k", names, names, "", "", true, 0);
  CHECK(ck.ctx == NULL && t_errors == errs + 1 && strstr(t_last_error, "No CUDA back-end."));
  mlx_fast_cuda_kernel_config cc = mlx_fast_cuda_kernel_config_new();
  CHECK_FAILS(mlx_fast_cuda_kernel_apply(&outs, ck, ins, cc, S), "[cuda_kernel] No CUDA back-end.");
  mlx_fast_cuda_kernel_config_free(cc);
  mlx_vector_string_free(names);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(ins);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_norms();
  test_rope();
  test_sdpa();
  test_kernels();
  mlx_stream_free(S);
  return t_finish();
}
