/* mx.random: keys, the global key sequence, bits and the samplers built
 * directly on uniform (uniform, normal, randint, bernoulli,
 * truncated_normal, gumbel, laplace).  Each sampler is MLX's composition
 * (mlx/random.cpp), op for op and in the same dtypes, because the numbers
 * must be MLX's to the last bit: a change of order or precision here (an
 * fma, a division folded into a multiply) changes the samples.
 * categorical, permutation and multivariate_normal: random_dist.c. */
#include "ops/random.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "ops/binary.h"
#include "ops/shape.h"
#include "ops/unary.h"
#include "primitives/random.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

static cm_array *finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

static cm_array *scalar(double v, cm_dtype dt) { return cm_array_scalar_double(v, dt); }

/* ---- keys -------------------------------------------------------------- */

cm_array *cm_random_key(uint64_t seed) {
  uint32_t k[2] = {(uint32_t)(seed >> 32), (uint32_t)seed};
  int32_t shape[1] = {2};
  return cm_array_from_data(k, 1, shape, CM_UINT32);
}

/* The thread's key lives in a _Thread_local slot (fast, and visible to a
 * leak checker); a pthread key with the same value releases it when the
 * thread exits. */
static _Thread_local cm_array *thread_key;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static uint64_t start_seed;

static void release_at_exit(void *p) { cm_release(p); }

static void key_init(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  start_seed = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
  pthread_key_create(&exit_key, release_at_exit);
}

/* Takes the reference k. */
static void set_thread_key(cm_array *k) {
  pthread_once(&key_once, key_init);
  cm_array *old = thread_key;
  thread_key = k;
  pthread_setspecific(exit_key, k);
  cm_release(old);
}

static cm_array *thread_state(void) {
  pthread_once(&key_once, key_init);
  if (!thread_key) {
    cm_array *k = cm_random_key(start_seed);
    if (!k) return NULL;
    set_thread_key(k);
  }
  return thread_key;
}

void cm_random_seed(uint64_t seed) {
  cm_array *k = cm_random_key(seed);
  if (k) set_thread_key(k);
}

cm_array *cm_random_state(void) { return cm_retain(thread_state()); }

int cm_random_set_state(cm_array *key) {
  set_thread_key(cm_retain(key));
  return 0;
}

void cm_random_reset(void) {
  if (thread_key) set_thread_key(NULL);
}

cm_array *cm_random_next_key(void) {
  cm_array *k = thread_state(), *k1, *k2;
  if (!k || cm_random_split(k, &k1, &k2, CM_STREAM_DEFAULT)) return NULL;
  set_thread_key(k1);
  return k2;
}

/* ---- bits and split ----------------------------------------------------- */

/* bits(shape, width, key) with MLX's checks; unit selects the unit form
 * (primitives/random.h) with its clamp. */
static cm_array *bits_node(int ndim, const int32_t *shape, int width, bool unit, float upper,
                           cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return cm_error(CM_ERR_VALUE, "[bits] Negative dimensions not allowed."), NULL;
  cm_array *k = key ? cm_retain(key) : cm_random_next_key();
  if (!k) return NULL;
  char buf[256];
  cm_array *r = NULL;
  if (k->dtype != CM_UINT32)
    cm_error(CM_ERR_VALUE, "[bits] Expected key type uint32 but received %s.",
             cm_dtype_name(k->dtype));
  else if (k->ndim != 1 || k->shape[0] != 2)
    cm_error(CM_ERR_VALUE, "[bits] Expected key shape (2) but received %s.",
             cm_shape_str(buf, sizeof buf, k->ndim, k->shape));
  else if (width != 1 && width != 2 && width != 4)
    cm_error(CM_ERR_VALUE, "[bits] Bit width must be in {1, 2, 4} but got %d.", width);
  else {
    cm_random_bits_params p = {.width = width, .unit = unit, .upper = unit ? upper : 0.0f};
    r = cm_op_node(cm_random_bits_dtype(&p), ndim, shape, &cm_prim_random_bits, &p, sizeof p,
                   &k, 1, s);
  }
  cm_release(k);
  return r;
}

cm_array *cm_random_bits(int ndim, const int32_t *shape, int width, cm_array *key, cm_stream s) {
  return bits_node(ndim, shape, width, false, 0.0f, key, s);
}

cm_array *cm_random_split_num(cm_array *key, int num, cm_stream s) {
  int32_t shape[2] = {num, 2};
  return cm_random_bits(2, shape, 4, key, s);
}

int cm_random_split(cm_array *key, cm_array **k1, cm_array **k2, cm_stream s) {
  cm_rt t = {.n = 0};
  *k1 = *k2 = NULL;
  if (cm_op_stream(&s)) return -1;
  cm_array *keys = T(cm_random_split_num(key, 2, s));
  const int32_t start0[2] = {0, 0}, stop0[2] = {1, 2}, start1[2] = {1, 0}, stop1[2] = {2, 2};
  const int32_t kshape[1] = {2};
  cm_array *a = T(cm_slice(keys, 2, start0, 2, stop0, 0, NULL, s));
  cm_array *b = T(cm_slice(keys, 2, start1, 2, stop1, 0, NULL, s));
  cm_array *ra = T(cm_reshape(a, 1, kshape, s));
  cm_array *rb = T(cm_reshape(b, 1, kshape, s));
  cm_array *second = t.fail ? NULL : cm_retain(rb);
  if (cm_rt_done(&t, ra, k1)) return -1;
  *k2 = second;
  return 0;
}

/* ---- uniform ------------------------------------------------------------ */

/* The largest sample of each float type, as a float32: MLX draws in
 * [0, below_one] so that the result stays below high after rounding. */
static int below_one(cm_dtype dtype, float *out) {
  switch (dtype) {
  case CM_FLOAT32: *out = nextafterf(1.0f, 0.0f); return 0;
  case CM_FLOAT16: *out = cm_f16_to_f32((uint16_t)(cm_f32_to_f16(1.0f) - 1)); return 0;
  case CM_BFLOAT16: *out = cm_bf16_to_f32((uint16_t)(cm_f32_to_bf16(1.0f) - 1)); return 0;
  default: return cm_error(CM_ERR_RUNTIME, "[uniform] Unsupported type.");
  }
}

/* MLX's uniform: range * min(bits / UINT32_MAX, below_one) + low in the
 * dtype (the division and clamp in the bits' unit form).  low == NULL
 * and high == NULL are the defaults 0 and 1, where range * u + low is u
 * exactly and is skipped. */
static cm_array *uniform(cm_array *low, cm_array *high, int ndim, const int32_t *shape,
                         cm_dtype dtype, cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!cm_dtype_is_float(dtype))
    return cm_error(CM_ERR_VALUE, "[uniform] Can only generate uniform numbers with real "
                                  "floating point type."),
           NULL;
  cm_rt t = {.n = 0};
  cm_array *lo = NULL, *range = NULL;
  int rnd = 0;
  const int32_t *rshape = NULL;
  if (low) {
    lo = T(cm_astype(low, dtype, s));
    cm_array *hi = T(cm_astype(high, dtype, s));
    range = T(cm_subtract(hi, lo, s));
    if (t.fail) return finish(&t, NULL);
    rnd = range->ndim, rshape = range->shape;
  }
  int nb;
  int32_t bshape[CM_MAX_DIMS];
  float upper = 1.0f;
  if (cm_broadcast_shapes(ndim, shape, rnd, rshape, &nb, bshape)) {
    t.fail = true;
  } else if (!cm_shape_equal(nb, bshape, ndim, shape)) {
    char sa[256], sb[256];
    cm_error(CM_ERR_VALUE, "[uniform] Cannot generate random values of shape %s from "
                           "broadcasted shape %s.",
             cm_shape_str(sa, sizeof sa, ndim, shape), cm_shape_str(sb, sizeof sb, nb, bshape));
    t.fail = true;
  } else if (below_one(dtype, &upper)) {
    t.fail = true;
  }
  cm_array *u = t.fail ? NULL : T(bits_node(ndim, shape, 4, true, upper, key, s));
  cm_array *ut = T(cm_astype(u, dtype, s));
  if (!low) return finish(&t, ut);
  cm_array *scaled = T(cm_multiply(range, ut, s));
  return finish(&t, T(cm_add(scaled, lo, s)));
}

cm_array *cm_random_uniform(cm_array *low, cm_array *high, int ndim, const int32_t *shape,
                            cm_dtype dtype, cm_array *key, cm_stream s) {
  if (!low != !high)
    return cm_error(CM_ERR_VALUE, "[uniform] low and high must both be given."), NULL;
  return uniform(low, high, ndim, shape, dtype, key, s);
}

/* uniform(array(0, dtype), array(1, dtype), shape, dtype) */
static cm_array *uniform01(int ndim, const int32_t *shape, cm_dtype dtype, cm_array *key,
                           cm_stream s) {
  return uniform(NULL, NULL, ndim, shape, dtype, key, s);
}

/* uniform over [nextafter(-1, 0), 1) in float32: the input of erfinv for
 * normal samples and of the inverse CDF of laplace. */
static cm_array *uniform_pm1(int ndim, const int32_t *shape, cm_array *key, cm_stream s) {
  cm_rt t = {.n = 0};
  cm_array *lo = T(scalar(nextafterf(-1.0f, 0.0f), CM_FLOAT32));
  cm_array *hi = T(scalar(1.0, CM_FLOAT32));
  return finish(&t, T(cm_random_uniform(lo, hi, ndim, shape, CM_FLOAT32, key, s)));
}

/* ---- normal ------------------------------------------------------------- */

/* Real and imaginary parts erfinv(u) with u uniform in (-1, 1): each has
 * variance 1/2.  scale and loc apply as given (no cast). */
static cm_array *complex_normal(int ndim, const int32_t *shape, cm_array *loc, cm_array *scale,
                                cm_array *key, cm_stream s) {
  if (ndim + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[normal] Arrays may have at most %d dimensions.", CM_MAX_DIMS),
           NULL;
  int32_t sh[CM_MAX_DIMS];
  memcpy(sh, shape, sizeof *sh * (size_t)ndim);
  sh[ndim] = 2;
  cm_rt t = {.n = 0};
  cm_array *u = T(uniform_pm1(ndim + 1, sh, key, s));
  cm_array *e = T(cm_erfinv(u, s));
  cm_array *v = T(cm_view(e, CM_COMPLEX64, s));
  int last = -1;
  cm_array *r = T(cm_squeeze(v, 1, &last, s));
  if (scale) r = T(cm_multiply(scale, r, s));
  if (loc) r = T(cm_add(loc, r, s));
  return finish(&t, r);
}

cm_array *cm_random_normal(int ndim, const int32_t *shape, cm_dtype dtype, cm_array *loc,
                           cm_array *scale, cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (dtype == CM_COMPLEX64) return complex_normal(ndim, shape, loc, scale, key, s);
  if (!cm_dtype_is_float(dtype))
    return cm_error(CM_ERR_VALUE,
                    "[normal] Only floating point and complex64 types are supported."),
           NULL;
  cm_rt t = {.n = 0};
  cm_array *u = T(uniform_pm1(ndim, shape, key, s));
  cm_array *k = T(scalar(sqrt(2.0), dtype));
  if (scale) {
    cm_array *sc = T(cm_astype(scale, dtype, s));
    k = T(cm_multiply(k, sc, s));
  }
  cm_array *e = T(cm_erfinv(u, s));
  cm_array *et = T(cm_astype(e, dtype, s));
  cm_array *r = T(cm_multiply(k, et, s));
  if (loc) {
    cm_array *lt = T(cm_astype(loc, dtype, s));
    r = T(cm_add(lt, r, s));
  }
  return finish(&t, r);
}

/* ---- randint, bernoulli -------------------------------------------------- */

cm_array *cm_random_randint(cm_array *low, cm_array *high, int ndim, const int32_t *shape,
                            cm_dtype dtype, cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (cm_dtype_is_inexact(dtype))
    return cm_error(CM_ERR_VALUE, "[randint] randint only accepts integer dtypes and bool."),
           NULL;
  cm_rt t = {.n = 0};
  cm_array *u = T(cm_random_uniform(low, high, ndim, shape, CM_FLOAT32, key, s));
  /* floor, not the cast's truncation: -1.7 must become -2 */
  cm_array *f = T(cm_floor(u, s));
  cm_array *out = T(cm_astype(f, dtype, s));
  /* low and high may not be float32-exact, so the uniform can overshoot:
   * clamp to [low, high - 1] */
  cm_array *one = T(scalar(1.0, high->dtype));
  cm_array *hm1 = T(cm_subtract(high, one, s));
  cm_array *hi = T(cm_astype(hm1, dtype, s));
  cm_array *lo = T(cm_astype(low, dtype, s));
  cm_array *m = T(cm_minimum(out, hi, s));
  return finish(&t, T(cm_maximum(m, lo, s)));
}

cm_array *cm_random_bernoulli(cm_array *p, int ndim, const int32_t *shape, cm_array *key,
                              cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!cm_dtype_is_float(p->dtype))
    return cm_error(CM_ERR_VALUE, "[bernoulli] bernoulli probability `p` must be a float type."),
           NULL;
  if (ndim < 0) ndim = p->ndim, shape = p->shape;
  /* p on the scale [0, nextafter(UINT32_MAX)]: p >= 1 is always true and
   * p <= 0 never */
  cm_rt t = {.n = 0};
  cm_array *upper = T(scalar(nextafterf((float)UINT32_MAX, FLT_MAX), CM_FLOAT32));
  cm_array *bits = T(cm_random_bits(ndim, shape, 4, key, s));
  cm_array *thresh = T(cm_multiply(p, upper, s));
  cm_array *r = T(cm_less(bits, thresh, s));
  if (r && !cm_shape_equal(r->ndim, r->shape, ndim, shape)) {
    cm_error(CM_ERR_VALUE, "[bernoulli] shape of `p` is incompatible with argument `shape`.");
    t.fail = true;
  }
  return finish(&t, r);
}

/* ---- truncated normal, gumbel, laplace ---------------------------------- */

cm_array *cm_random_truncated_normal(cm_array *lower, cm_array *upper, int ndim,
                                     const int32_t *shape, cm_dtype dtype, cm_array *key,
                                     cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int32_t bshape[CM_MAX_DIMS];
  if (ndim < 0) {
    if (cm_broadcast_shapes(lower->ndim, lower->shape, upper->ndim, upper->shape, &ndim, bshape))
      return NULL;
    shape = bshape;
  }
  if (!cm_dtype_is_float(dtype))
    return cm_error(CM_ERR_VALUE,
                    "[trunc_normal] trunc_normal only accepts floating point dtypes."),
           NULL;
  /* JAX's method: the uniform between the CDFs at the bounds, mapped back */
  cm_rt t = {.n = 0};
  cm_array *sqrt2 = T(scalar(sqrt(2.0), dtype));
  cm_array *lo = T(cm_astype(lower, dtype, s));
  cm_array *hi = T(cm_astype(upper, dtype, s));
  cm_array *a = T(cm_divide(lo, sqrt2, s));
  cm_array *b = T(cm_divide(hi, sqrt2, s));
  cm_array *ea = T(cm_erf(a, s));
  cm_array *eb = T(cm_erf(b, s));
  cm_array *u = T(cm_random_uniform(ea, eb, ndim, shape, dtype, key, s));
  cm_array *e = T(cm_erfinv(u, s));
  cm_array *out = T(cm_multiply(sqrt2, e, s));
  cm_array *m = T(cm_minimum(hi, out, s));
  return finish(&t, T(cm_maximum(m, lo, s)));
}

/* -log(-log(uniform)) */
cm_array *cm_random_gumbel(int ndim, const int32_t *shape, cm_dtype dtype, cm_array *key,
                           cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  cm_rt t = {.n = 0};
  cm_array *u = T(uniform01(ndim, shape, dtype, key, s));
  cm_array *l1 = T(cm_log(u, s));
  cm_array *n1 = T(cm_negative(l1, s));
  cm_array *l2 = T(cm_log(n1, s));
  return finish(&t, T(cm_negative(l2, s)));
}

/* The inverse CDF: sign(u) * log1p(-|u|) for u uniform in (-1, 1). */
cm_array *cm_random_laplace(int ndim, const int32_t *shape, cm_dtype dtype, float loc, float scale,
                            cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!cm_dtype_is_float(dtype))
    return cm_error(CM_ERR_VALUE, "[laplace] Only real floating point types are supported."),
           NULL;
  cm_rt t = {.n = 0};
  cm_array *u = T(uniform_pm1(ndim, shape, key, s));
  cm_array *sg = T(cm_sign(u, s));
  cm_array *au = T(cm_abs(u, s));
  cm_array *m1 = T(scalar(-1.0, dtype));
  cm_array *na = T(cm_multiply(m1, au, s));
  cm_array *lp = T(cm_log1p(na, s));
  cm_array *v = T(cm_multiply(sg, lp, s));
  cm_array *r = T(cm_astype(v, dtype, s));
  if (scale != 1.0f) {
    cm_array *sc = T(scalar(scale, dtype));
    r = T(cm_multiply(sc, r, s));
  }
  if (loc != 0.0f) {
    cm_array *lc = T(scalar(loc, dtype));
    r = T(cm_add(lc, r, s));
  }
  return finish(&t, r);
}
