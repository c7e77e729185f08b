/* mlx/c/random.h: random number generation.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_random_bernoulli(mlx_array *res, const mlx_array p, const int *shape, size_t shape_num,
                         const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_bits(mlx_array *res, const int *shape, size_t shape_num, int width,
                    const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_categorical_shape(mlx_array *res, const mlx_array logits, int axis, const int *shape,
                                 size_t shape_num, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_categorical_num_samples(mlx_array *res, const mlx_array logits_, int axis,
                                       int num_samples, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_categorical(mlx_array *res, const mlx_array logits, int axis, const mlx_array key,
                           const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_gumbel(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                      const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_key(mlx_array* res, uint64_t seed) {
  return capi_not_impl(__func__);
}

int mlx_random_laplace(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                       float loc, float scale, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_multivariate_normal(mlx_array *res, const mlx_array mean, const mlx_array cov,
                                   const int *shape, size_t shape_num, mlx_dtype dtype,
                                   const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_normal_broadcast(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                                const mlx_array loc, const mlx_array scale, const mlx_array key,
                                const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_normal(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                      float loc, float scale, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_permutation(mlx_array *res, const mlx_array x, int axis, const mlx_array key,
                           const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_permutation_arange(mlx_array* res, int x, const mlx_array key , const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_randint(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_seed(uint64_t seed) {
  return capi_not_impl(__func__);
}

int mlx_random_split_num(mlx_array* res, const mlx_array key, int num, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_split(mlx_array* res_0, mlx_array* res_1, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_truncated_normal(mlx_array *res, const mlx_array lower, const mlx_array upper,
                                const int *shape, size_t shape_num, mlx_dtype dtype,
                                const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_random_uniform(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s) {
  return capi_not_impl(__func__);
}
