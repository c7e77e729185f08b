/* Scans on the CPU.
 *
 * Forward scans work on row-contiguous data seen as (outer, n, inner):
 * n is the scanned axis.  A non-contiguous input is first copied into the
 * output buffer (or the input's buffer is donated) and scanned in place,
 * so the loops only know two layouts: inner == 1 (each scan is one
 * contiguous run) and inner > 1 (a block of up to BLK neighbouring scans
 * advances together, reading whole contiguous slabs, which vectorises).
 * Work items are (outer, block) pairs spread over the thread pool.  Each
 * step stores the result in the output type and continues from the
 * stored value, so float16/bfloat16 round after every step as in MLX, and
 * integer sums and products wrap (computed in unsigned arithmetic, where
 * C defines overflow).
 * (Derivatives are compositions of scans and other ops: primitives/scan.c.) */
#include "backend/cpu/scan.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/scan_table.h"
#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/scan.h"

#define BLK 256

/* ------------------------------------------------------------------ */
/* Element steps on storage types */

#define ADD_U(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define MUL_U(T, U, a, b) ((T)((U)(a) * (U)(b)))
#define MAX_I(a, b) ((b) > (a) ? (b) : (a))
#define MIN_I(a, b) ((b) < (a) ? (b) : (a))
/* Real floats: a NaN, once seen, stays. */
#define MAX_F(a, b) ((b) > (a) || isnan(b) ? (b) : (a))
#define MIN_F(a, b) ((b) < (a) || isnan(b) ? (b) : (a))

static inline float lae_f(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  float m = a > b ? a : b, d = a > b ? b - a : a - b;
  if (isinf(m)) return m; /* -inf: both -inf; +inf wins */
  return m + log1pf(expf(d));
}
static inline double lae_d(double a, double b) {
  if (isnan(a) || isnan(b)) return a + b;
  double m = a > b ? a : b, d = a > b ? b - a : a - b;
  if (isinf(m)) return m;
  return m + log1p(exp(d));
}
/* Complex logaddexp: factor out the operand with the larger real part. */
static inline cm_c64_t lae_c(cm_c64_t a, cm_c64_t b) {
  if (crealf(a) < crealf(b)) {
    cm_c64_t t = a;
    a = b, b = t;
  }
  if (crealf(a) == -INFINITY) return a;
  double complex r = (double complex)a + clog(1.0 + cexp((double complex)b - (double complex)a));
  return (cm_c64_t)r;
}
/* MLX's complex cummax/cummin compare lexicographically with no NaN rule
 * (a comparison with a NaN is false): max takes the element b unless it
 * is below the running a, min takes b only when it is below a. */
static inline bool lt_c(cm_c64_t x, cm_c64_t y) {
  return crealf(x) < crealf(y) || (crealf(x) == crealf(y) && cimagf(x) < cimagf(y));
}
static inline cm_c64_t max_c(cm_c64_t a, cm_c64_t b) { return lt_c(b, a) ? a : b; }
static inline cm_c64_t min_c(cm_c64_t a, cm_c64_t b) { return lt_c(b, a) ? b : a; }

#define H_STEP(L, S, OP, a, b) S(OP(L(a), L(b)))
#define ADD_F(a, b) ((a) + (b))
#define MUL_F(a, b) ((a) * (b))

/* ------------------------------------------------------------------ */
/* Forward scan loops */

typedef void (*scan_fn)(const void *src, void *dst, int64_t n, int64_t inner, int64_t cols,
                        bool rev, bool incl);

#define DEF_SCAN(NAME, T, STEP, INIT)                                                      \
  static void scan_##NAME(const void *sv, void *dv, int64_t n, int64_t inner, int64_t cols, \
                          bool rev, bool incl) {                                           \
    const T *s = sv;                                                                       \
    T *d = dv;                                                                             \
    int64_t step = rev ? -inner : inner, at = rev ? (n - 1) * inner : 0;                   \
    if (cols == 1) {                                                                       \
      const T *p = s + at;                                                                 \
      T *q = d + at;                                                                       \
      if (incl) {                                                                          \
        T acc = *p;                                                                        \
        *q = acc;                                                                          \
        for (int64_t k = 1; k < n; k++) {                                                  \
          p += step, q += step;                                                            \
          acc = STEP(acc, *p);                                                             \
          *q = acc;                                                                        \
        }                                                                                  \
      } else {                                                                             \
        T acc = INIT;                                                                      \
        for (int64_t k = 0; k < n; k++, p += step, q += step) {                            \
          T x = *p;                                                                        \
          *q = acc;                                                                        \
          acc = STEP(acc, x);                                                              \
        }                                                                                  \
      }                                                                                    \
      return;                                                                              \
    }                                                                                      \
    T acc[BLK];                                                                            \
    const T *p = s + at;                                                                   \
    T *q = d + at;                                                                         \
    int64_t k = 0;                                                                         \
    if (incl) {                                                                            \
      for (int64_t j = 0; j < cols; j++) acc[j] = q[j] = p[j];                             \
      k = 1, p += step, q += step;                                                         \
    } else {                                                                               \
      for (int64_t j = 0; j < cols; j++) acc[j] = INIT;                                    \
    }                                                                                      \
    for (; k < n; k++, p += step, q += step) {                                             \
      if (incl) {                                                                          \
        for (int64_t j = 0; j < cols; j++) {                                               \
          acc[j] = STEP(acc[j], p[j]);                                                     \
          q[j] = acc[j];                                                                   \
        }                                                                                  \
      } else {                                                                             \
        for (int64_t j = 0; j < cols; j++) {                                               \
          T x = p[j];                                                                      \
          q[j] = acc[j];                                                                   \
          acc[j] = STEP(acc[j], x);                                                        \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }

/* Integers: sum, prod, max, min, with their exclusive identities. */
#define DEF_INT(SFX, T, U, LO, HI)                                        \
  static inline T add_##SFX(T a, T b) { return ADD_U(T, U, a, b); }       \
  static inline T mul_##SFX(T a, T b) { return MUL_U(T, U, a, b); }       \
  static inline T max_##SFX(T a, T b) { return MAX_I(a, b); }             \
  static inline T min_##SFX(T a, T b) { return MIN_I(a, b); }             \
  DEF_SCAN(sum_##SFX, T, add_##SFX, (T)0)                                 \
  DEF_SCAN(prod_##SFX, T, mul_##SFX, (T)1)                                \
  DEF_SCAN(max_##SFX, T, max_##SFX, (T)(LO))                              \
  DEF_SCAN(min_##SFX, T, min_##SFX, (T)(HI))
DEF_INT(u8, uint8_t, uint32_t, 0, UINT8_MAX)
DEF_INT(u16, uint16_t, uint32_t, 0, UINT16_MAX)
DEF_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
DEF_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)
DEF_INT(i8, int8_t, uint32_t, INT8_MIN, INT8_MAX)
DEF_INT(i16, int16_t, uint32_t, INT16_MIN, INT16_MAX)
DEF_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
DEF_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)

/* bool: prod is and, max is or, min is and (sum is taken in int32). */
static inline bool and_b8(bool a, bool b) { return a && b; }
static inline bool or_b8(bool a, bool b) { return a || b; }
DEF_SCAN(prod_b8, bool, and_b8, true)
DEF_SCAN(max_b8, bool, or_b8, false)
DEF_SCAN(min_b8, bool, and_b8, true)

/* float / double */
#define DEF_FLT(SFX, T, LAE)                                              \
  static inline T add_##SFX(T a, T b) { return a + b; }                   \
  static inline T mul_##SFX(T a, T b) { return a * b; }                   \
  static inline T max_##SFX(T a, T b) { return MAX_F(a, b); }             \
  static inline T min_##SFX(T a, T b) { return MIN_F(a, b); }             \
  DEF_SCAN(sum_##SFX, T, add_##SFX, (T)0)                                 \
  DEF_SCAN(prod_##SFX, T, mul_##SFX, (T)1)                                \
  DEF_SCAN(max_##SFX, T, max_##SFX, (T)-INFINITY)                         \
  DEF_SCAN(min_##SFX, T, min_##SFX, (T)INFINITY)                          \
  DEF_SCAN(lae_##SFX, T, LAE, (T)-INFINITY)
DEF_FLT(f32, float, lae_f)
DEF_FLT(f64, double, lae_d)

/* Halves: computed in float, rounded to the type after every step. */
#define DEF_HALF(SFX, LOAD, STORE, ONE, NINF, PINF)          \
  static inline uint16_t add_##SFX(uint16_t a, uint16_t b) { \
    return H_STEP(LOAD, STORE, ADD_F, a, b);                 \
  }                                                          \
  static inline uint16_t mul_##SFX(uint16_t a, uint16_t b) { \
    return H_STEP(LOAD, STORE, MUL_F, a, b);                 \
  }                                                          \
  static inline uint16_t max_##SFX(uint16_t a, uint16_t b) { \
    float x = LOAD(a), y = LOAD(b);                          \
    return y > x || isnan(y) ? b : a;                        \
  }                                                          \
  static inline uint16_t min_##SFX(uint16_t a, uint16_t b) { \
    float x = LOAD(a), y = LOAD(b);                          \
    return y < x || isnan(y) ? b : a;                        \
  }                                                          \
  static inline uint16_t lae_##SFX(uint16_t a, uint16_t b) { \
    return H_STEP(LOAD, STORE, lae_f, a, b);                 \
  }                                                          \
  DEF_SCAN(sum_##SFX, uint16_t, add_##SFX, (uint16_t)0)      \
  DEF_SCAN(prod_##SFX, uint16_t, mul_##SFX, (uint16_t)(ONE)) \
  DEF_SCAN(max_##SFX, uint16_t, max_##SFX, (uint16_t)(NINF)) \
  DEF_SCAN(min_##SFX, uint16_t, min_##SFX, (uint16_t)(PINF)) \
  DEF_SCAN(lae_##SFX, uint16_t, lae_##SFX, (uint16_t)(NINF))
DEF_HALF(f16, cm_f16_to_f32, cm_f32_to_f16, 0x3c00u, 0xfc00u, 0x7c00u)
DEF_HALF(bf16, cm_bf16_to_f32, cm_f32_to_bf16, 0x3f80u, 0xff80u, 0x7f80u)

/* complex64 */
static inline cm_c64_t add_c64(cm_c64_t a, cm_c64_t b) { return a + b; }
static inline cm_c64_t mul_c64(cm_c64_t a, cm_c64_t b) { return a * b; }
/* CMPLXF is missing under some clang + glibc pairs; C11 lays a complex
 * out as two floats, so a union builds one portably. */
static inline cm_c64_t cplx(float re, float im) {
  union { float f[2]; cm_c64_t c; } u = {{re, im}};
  return u.c;
}
#define C_NINF cplx(-INFINITY, -INFINITY)
#define C_PINF cplx(INFINITY, INFINITY)
DEF_SCAN(sum_c64, cm_c64_t, add_c64, (cm_c64_t)0)
DEF_SCAN(prod_c64, cm_c64_t, mul_c64, (cm_c64_t)1)
DEF_SCAN(max_c64, cm_c64_t, max_c, C_NINF)
DEF_SCAN(min_c64, cm_c64_t, min_c, C_PINF)
DEF_SCAN(lae_c64, cm_c64_t, lae_c, cplx(-INFINITY, 0.0f))

/* Each scan's kernels, from its kern and types columns
 * (backend/cpu/scan_table.h);
 * NULL where the op constructor never builds the pair (bool sums are taken
 * in int32, logcumsumexp of integers in float32). */
#define TYPES_NUMERIC(P)                                                                  \
  [CM_UINT8] = P##_u8, [CM_UINT16] = P##_u16, [CM_UINT32] = P##_u32, [CM_UINT64] = P##_u64, \
  [CM_INT8] = P##_i8, [CM_INT16] = P##_i16, [CM_INT32] = P##_i32, [CM_INT64] = P##_i64,     \
  TYPES_INEXACT(P)
#define TYPES_INEXACT(P)                                                                   \
  [CM_FLOAT16] = P##_f16, [CM_FLOAT32] = P##_f32, [CM_FLOAT64] = P##_f64,                  \
  [CM_BFLOAT16] = P##_bf16, [CM_COMPLEX64] = P##_c64
#define TYPES_ALL(P) [CM_BOOL] = P##_b8, TYPES_NUMERIC(P)
static const scan_fn scans[CM_SCAN_NUM_PUBLIC_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, kern, types) [CM_SCAN_##CODE] = {TYPES_##types(scan_##kern)},
    CM_CPU_SCAN_OPS(CM_X)
#undef CM_X
};

typedef struct scan_job {
  scan_fn fn;
  const char *src;
  char *dst;
  size_t sz;
  int64_t n, inner, nblk;
  bool rev, incl;
} scan_job;

static void scan_items(void *ctx, int64_t begin, int64_t end) {
  scan_job *j = ctx;
  for (int64_t it = begin; it < end; it++) {
    int64_t o = it / j->nblk, b = it % j->nblk;
    int64_t col0 = b * BLK, cols = j->inner - col0 < BLK ? j->inner - col0 : BLK;
    int64_t off = (o * j->n * j->inner + col0) * (int64_t)j->sz;
    j->fn(j->src + off, j->dst + off, j->n, j->inner, j->inner == 1 ? 1 : cols, j->rev,
          j->incl);
  }
}

static int forward_scan(cm_array *out, cm_array *a, const cm_scan_params *sp) {
  scan_fn fn = scans[sp->op][a->dtype];
  if (!fn || a->dtype != out->dtype)
    return cm_error(CM_ERR_RUNTIME, "[%s] Not supported for %s.", cm_scan_op_name(sp->op),
                    cm_dtype_name(a->dtype));
  const char *src;
  if (cm_row_contiguous(a) && cm_try_donate(out, a)) {
    src = cm_data(out);
  } else {
    if (cm_alloc_output(out)) return -1;
    if (out->size == 0) return 0;
    if (cm_row_contiguous(a)) {
      src = cm_data(a);
    } else { /* gather into the output, then scan in place */
      cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(a), a->dtype,
                          a->strides, a->ndim, a->shape);
      src = cm_data(out);
    }
  }
  if (out->size == 0) return 0;
  scan_job j = {.fn = fn, .src = src, .dst = cm_data(out), .sz = cm_itemsize(out),
                .rev = sp->reverse, .incl = sp->inclusive};
  j.n = a->shape[sp->axis];
  j.inner = 1;
  for (int i = sp->axis + 1; i < a->ndim; i++) j.inner *= a->shape[i];
  j.nblk = j.inner == 1 ? 1 : (j.inner + BLK - 1) / BLK;
  int64_t outer = out->size / (j.n * j.inner);
  int64_t per_item = j.n * (j.inner < BLK ? j.inner : BLK);
  cm_parallel_for(outer * j.nblk, cm_grain(2 * per_item), scan_items, &j);
  return 0;
}

int cm_cpu_scan(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  return forward_scan(out, in[0], cm_scan_params_of(out));
}
