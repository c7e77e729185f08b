/* C API: mlx/c/random.h.  The expected numbers are MLX 0.32.4's, from its
 * C++ API (mlx::core::random, which mlx-c wraps) with key(0) and key(42):
 * the same key and call must give MLX's samples bit for bit. */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

/* The array holds exactly want[0..n) (uint32, or float32 bit for bit). */
static int same_u32(mlx_array a, const uint32_t *want, size_t n) {
  if (mlx_array_eval(a) || mlx_array_size(a) != n || mlx_array_dtype(a) != MLX_UINT32) return 0;
  const uint32_t *p = mlx_array_data_uint32(a);
  for (size_t i = 0; i < n; i++)
    if (p[i] != want[i]) return 0;
  return 1;
}

static int same_f32(mlx_array a, const float *want, size_t n) {
  if (mlx_array_eval(a) || mlx_array_size(a) != n || mlx_array_dtype(a) != MLX_FLOAT32) return 0;
  const float *p = mlx_array_data_float32(a);
  for (size_t i = 0; i < n; i++)
    if (memcmp(&p[i], &want[i], sizeof(float)) != 0) return 0; /* bit for bit */
  return 1;
}

static mlx_array key(uint64_t seed) {
  mlx_array k = mlx_array_new();
  CHECK(mlx_random_key(&k, seed) == 0);
  return k;
}

static mlx_array scalar_f(float v) { return mlx_array_new_float(v); }

static void test_keys(void) {
  mlx_array k = key(42), r = mlx_array_new(), r2 = mlx_array_new();
  CHECK_PRINTS(k, "array([0, 42], dtype=uint32)");
  mlx_array big = key(0xFFFFFFFFFFFFFFFFull);
  CHECK_PRINTS(big, "array([4294967295, 4294967295], dtype=uint32)");
  mlx_array k0 = key(0);
  const uint32_t split3[] = {2467461003u, 428148500u, 3186719485u, 3840466878u,
                             2562233961u, 1946702221u};
  CHECK(mlx_random_split_num(&r, k0, 3, S) == 0);
  CHECK(same_u32(r, split3, 6));
  CHECK(mlx_array_ndim(r) == 2 && mlx_array_shape(r)[0] == 3 && mlx_array_shape(r)[1] == 2);
  const uint32_t a[] = {4146024105u, 967050713u}, b[] = {2718843009u, 1272950319u};
  CHECK(mlx_random_split(&r, &r2, k0, S) == 0);
  CHECK(same_u32(r, a, 2) && same_u32(r2, b, 2));
  CHECK_FAILS(mlx_random_split(&r, &r2, mlx_array_new(), S), "expected a non-empty mlx_array");
  mlx_array bad = mlx_array_new_int(3);
  CHECK_FAILS(mlx_random_split_num(&r, bad, 2, S),
              "[bits] Expected key type uint32 but received int32.");
  mlx_array_free(bad);
  mlx_array_free(k);
  mlx_array_free(k0);
  mlx_array_free(big);
  mlx_array_free(r);
  mlx_array_free(r2);
}

static void test_bits(void) {
  mlx_array k0 = key(0), k42 = key(42), r = mlx_array_new();
  int s7[] = {7}, s3[] = {3}, s5[] = {5}, s23[] = {2, 3};
  CHECK(mlx_random_bits(&r, s7, 1, 1, k0, S) == 0);
  const uint8_t w1[] = {143, 35, 95, 55, 29, 21, 219};
  CHECK(mlx_array_eval(r) == 0 && mlx_array_dtype(r) == MLX_UINT8 && mlx_array_size(r) == 7 &&
        memcmp(mlx_array_data_uint8(r), w1, 7) == 0);
  CHECK(mlx_random_bits(&r, s23, 2, 1, k42, S) == 0);
  CHECK_PRINTS(r, "array([[45, 179, 215],\n       [3, 244, 131]], dtype=uint8)");
  CHECK(mlx_random_bits(&r, s3, 1, 2, k0, S) == 0);
  CHECK_PRINTS(r, "array([9103, 14175, 5405], dtype=uint16)");
  CHECK(mlx_random_bits(&r, s5, 1, 2, k42, S) == 0);
  CHECK_PRINTS(r, "array([8426, 37627, 63599, 6563, 55571], dtype=uint16)");
  const uint32_t w4[] = {3134548294u, 3733159049u, 843694964u, 894150801u, 801545058u};
  CHECK(mlx_random_bits(&r, s5, 1, 4, k42, S) == 0);
  CHECK(same_u32(r, w4, 5));
  CHECK(mlx_random_bits(&r, NULL, 0, 4, k42, S) == 0);
  CHECK(mlx_array_ndim(r) == 0);
  int neg[] = {2, -1};
  CHECK_FAILS(mlx_random_bits(&r, neg, 2, 4, k42, S), "[bits] Negative dimensions not allowed.");
  CHECK_FAILS(mlx_random_bits(&r, s3, 1, 3, k42, S),
              "[bits] Bit width must be in {1, 2, 4} but got 3.");
  CHECK_FAILS(mlx_random_bits(&r, s3, 1, 4, r, S), "[bits] Expected key shape (2) but received ()");
  mlx_array_free(k0);
  mlx_array_free(k42);
  mlx_array_free(r);
}

static void test_distributions(void) {
  mlx_array k = key(42), r = mlx_array_new();
  int s3[] = {3}, s4[] = {4}, s5[] = {5}, s6[] = {6};
  mlx_array lo = scalar_f(-1.0f), hi = scalar_f(3.0f);
  const float uni[] = {1.29657769f, 2.42655015f, -0.762155294f, -0.750577569f};
  CHECK(mlx_random_uniform(&r, lo, hi, s4, 1, MLX_FLOAT32, k, S) == 0);
  CHECK(same_f32(r, uni, 4));

  const float nrm[] = {0.186935648f, 1.06533384f, -1.5593127f, -1.53529537f};
  CHECK(mlx_random_normal(&r, s4, 1, MLX_FLOAT32, 0.0f, 1.0f, k, S) == 0);
  CHECK(same_f32(r, nrm, 4));
  const float nrm_ls[] = {1.59346783f, 2.03266692f, 0.720343649f, 0.732352316f};
  CHECK(mlx_random_normal(&r, s4, 1, MLX_FLOAT32, 1.5f, 0.5f, k, S) == 0);
  CHECK(same_f32(r, nrm_ls, 4));
  mlx_array loc = scalar_f(1.5f), scale = scalar_f(0.5f);
  CHECK(mlx_random_normal_broadcast(&r, s4, 1, MLX_FLOAT32, loc, scale, k, S) == 0);
  CHECK(same_f32(r, nrm_ls, 4));
  CHECK(mlx_random_normal_broadcast(&r, s4, 1, MLX_FLOAT32, mlx_array_new(), mlx_array_new(), k,
                                    S) == 0);
  CHECK(same_f32(r, nrm, 4));
  CHECK(mlx_random_normal(&r, s3, 1, MLX_FLOAT16, 0.0f, 1.0f, k, S) == 0);
  CHECK_PRINTS(r, "array([0.18689, -1.28125, -1.55859], dtype=float16)");

  mlx_array ilo = mlx_array_new_int(-3), ihi = mlx_array_new_int(10);
  CHECK(mlx_random_randint(&r, ilo, ihi, s6, 1, MLX_INT32, k, S) == 0);
  CHECK_PRINTS(r, "array([6, 8, 8, -1, -1, 4], dtype=int32)");
  mlx_array p = scalar_f(0.3f);
  CHECK(mlx_random_bernoulli(&r, p, s6, 1, k, S) == 0);
  CHECK_PRINTS(r, "array([False, False, False, True, True, False], dtype=bool)");
  mlx_array tlo = scalar_f(-1.0f), thi = scalar_f(2.0f);
  const float trunc[] = {0.328271568f, 1.07984388f, -0.815720856f, -0.807465255f};
  CHECK(mlx_random_truncated_normal(&r, tlo, thi, s4, 1, MLX_FLOAT32, k, S) == 0);
  CHECK(same_f32(r, trunc, 4));
  const float gum[] = {0.589013696f, 1.86600649f, -1.03759873f, -1.02061534f};
  CHECK(mlx_random_gumbel(&r, s4, 1, MLX_FLOAT32, k, S) == 0);
  CHECK(same_f32(r, gum, 4));
  const float lap[] = {0.178984195f, -1.99846435f, 4.75856781f, 4.66350794f};
  CHECK(mlx_random_laplace(&r, s4, 1, MLX_FLOAT32, 0.5f, 2.0f, k, S) == 0);
  CHECK(same_f32(r, lap, 4));

  float lg4[] = {0.1f, 1.0f, -0.5f, 2.0f}, lg6[] = {0.1f, 1.0f, -0.5f, 2.0f, 0.0f, 0.3f};
  int d4[] = {4}, d23[] = {2, 3};
  mlx_array logits = mlx_array_new_data(lg4, d4, 1, MLX_FLOAT32);
  mlx_array logits2 = mlx_array_new_data(lg6, d23, 2, MLX_FLOAT32);
  CHECK(mlx_random_categorical_shape(&r, logits, 0, s5, 1, k, S) == 0);
  CHECK_PRINTS(r, "array([3, 3, 1, 1, 1], dtype=uint32)");
  CHECK(mlx_random_categorical_num_samples(&r, logits2, -1, 4, k, S) == 0);
  CHECK_PRINTS(r, "array([[0, 0, 0, 1],\n       [0, 0, 0, 0]], dtype=uint32)");
  CHECK(mlx_random_categorical(&r, logits2, 0, k, S) == 0);
  CHECK_PRINTS(r, "array([1, 0, 0], dtype=uint32)");
  CHECK_FAILS(mlx_random_categorical(&r, logits2, 2, k, S),
              "[categorical] Invalid axis 2 for logits with 2 dimensions.");

  CHECK(mlx_random_permutation_arange(&r, 6, k, S) == 0);
  CHECK_PRINTS(r, "array([4, 3, 5, 0, 1, 2], dtype=uint32)");
  int x6[] = {0, 1, 2, 3, 4, 5}, d32[] = {3, 2};
  mlx_array x = mlx_array_new_data(x6, d32, 2, MLX_INT32);
  CHECK(mlx_random_permutation(&r, x, 0, k, S) == 0);
  CHECK_PRINTS(r, "array([[4, 5],\n       [2, 3],\n       [0, 1]], dtype=int32)");

  float m2[] = {1.0f, -2.0f}, c22[] = {2.0f, 0.5f, 0.5f, 1.0f};
  int d2[] = {2}, dd[] = {2, 2}, n1[] = {20000};
  mlx_array mean = mlx_array_new_data(m2, d2, 1, MLX_FLOAT32);
  mlx_array cov = mlx_array_new_data(c22, dd, 2, MLX_FLOAT32);
  CHECK(mlx_random_multivariate_normal(&r, mean, cov, n1, 1, MLX_FLOAT32, k, S) == 0);
  CHECK(mlx_array_eval(r) == 0 && mlx_array_size(r) == 40000);
  const float *v = mlx_array_data_float32(r);
  double s0 = 0, s1 = 0;
  for (int i = 0; i < 20000; i++) s0 += v[2 * i], s1 += v[2 * i + 1];
  CHECK_CLOSE(s0 / 20000, 1.0, 0.05);
  CHECK_CLOSE(s1 / 20000, -2.0, 0.05);
  CHECK_FAILS(mlx_random_multivariate_normal(&r, mean, cov, NULL, 0, MLX_FLOAT16, k, S),
              "[multivariate_normal] dtype must be float32.");

  /* errors leave the result alone */
  mlx_array keep = mlx_array_new();
  CHECK_FAILS(mlx_random_uniform(&keep, lo, hi, s4, 1, MLX_INT32, k, S),
              "[uniform] Can only generate uniform numbers with real floating point type.");
  CHECK_FAILS(mlx_random_uniform(&keep, lo, hi, s4, 1, MLX_FLOAT64, k, S),
              "[uniform] Unsupported type.");
  CHECK_FAILS(mlx_random_normal(&keep, s4, 1, MLX_INT32, 0.0f, 1.0f, k, S),
              "[normal] Only floating point and complex64 types are supported.");
  CHECK_FAILS(mlx_random_randint(&keep, ilo, ihi, s4, 1, MLX_FLOAT32, k, S),
              "[randint] randint only accepts integer dtypes and bool.");
  CHECK_FAILS(mlx_random_bernoulli(&keep, ilo, s4, 1, k, S),
              "[bernoulli] bernoulli probability `p` must be a float type.");
  CHECK_FAILS(mlx_random_laplace(&keep, s4, 1, MLX_INT32, 0.0f, 1.0f, k, S),
              "[laplace] Only real floating point types are supported.");
  CHECK_FAILS(mlx_random_uniform(&keep, mlx_array_new(), hi, s4, 1, MLX_FLOAT32, k, S),
              "expected a non-empty mlx_array");
  CHECK(keep.ctx == NULL);

  mlx_array arrs[] = {k,    r,     lo,     hi,      loc,  scale, ilo, ihi, p, tlo,
                      thi, logits, logits2, x, mean, cov};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) mlx_array_free(arrs[i]);
}

/* mlx_random_seed seeds the calling thread's global key, which every draw
 * with an empty key advances (MLX's KeySequence). */
static void test_global_key(void) {
  mlx_array r = mlx_array_new(), r2 = mlx_array_new(), none = mlx_array_new();
  int s3[] = {3};
  mlx_array lo = scalar_f(0.0f), hi = scalar_f(1.0f);
  const float first[] = {0.0777458325f, 0.174454302f, 0.83264631f};
  const float second[] = {0.584717035f, 0.436813712f, 0.706478179f};
  CHECK(mlx_random_seed(7) == 0);
  CHECK(mlx_random_uniform(&r, lo, hi, s3, 1, MLX_FLOAT32, none, S) == 0);
  CHECK(mlx_random_uniform(&r2, lo, hi, s3, 1, MLX_FLOAT32, none, S) == 0);
  CHECK(same_f32(r, first, 3) && same_f32(r2, second, 3));
  CHECK(mlx_random_seed(7) == 0);
  CHECK(mlx_random_uniform(&r2, lo, hi, s3, 1, MLX_FLOAT32, none, S) == 0);
  CHECK(same_f32(r2, first, 3));
  /* a failing call checks its arguments before it draws a key */
  CHECK(mlx_random_seed(7) == 0);
  CHECK_FAILS(mlx_random_uniform(&r, lo, hi, s3, 1, MLX_INT32, none, S), "[uniform]");
  CHECK(mlx_random_uniform(&r, lo, hi, s3, 1, MLX_FLOAT32, none, S) == 0);
  CHECK(same_f32(r, first, 3));
  mlx_array_free(r);
  mlx_array_free(r2);
  mlx_array_free(lo);
  mlx_array_free(hi);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_keys();
  test_bits();
  test_distributions();
  test_global_key();
  mlx_stream_free(S);
  return t_finish();
}
