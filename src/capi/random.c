/* mlx/c/random.h: adapters over src/ops/random.h.  An empty key handle
 * (ctx NULL) draws from the calling thread's global key, as mlx-c passes
 * std::nullopt for it; mlx_random_normal's float loc and scale become 0-d
 * arrays of the dtype unless they are 0 and 1 (MLX's C++ overload). */
#include "capi/capi.h"
#include "ops/random.h"

#pragma GCC diagnostic error "-Wmissing-prototypes"

static cm_array *key_of(mlx_array key) { return capi_arr(key); } /* NULL: the global key */

/* shape and dtype arguments; 0, or 1 after reporting */
static int shape_dtype(const char *fn, const int *shape, size_t num, int *ndim, mlx_dtype dtype) {
  return capi_shape(fn, shape, num, ndim) || capi_dtype(fn, dtype);
}

int mlx_random_key(mlx_array *res, uint64_t seed) { return capi_set(res, cm_random_key(seed)); }

int mlx_random_seed(uint64_t seed) {
  cm_random_seed(seed);
  return 0;
}

int mlx_random_bits(mlx_array *res, const int *shape, size_t shape_num, int width,
                    const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_shape("bits", shape, shape_num, &nd)) return 1;
  return capi_set(res, cm_random_bits(nd, shape, width, key_of(key), capi_stream(s)));
}

int mlx_random_split_num(mlx_array *res, const mlx_array key, int num, const mlx_stream s) {
  if (capi_need("split", key)) return 1;
  return capi_set(res, cm_random_split_num(capi_arr(key), num, capi_stream(s)));
}

int mlx_random_split(mlx_array *res_0, mlx_array *res_1, const mlx_array key,
                     const mlx_stream s) {
  cm_array *a, *b;
  if (capi_need("split", key)) return 1;
  if (cm_random_split(capi_arr(key), &a, &b, capi_stream(s))) return capi_fail();
  capi_set(res_0, a);
  return capi_set(res_1, b);
}

int mlx_random_uniform(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("uniform", low) || capi_need("uniform", high) ||
      shape_dtype("uniform", shape, shape_num, &nd, dtype))
    return 1;
  return capi_set(res, cm_random_uniform(capi_arr(low), capi_arr(high), nd, shape, (cm_dtype)dtype,
                                         key_of(key), capi_stream(s)));
}

int mlx_random_normal_broadcast(mlx_array *res, const int *shape, size_t shape_num,
                                mlx_dtype dtype, const mlx_array loc, const mlx_array scale,
                                const mlx_array key, const mlx_stream s) {
  int nd;
  if (shape_dtype("normal", shape, shape_num, &nd, dtype)) return 1;
  return capi_set(res, cm_random_normal(nd, shape, (cm_dtype)dtype, capi_arr(loc),
                                        capi_arr(scale), key_of(key), capi_stream(s)));
}

int mlx_random_normal(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                      float loc, float scale, const mlx_array key, const mlx_stream s) {
  int nd;
  if (shape_dtype("normal", shape, shape_num, &nd, dtype)) return 1;
  cm_array *l = loc == 0.0f ? NULL : cm_array_scalar_double(loc, (cm_dtype)dtype);
  cm_array *sc = scale == 1.0f ? NULL : cm_array_scalar_double(scale, (cm_dtype)dtype);
  cm_array *r = NULL;
  if ((loc == 0.0f || l) && (scale == 1.0f || sc))
    r = cm_random_normal(nd, shape, (cm_dtype)dtype, l, sc, key_of(key), capi_stream(s));
  cm_release(l);
  cm_release(sc);
  return capi_set(res, r);
}

int mlx_random_multivariate_normal(mlx_array *res, const mlx_array mean, const mlx_array cov,
                                   const int *shape, size_t shape_num, mlx_dtype dtype,
                                   const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("multivariate_normal", mean) || capi_need("multivariate_normal", cov) ||
      shape_dtype("multivariate_normal", shape, shape_num, &nd, dtype))
    return 1;
  return capi_set(res, cm_random_multivariate_normal(capi_arr(mean), capi_arr(cov), nd, shape,
                                                     (cm_dtype)dtype, key_of(key),
                                                     capi_stream(s)));
}

int mlx_random_randint(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("randint", low) || capi_need("randint", high) ||
      shape_dtype("randint", shape, shape_num, &nd, dtype))
    return 1;
  return capi_set(res, cm_random_randint(capi_arr(low), capi_arr(high), nd, shape, (cm_dtype)dtype,
                                         key_of(key), capi_stream(s)));
}

int mlx_random_bernoulli(mlx_array *res, const mlx_array p, const int *shape, size_t shape_num,
                         const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("bernoulli", p) || capi_shape("bernoulli", shape, shape_num, &nd)) return 1;
  return capi_set(res, cm_random_bernoulli(capi_arr(p), nd, shape, key_of(key), capi_stream(s)));
}

int mlx_random_truncated_normal(mlx_array *res, const mlx_array lower, const mlx_array upper,
                                const int *shape, size_t shape_num, mlx_dtype dtype,
                                const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("truncated_normal", lower) || capi_need("truncated_normal", upper) ||
      shape_dtype("truncated_normal", shape, shape_num, &nd, dtype))
    return 1;
  return capi_set(res, cm_random_truncated_normal(capi_arr(lower), capi_arr(upper), nd, shape,
                                                  (cm_dtype)dtype, key_of(key), capi_stream(s)));
}

int mlx_random_gumbel(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                      const mlx_array key, const mlx_stream s) {
  int nd;
  if (shape_dtype("gumbel", shape, shape_num, &nd, dtype)) return 1;
  return capi_set(res,
                  cm_random_gumbel(nd, shape, (cm_dtype)dtype, key_of(key), capi_stream(s)));
}

int mlx_random_laplace(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                       float loc, float scale, const mlx_array key, const mlx_stream s) {
  int nd;
  if (shape_dtype("laplace", shape, shape_num, &nd, dtype)) return 1;
  return capi_set(res, cm_random_laplace(nd, shape, (cm_dtype)dtype, loc, scale, key_of(key),
                                         capi_stream(s)));
}

int mlx_random_categorical_shape(mlx_array *res, const mlx_array logits, int axis, const int *shape,
                                 size_t shape_num, const mlx_array key, const mlx_stream s) {
  int nd;
  if (capi_need("categorical", logits) || capi_shape("categorical", shape, shape_num, &nd))
    return 1;
  return capi_set(res, cm_random_categorical_shape(capi_arr(logits), axis, nd, shape, key_of(key),
                                                   capi_stream(s)));
}

int mlx_random_categorical_num_samples(mlx_array *res, const mlx_array logits_, int axis,
                                       int num_samples, const mlx_array key, const mlx_stream s) {
  if (capi_need("categorical", logits_)) return 1;
  return capi_set(res, cm_random_categorical_num_samples(capi_arr(logits_), axis, num_samples,
                                                         key_of(key), capi_stream(s)));
}

int mlx_random_categorical(mlx_array *res, const mlx_array logits, int axis, const mlx_array key,
                           const mlx_stream s) {
  if (capi_need("categorical", logits)) return 1;
  return capi_set(res,
                  cm_random_categorical(capi_arr(logits), axis, key_of(key), capi_stream(s)));
}

int mlx_random_permutation(mlx_array *res, const mlx_array x, int axis, const mlx_array key,
                           const mlx_stream s) {
  if (capi_need("permutation", x)) return 1;
  return capi_set(res, cm_random_permutation(capi_arr(x), axis, key_of(key), capi_stream(s)));
}

int mlx_random_permutation_arange(mlx_array *res, int x, const mlx_array key, const mlx_stream s) {
  return capi_set(res, cm_random_permutation_arange(x, key_of(key), capi_stream(s)));
}
