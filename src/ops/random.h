/* mx.random: MLX's counter-based generator.  A key is a uint32 array of
 * shape (2,) (key(seed) = [seed >> 32, seed & 0xffffffff]); bits(shape,
 * width, key) hashes counters under it with Threefry-2x32 (the RandomBits
 * primitive), and every sampler is MLX's composition of ops over those
 * bits, so a key gives MLX's numbers.
 *
 * The global key.  Each thread has its own (as MLX's KeySequence), first
 * key(t) with t the process's start time in milliseconds (read once, so
 * every thread starts from the same key, as in MLX); seed(s) replaces the
 * calling thread's key by key(s).  A draw without a key advances it:
 * split(k) gives (k1, k2), k1 becomes the global key and k2 is used.
 *
 * Every sampler takes key == NULL to mean "draw from the global key";
 * that happens where MLX's C++ API draws it, in bits(), after the
 * sampler's own checks (the Python bindings draw before calling, as MLX's
 * do).  Shapes are (ndim, shape) pairs; the keys, low/high, p, ... are
 * borrowed; results are new references or NULL with MLX's error.
 *
 * mlx-c mapping: mlx_random_<name> is cm_random_<name>, with the float
 * loc/scale of mlx_random_normal becoming 0-d arrays as MLX's C++
 * overload makes them (none when loc == 0 / scale == 1). */
#ifndef CMLX_OPS_RANDOM_H
#define CMLX_OPS_RANDOM_H

#include "ops/common.h"

/* ---- keys ---- */
cm_array *cm_random_key(uint64_t seed);
/* Seed the calling thread's global key. */
void cm_random_seed(uint64_t seed);
/* The calling thread's global key (a new reference; created on first
 * use), and its replacement (for state captured by a transform). */
cm_array *cm_random_state(void);
int cm_random_set_state(cm_array *key);
/* Advance the global key and return the key to draw with. */
cm_array *cm_random_next_key(void);
/* Forget the calling thread's key (the next use starts again from the
 * start-time key); for interpreter shutdown. */
void cm_random_reset(void);

/* uint8/uint16/uint32 (width 1, 2, 4) random bits of the given shape.
 * key must be uint32 of shape (2,). */
cm_array *cm_random_bits(int ndim, const int32_t *shape, int width, cm_array *key, cm_stream s);
/* num keys of shape (num, 2) from key; split gives two of shape (2,). */
cm_array *cm_random_split_num(cm_array *key, int num, cm_stream s);
int cm_random_split(cm_array *key, cm_array **k1, cm_array **k2, cm_stream s);

/* ---- distributions ---- */
/* [low, high) broadcast to shape, in a real floating dtype (float16,
 * bfloat16, float32; float64 is MLX's "[uniform] Unsupported type.").
 * low and high both NULL mean 0 and 1. */
cm_array *cm_random_uniform(cm_array *low, cm_array *high, int ndim, const int32_t *shape,
                            cm_dtype dtype, cm_array *key, cm_stream s);
/* N(loc, scale^2); loc/scale NULL mean 0 and 1.  complex64 draws real and
 * imaginary parts with variance 1/2 each. */
cm_array *cm_random_normal(int ndim, const int32_t *shape, cm_dtype dtype, cm_array *loc,
                           cm_array *scale, cm_array *key, cm_stream s);
/* Samples of N(mean, cov) (needs an SVD of cov: float32 only). */
cm_array *cm_random_multivariate_normal(cm_array *mean, cm_array *cov, int ndim,
                                        const int32_t *shape, cm_dtype dtype, cm_array *key,
                                        cm_stream s);
/* Integers in [low, high) (drawn from a float32 uniform and clamped). */
cm_array *cm_random_randint(cm_array *low, cm_array *high, int ndim, const int32_t *shape,
                            cm_dtype dtype, cm_array *key, cm_stream s);
/* bool with P(true) = p; ndim < 0 takes p's shape. */
cm_array *cm_random_bernoulli(cm_array *p, int ndim, const int32_t *shape, cm_array *key,
                              cm_stream s);
/* N(0, 1) restricted to [lower, upper]; ndim < 0: their broadcast shape. */
cm_array *cm_random_truncated_normal(cm_array *lower, cm_array *upper, int ndim,
                                     const int32_t *shape, cm_dtype dtype, cm_array *key,
                                     cm_stream s);
cm_array *cm_random_gumbel(int ndim, const int32_t *shape, cm_dtype dtype, cm_array *key,
                           cm_stream s);
cm_array *cm_random_laplace(int ndim, const int32_t *shape, cm_dtype dtype, float loc, float scale,
                            cm_array *key, cm_stream s);
/* Indices (uint32) drawn from the unnormalised log-probabilities along
 * axis: one per distribution, a given shape, or num_samples per
 * distribution (a new last axis). */
cm_array *cm_random_categorical(cm_array *logits, int axis, cm_array *key, cm_stream s);
cm_array *cm_random_categorical_shape(cm_array *logits, int axis, int ndim, const int32_t *shape,
                                      cm_array *key, cm_stream s);
cm_array *cm_random_categorical_num_samples(cm_array *logits, int axis, int num_samples,
                                            cm_array *key, cm_stream s);
/* x with its entries along axis shuffled; a shuffle of arange(n). */
cm_array *cm_random_permutation(cm_array *x, int axis, cm_array *key, cm_stream s);
cm_array *cm_random_permutation_arange(int n, cm_array *key, cm_stream s);

#endif
