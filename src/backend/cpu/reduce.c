/* Reduce(op) on the CPU: sum, prod, max, min, and, or.
 *
 * Each (op, input dtype) pair has a small kernel set working on an
 * accumulator type (float for halves, wrapping unsigned ints for integer
 * sums and products, 0/1 bytes for and/or):
 *   base   reduce one contiguous run into one accumulator
 *   col    fold one contiguous row into a row of accumulators
 *   comb   combine two accumulators, store  accumulators -> output dtype.
 *
 * Determinism: the way elements are grouped depends only on the shape,
 * never on the thread count.  A reduction of n elements in a row is cut
 * into blocks of BLK elements, each block reduced by base (fixed lanes),
 * and the block results combined by a fixed pairwise tree; threads only
 * decide who computes which block.  The column loop groups RB reduced
 * positions per block (four rows at a time where reduce_x86.c has a
 * col4 kernel) and folds the block results left to right.  The blocked
 * structure also keeps float32 sums as accurate as NumPy's pairwise sum.
 * reduce_x86.c swaps in AVX2 kernels for the hottest cases at run time. */
#include "backend/cpu/reduce.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/reduce_table.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/reduce.h"

#define BLK 4096 /* elements per block of a row reduction */
#define RB 256   /* reduced positions per block of a column reduction */
/* Outputs per column chunk: whole rows where possible, since reading
 * long contiguous runs row after row is what the prefetchers follow
 * (short runs at a large stride stall on every new page). */
#define CB 4096

/* ------------------------------------------------------------------ */
/* Plan                                                                */

void cm_reduce_plan_init(cm_reduce_plan *P, const cm_array *in, uint64_t axes) {
  P->nk = P->nr = 0;
  P->nout = P->nred = 1;
  for (int i = 0; i < in->ndim; i++) {
    int64_t n = in->shape[i], st = in->strides[i];
    bool red = (axes >> i) & 1;
    if (red) P->nred *= n;
    else P->nout *= n;
    if (n == 1) continue; /* never moves the pointer, never changes an index */
    int64_t *shape = red ? P->rshape : P->kshape, *stride = red ? P->rstride : P->kstride;
    int *cnt = red ? &P->nr : &P->nk;
    /* Merge into the previous axis of the same list when it steps evenly:
     * the flattened order (output order, or reduced row-major order) and
     * every element's offset stay the same. */
    if (*cnt > 0 && stride[*cnt - 1] == st * n) {
      shape[*cnt - 1] *= n;
      stride[*cnt - 1] = st;
      continue;
    }
    shape[*cnt] = n;
    stride[*cnt] = st;
    (*cnt)++;
  }
}

void cm_axes_cursor_seek(cm_axes_cursor *c, int n, const int64_t *shape, const int64_t *stride,
                         int64_t pos) {
  c->n = n;
  c->shape = shape;
  c->stride = stride;
  c->offset = 0;
  for (int i = n - 1; i >= 0; i--) {
    c->index[i] = pos % shape[i];
    pos /= shape[i];
    c->offset += c->index[i] * stride[i];
  }
}

/* ------------------------------------------------------------------ */
/* Kernel sets                                                         */

typedef struct red_k {
  size_t asz; /* accumulator size */
  void (*ident)(void *acc, int64_t n);
  void (*base)(void *acc, const void *src, int64_t n);
  void (*col)(void *acc, const void *src, int64_t n);
  void (*comb)(void *acc, const void *other);
  void (*combn)(void *acc, const void *other, int64_t n);
  cm_red_col4_fn col4; /* optional: four rows at once */
  /* optional: accumulators -> output elements (contiguous: the row loop
   * over a stride-1 run); NULL is a copy, or float -> half */
  void (*store)(void *dst, const void *acc, int64_t n, bool contiguous);
} red_k;

/* Combining rules on accumulators.  Max/min let NaN win: once a NaN is
 * in, a comparison with it is false and it stays. */
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define FMAX(a, b) (((b) > (a) || (b) != (b)) ? (b) : (a))
#define FMIN(a, b) (((b) < (a) || (b) != (b)) ? (b) : (a))
#define IMAX(a, b) ((b) > (a) ? (b) : (a))
#define IMIN(a, b) ((b) < (a) ? (b) : (a))
#define AND(a, b) ((a) & (b))
#define OR(a, b) ((a) | (b))

/* Complex products use the plain formula, as MLX does. */
static inline cm_c64_t cmul(cm_c64_t a, cm_c64_t b) {
  float ar = crealf(a), ai = cimagf(a), br = crealf(b), bi = cimagf(b);
  return cm_reduce_cplx(ar * br - ai * bi, ar * bi + ai * br);
}
#define CMUL(a, b) cmul(a, b)

/* Complex max/min follow MLX's fold: walking the elements in order, an
 * element with a NaN in either part replaces the running value, and any
 * other replaces it when it is lexicographically greater (max) / smaller
 * (min), comparisons with a NaN being false: [1+2j, 0+nanj, 3+0j] has
 * max 3+0j, [3+0j, nan+0j, 1+2j] has nan.  That fold is not associative,
 * so blocks cannot simply be combined by max: a block's accumulator also
 * says whether the block held a NaN.  A block with one is a constant
 * function of the running value (what follows its last NaN decides); a
 * block without one applies its plain maximum m, which replaces a running
 * value v when m > v, or when v has a NaN only in its imaginary part and
 * m's real part is greater.  The fold starts from MLX's (-inf, 0) for max,
 * (inf, 0) for min. */
typedef struct cmm_acc {
  cm_c64_t v;
  uint32_t nan; /* the elements folded in held a NaN */
  uint32_t reserved;
} cmm_acc;

static inline bool cnan(cm_c64_t x) { return isnan(crealf(x)) || isnan(cimagf(x)); }
static inline bool clex_gt(cm_c64_t a, cm_c64_t b) {
  return crealf(a) > crealf(b) || (crealf(a) == crealf(b) && cimagf(a) > cimagf(b));
}
#define DEF_CMM(NAME, BETTER, INIT_RE)                                               \
  static inline void step_##NAME(cmm_acc *a, cm_c64_t x) {                           \
    if (cnan(x)) a->v = x, a->nan = 1;                                               \
    else if (BETTER(x, a->v)) a->v = x;                                              \
  }                                                                                  \
  static void ident_##NAME(void *acc, int64_t n) {                                   \
    cmm_acc *a = acc;                                                                \
    for (int64_t i = 0; i < n; i++) a[i] = (cmm_acc){cm_reduce_cplx(INIT_RE, 0), 0, 0}; \
  }                                                                                  \
  static void base_##NAME(void *acc, const void *src, int64_t n) {                   \
    const cm_c64_t *s = src;                                                         \
    ident_##NAME(acc, 1);                                                            \
    for (int64_t i = 0; i < n; i++) step_##NAME(acc, s[i]);                          \
  }                                                                                  \
  static void col_##NAME(void *acc, const void *src, int64_t n) {                    \
    const cm_c64_t *s = src;                                                         \
    for (int64_t j = 0; j < n; j++) step_##NAME((cmm_acc *)acc + j, s[j]);           \
  }                                                                                  \
  /* a folded the elements before b's */                                            \
  static void comb_##NAME(void *acc, const void *other) {                            \
    cmm_acc *a = acc;                                                                \
    const cmm_acc *b = other;                                                        \
    if (b->nan) {                                                                    \
      *a = *b;                                                                       \
    } else if (isnan(crealf(a->v))) {                                                \
    } else if (isnan(cimagf(a->v))) {                                                \
      if (BETTER(cm_reduce_cplx(crealf(b->v), 0), cm_reduce_cplx(crealf(a->v), 0))) \
        a->v = b->v;                                                                 \
    } else if (BETTER(b->v, a->v)) {                                                 \
      a->v = b->v;                                                                   \
    }                                                                                \
  }                                                                                  \
  static void combn_##NAME(void *acc, const void *other, int64_t n) {                \
    for (int64_t i = 0; i < n; i++) comb_##NAME((cmm_acc *)acc + i, (const cmm_acc *)other + i); \
  }
#define CLEX_LT(a, b) clex_gt(b, a)
DEF_CMM(max_c64, clex_gt, -INFINITY)
DEF_CMM(min_c64, CLEX_LT, INFINITY)

/* Store: MLX's contiguous reductions (a whole array, or rows along the
 * innermost axis) end with a check that turns a NaN result into nan+0j;
 * its strided ones keep the element as it was (0+nanj stays). */
static void store_cmm(void *dst, const void *acc, int64_t n, bool contiguous) {
  const cmm_acc *a = acc;
  cm_c64_t *d = dst;
  for (int64_t i = 0; i < n; i++)
    d[i] = contiguous && cnan(a[i].v) ? cm_reduce_cplx(NAN, 0.0f) : a[i].v;
}

/* Loads into the accumulator domain. */
#define L_ID(x) (x)
#define L_U32(x) ((uint32_t)(x))
#define L_S32(x) ((uint32_t)(int32_t)(x))
#define L_F16(x) cm_f16_to_f32(x)
#define L_BF16(x) cm_bf16_to_f32(x)
#define L_NZ(x) ((uint8_t)((x) != 0))
#define L_NZH(x) ((uint8_t)(((x) & 0x7fff) != 0)) /* half bits: +-0 is zero */

/* The parts every kernel set has. */
#define DEF_COMMON(NAME, ACC, COMB, IDENT)                                           \
  static void ident_##NAME(void *acc, int64_t n) {                                   \
    ACC *a = acc;                                                                    \
    for (int64_t i = 0; i < n; i++) a[i] = (IDENT);                                  \
  }                                                                                  \
  static void comb_##NAME(void *acc, const void *o) {                                \
    *(ACC *)acc = COMB(*(ACC *)acc, *(const ACC *)o);                                \
  }                                                                                  \
  static void combn_##NAME(void *acc, const void *o, int64_t n) {                    \
    ACC *a = acc;                                                                    \
    const ACC *b = o;                                                                \
    for (int64_t i = 0; i < n; i++) a[i] = COMB(a[i], b[i]);                         \
  }

/* Scalar kernels: four independent accumulators so the loop is not one
 * long dependency chain. */
#define DEF_SCALAR(NAME, T, ACC, LOAD, COMB, IDENT)                                  \
  DEF_COMMON(NAME, ACC, COMB, IDENT)                                                 \
  static void base_##NAME(void *acc, const void *src, int64_t n) {                   \
    const T *s = src;                                                                \
    ACC a0 = (IDENT), a1 = (IDENT), a2 = (IDENT), a3 = (IDENT);                      \
    int64_t i = 0;                                                                   \
    for (; i + 4 <= n; i += 4) {                                                     \
      ACC x0 = LOAD(s[i]), x1 = LOAD(s[i + 1]), x2 = LOAD(s[i + 2]), x3 = LOAD(s[i + 3]); \
      a0 = COMB(a0, x0);                                                             \
      a1 = COMB(a1, x1);                                                             \
      a2 = COMB(a2, x2);                                                             \
      a3 = COMB(a3, x3);                                                             \
    }                                                                                \
    for (; i < n; i++) {                                                             \
      ACC x0 = LOAD(s[i]);                                                           \
      a0 = COMB(a0, x0);                                                             \
    }                                                                                \
    a0 = COMB(a0, a1);                                                               \
    a2 = COMB(a2, a3);                                                               \
    *(ACC *)acc = COMB(a0, a2);                                                      \
  }                                                                                  \
  static void col_##NAME(void *acc, const void *src, int64_t n) {                    \
    ACC *a = acc;                                                                    \
    const T *s = src;                                                                \
    for (int64_t j = 0; j < n; j++) {                                                \
      ACC x = LOAD(s[j]);                                                            \
      a[j] = COMB(a[j], x);                                                          \
    }                                                                                \
  }

/* Vector kernels (GCC/Clang vector extensions, 32-byte vectors; the
 * compiler splits them for narrower targets) for the types whose load is
 * the identity.  Loads and stores go through memcpy: unaligned-safe. */
#define VB 16
#define DEF_VEC(NAME, T, VT, VCOMB, COMB, IDENT)                                     \
  DEF_COMMON(NAME, T, COMB, IDENT)                                                   \
  static void base_##NAME(void *acc, const void *src, int64_t n) {                   \
    enum { L = VB / sizeof(T) };                                                     \
    const T *s = src;                                                                \
    VT a0, a1, a2, a3, x0, x1, x2, x3;                                               \
    for (int k = 0; k < L; k++) a0[k] = a1[k] = a2[k] = a3[k] = (IDENT);             \
    int64_t i = 0;                                                                   \
    for (; i + 4 * L <= n; i += 4 * L) {                                             \
      memcpy(&x0, s + i, VB);                                                        \
      memcpy(&x1, s + i + L, VB);                                                    \
      memcpy(&x2, s + i + 2 * L, VB);                                                \
      memcpy(&x3, s + i + 3 * L, VB);                                                \
      a0 = VCOMB(a0, x0);                                                            \
      a1 = VCOMB(a1, x1);                                                            \
      a2 = VCOMB(a2, x2);                                                            \
      a3 = VCOMB(a3, x3);                                                            \
    }                                                                                \
    for (; i + L <= n; i += L) {                                                     \
      memcpy(&x0, s + i, VB);                                                        \
      a0 = VCOMB(a0, x0);                                                            \
    }                                                                                \
    a0 = VCOMB(VCOMB(a0, a1), VCOMB(a2, a3));                                        \
    T r = a0[0];                                                                     \
    for (int k = 1; k < L; k++) r = COMB(r, a0[k]);                                  \
    for (; i < n; i++) r = COMB(r, s[i]);                                            \
    *(T *)acc = r;                                                                   \
  }                                                                                  \
  static void col_##NAME(void *acc, const void *src, int64_t n) {                    \
    enum { L = VB / sizeof(T) };                                                     \
    T *a = acc;                                                                      \
    const T *s = src;                                                                \
    int64_t j = 0;                                                                   \
    for (; j + L <= n; j += L) {                                                     \
      VT x, y;                                                                       \
      memcpy(&x, s + j, VB);                                                         \
      memcpy(&y, a + j, VB);                                                         \
      y = VCOMB(y, x);                                                               \
      memcpy(a + j, &y, VB);                                                         \
    }                                                                                \
    for (; j < n; j++) a[j] = COMB(a[j], s[j]);                                      \
  }

typedef float vf32 __attribute__((vector_size(VB)));
typedef double vf64 __attribute__((vector_size(VB)));
typedef int32_t vi32 __attribute__((vector_size(VB)));
typedef int64_t vi64 __attribute__((vector_size(VB)));
typedef uint32_t vu32 __attribute__((vector_size(VB)));
typedef uint64_t vu64 __attribute__((vector_size(VB)));
typedef int8_t vi8 __attribute__((vector_size(VB)));
typedef uint8_t vu8 __attribute__((vector_size(VB)));
typedef int16_t vi16 __attribute__((vector_size(VB)));
typedef uint16_t vu16 __attribute__((vector_size(VB)));

/* Lane select by a comparison mask (bitwise, since C has no vector ?:). */
#define VSEL(VT, VI, m, x, y) ((VT)(((VI)(x) & (m)) | ((VI)(y) & ~(m))))
#define VADD(a, b) ((a) + (b))
#define VMUL(a, b) ((a) * (b))
/* Macros rather than functions: passing 32-byte vectors by value to a
 * function changes the ABI without AVX (and gcc warns).  Arguments are
 * plain variables, so evaluating them twice is harmless. */
#define VMAXF(VT, VI, a, x) VSEL(VT, VI, (VI)((x) > (a)) | (VI)((x) != (x)), x, a)
#define VMINF(VT, VI, a, x) VSEL(VT, VI, (VI)((x) < (a)) | (VI)((x) != (x)), x, a)
#define vmax_f32(a, x) VMAXF(vf32, vi32, a, x)
#define vmin_f32(a, x) VMINF(vf32, vi32, a, x)
#define vmax_f64(a, x) VMAXF(vf64, vi64, a, x)
#define vmin_f64(a, x) VMINF(vf64, vi64, a, x)
#define VMAXI(VT, VI, a, x) VSEL(VT, VI, (VI)((x) > (a)), x, a)
#define VMINI(VT, VI, a, x) VSEL(VT, VI, (VI)((x) < (a)), x, a)
#define vmax_u8(a, x) VMAXI(vu8, vi8, a, x)
#define vmin_u8(a, x) VMINI(vu8, vi8, a, x)
#define vmax_i8(a, x) VMAXI(vi8, vi8, a, x)
#define vmin_i8(a, x) VMINI(vi8, vi8, a, x)
#define vmax_u16(a, x) VMAXI(vu16, vi16, a, x)
#define vmin_u16(a, x) VMINI(vu16, vi16, a, x)
#define vmax_i16(a, x) VMAXI(vi16, vi16, a, x)
#define vmin_i16(a, x) VMINI(vi16, vi16, a, x)
#define vmax_u32(a, x) VMAXI(vu32, vi32, a, x)
#define vmin_u32(a, x) VMINI(vu32, vi32, a, x)
#define vmax_i32(a, x) VMAXI(vi32, vi32, a, x)
#define vmin_i32(a, x) VMINI(vi32, vi32, a, x)
#define vmax_u64(a, x) VMAXI(vu64, vi64, a, x)
#define vmin_u64(a, x) VMINI(vu64, vi64, a, x)
#define vmax_i64(a, x) VMAXI(vi64, vi64, a, x)
#define vmin_i64(a, x) VMINI(vi64, vi64, a, x)

/* ---- sum / prod ---- */
DEF_SCALAR(sum_b8, bool, uint32_t, L_U32, ADD, 0u)
DEF_SCALAR(sum_u8, uint8_t, uint32_t, L_U32, ADD, 0u)
DEF_SCALAR(sum_u16, uint16_t, uint32_t, L_U32, ADD, 0u)
DEF_VEC(sum_u32, uint32_t, vu32, VADD, ADD, 0u) /* int32 too: same bits, wraps */
DEF_VEC(sum_u64, uint64_t, vu64, VADD, ADD, 0u) /* int64 too */
DEF_SCALAR(sum_i8, int8_t, uint32_t, L_S32, ADD, 0u)
DEF_SCALAR(sum_i16, int16_t, uint32_t, L_S32, ADD, 0u)
/* Float sums start from +0.0, as MLX's do: an empty sum is +0.0 (so 1/sum
 * is +inf) and a sum of -0.0s is +0.0 too (-0.0 would be the exact
 * identity, which NumPy keeps). */
DEF_SCALAR(sum_f16, cm_f16_t, float, L_F16, ADD, 0.0f)
DEF_SCALAR(sum_bf16, cm_bf16_t, float, L_BF16, ADD, 0.0f)
DEF_VEC(sum_f32, float, vf32, VADD, ADD, 0.0f)
DEF_VEC(sum_f64, double, vf64, VADD, ADD, 0.0)
DEF_SCALAR(sum_c64, cm_c64_t, cm_c64_t, L_ID, ADD, cm_reduce_cplx(0.0f, 0.0f))

DEF_SCALAR(prod_b8, bool, uint32_t, L_U32, MUL, 1u)
DEF_SCALAR(prod_u8, uint8_t, uint32_t, L_U32, MUL, 1u)
DEF_SCALAR(prod_u16, uint16_t, uint32_t, L_U32, MUL, 1u)
DEF_VEC(prod_u32, uint32_t, vu32, VMUL, MUL, 1u)
DEF_VEC(prod_u64, uint64_t, vu64, VMUL, MUL, 1u)
DEF_SCALAR(prod_i8, int8_t, uint32_t, L_S32, MUL, 1u)
DEF_SCALAR(prod_i16, int16_t, uint32_t, L_S32, MUL, 1u)
DEF_SCALAR(prod_f16, cm_f16_t, float, L_F16, MUL, 1.0f)
DEF_SCALAR(prod_bf16, cm_bf16_t, float, L_BF16, MUL, 1.0f)
DEF_VEC(prod_f32, float, vf32, VMUL, MUL, 1.0f)
DEF_VEC(prod_f64, double, vf64, VMUL, MUL, 1.0)
DEF_SCALAR(prod_c64, cm_c64_t, cm_c64_t, L_ID, CMUL, cm_reduce_cplx(1.0f, 0.0f))

/* ---- max / min (bool uses the uint8 kernels) ---- */
DEF_VEC(max_u8, uint8_t, vu8, vmax_u8, IMAX, 0)
DEF_VEC(max_i8, int8_t, vi8, vmax_i8, IMAX, INT8_MIN)
DEF_VEC(max_u16, uint16_t, vu16, vmax_u16, IMAX, 0)
DEF_VEC(max_i16, int16_t, vi16, vmax_i16, IMAX, INT16_MIN)
DEF_VEC(max_u32, uint32_t, vu32, vmax_u32, IMAX, 0)
DEF_VEC(max_i32, int32_t, vi32, vmax_i32, IMAX, INT32_MIN)
DEF_VEC(max_u64, uint64_t, vu64, vmax_u64, IMAX, 0)
DEF_VEC(max_i64, int64_t, vi64, vmax_i64, IMAX, INT64_MIN)
DEF_SCALAR(max_f16, cm_f16_t, float, L_F16, FMAX, -INFINITY)
DEF_SCALAR(max_bf16, cm_bf16_t, float, L_BF16, FMAX, -INFINITY)
DEF_VEC(max_f32, float, vf32, vmax_f32, FMAX, -INFINITY)
DEF_VEC(max_f64, double, vf64, vmax_f64, FMAX, -INFINITY)

DEF_VEC(min_u8, uint8_t, vu8, vmin_u8, IMIN, UINT8_MAX)
DEF_VEC(min_i8, int8_t, vi8, vmin_i8, IMIN, INT8_MAX)
DEF_VEC(min_u16, uint16_t, vu16, vmin_u16, IMIN, UINT16_MAX)
DEF_VEC(min_i16, int16_t, vi16, vmin_i16, IMIN, INT16_MAX)
DEF_VEC(min_u32, uint32_t, vu32, vmin_u32, IMIN, UINT32_MAX)
DEF_VEC(min_i32, int32_t, vi32, vmin_i32, IMIN, INT32_MAX)
DEF_VEC(min_u64, uint64_t, vu64, vmin_u64, IMIN, UINT64_MAX)
DEF_VEC(min_i64, int64_t, vi64, vmin_i64, IMIN, INT64_MAX)
DEF_SCALAR(min_f16, cm_f16_t, float, L_F16, FMIN, INFINITY)
DEF_SCALAR(min_bf16, cm_bf16_t, float, L_BF16, FMIN, INFINITY)
DEF_VEC(min_f32, float, vf32, vmin_f32, FMIN, INFINITY)
DEF_VEC(min_f64, double, vf64, vmin_f64, FMIN, INFINITY)

/* ---- and / or: accumulate 0/1 bytes ---- */
#define DEF_LOGIC(SFX, T, LOAD)                          \
  DEF_SCALAR(and_##SFX, T, uint8_t, LOAD, AND, 1)        \
  DEF_SCALAR(or_##SFX, T, uint8_t, LOAD, OR, 0)
DEF_LOGIC(b8, bool, L_NZ)
DEF_LOGIC(u8, uint8_t, L_NZ)
DEF_LOGIC(u16, uint16_t, L_NZ)
DEF_LOGIC(u32, uint32_t, L_NZ)
DEF_LOGIC(u64, uint64_t, L_NZ)
DEF_LOGIC(i8, int8_t, L_NZ)
DEF_LOGIC(i16, int16_t, L_NZ)
DEF_LOGIC(i32, int32_t, L_NZ)
DEF_LOGIC(i64, int64_t, L_NZ)
DEF_LOGIC(f16, cm_f16_t, L_NZH)
DEF_LOGIC(f32, float, L_NZ)
DEF_LOGIC(f64, double, L_NZ)
DEF_LOGIC(bf16, cm_bf16_t, L_NZH)
DEF_LOGIC(c64, cm_c64_t, L_NZ)

#define K(NAME, ACC) \
  { sizeof(ACC), ident_##NAME, base_##NAME, col_##NAME, comb_##NAME, combn_##NAME, NULL, NULL }
#define K_CMM(NAME)                                                                         \
  {                                                                                         \
    sizeof(cmm_acc), ident_##NAME, base_##NAME, col_##NAME, comb_##NAME, combn_##NAME, NULL, \
        store_cmm                                                                           \
  }
/* The kernels of each accumulator set (the acc column of
 * backend/cpu/reduce_table.h: the class of ops/reduce_ops.h), by dtype: the accumulator
 * is 32 bits for the narrow integers of WIDE (int32 sums run in uint32:
 * the same bits, defined overflow), float for the halves, the dtype
 * itself otherwise; LOGIC accumulates a byte. */
#define KSET_WIDE(P)                                                                          \
  [CM_BOOL] = K(P##_b8, uint32_t), [CM_UINT8] = K(P##_u8, uint32_t),                          \
  [CM_UINT16] = K(P##_u16, uint32_t), [CM_UINT32] = K(P##_u32, uint32_t),                     \
  [CM_UINT64] = K(P##_u64, uint64_t), [CM_INT8] = K(P##_i8, uint32_t),                        \
  [CM_INT16] = K(P##_i16, uint32_t), [CM_INT32] = K(P##_u32, uint32_t),                       \
  [CM_INT64] = K(P##_u64, uint64_t), [CM_FLOAT16] = K(P##_f16, float),                        \
  [CM_FLOAT32] = K(P##_f32, float), [CM_FLOAT64] = K(P##_f64, double),                        \
  [CM_BFLOAT16] = K(P##_bf16, float), [CM_COMPLEX64] = K(P##_c64, cm_c64_t)
#define KSET_SAME(P)                                                                          \
  [CM_BOOL] = K(P##_u8, uint8_t), [CM_UINT8] = K(P##_u8, uint8_t),                            \
  [CM_UINT16] = K(P##_u16, uint16_t), [CM_UINT32] = K(P##_u32, uint32_t),                     \
  [CM_UINT64] = K(P##_u64, uint64_t), [CM_INT8] = K(P##_i8, int8_t),                          \
  [CM_INT16] = K(P##_i16, int16_t), [CM_INT32] = K(P##_i32, int32_t),                         \
  [CM_INT64] = K(P##_i64, int64_t), [CM_FLOAT16] = K(P##_f16, float),                         \
  [CM_FLOAT32] = K(P##_f32, float), [CM_FLOAT64] = K(P##_f64, double),                        \
  [CM_BFLOAT16] = K(P##_bf16, float), [CM_COMPLEX64] = K_CMM(P##_c64)
#define KSET_LOGIC(P)                                                                         \
  [CM_BOOL] = K(P##_b8, uint8_t), [CM_UINT8] = K(P##_u8, uint8_t),                            \
  [CM_UINT16] = K(P##_u16, uint8_t), [CM_UINT32] = K(P##_u32, uint8_t),                       \
  [CM_UINT64] = K(P##_u64, uint8_t), [CM_INT8] = K(P##_i8, uint8_t),                          \
  [CM_INT16] = K(P##_i16, uint8_t), [CM_INT32] = K(P##_i32, uint8_t),                         \
  [CM_INT64] = K(P##_i64, uint8_t), [CM_FLOAT16] = K(P##_f16, uint8_t),                       \
  [CM_FLOAT32] = K(P##_f32, uint8_t), [CM_FLOAT64] = K(P##_f64, uint8_t),                     \
  [CM_BFLOAT16] = K(P##_bf16, uint8_t), [CM_COMPLEX64] = K(P##_c64, uint8_t)
#define KSET_ENTRY_WIDE(CODE, kern) [CM_REDUCE_##CODE] = {KSET_WIDE(kern)},
#define KSET_ENTRY_SAME(CODE, kern) [CM_REDUCE_##CODE] = {KSET_SAME(kern)},
#define KSET_ENTRY_LOGIC(CODE, kern) [CM_REDUCE_##CODE] = {KSET_LOGIC(kern)},
#define KSET_ENTRY_ARG(CODE, kern) /* reduce_arg.c */
/* The rows of the Reduce ops (every class but ARG), by [op][dtype]. */
static const red_k kernels[CM_REDUCE_NUM_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, acc, kern) KSET_ENTRY_##acc(CODE, kern)
    CM_CPU_REDUCE_OPS(CM_X)
#undef CM_X
};

/* Accumulators -> output elements: the kernel set's store, else a copy,
 * except float -> half. */
static void store_accs(const red_k *k, void *dst, cm_dtype odt, const void *acc, int64_t n,
                       bool contiguous) {
  size_t asz = k->asz;
  if (k->store) {
    k->store(dst, acc, n, contiguous);
  } else if (odt == CM_FLOAT16 || odt == CM_BFLOAT16) {
    const float *a = acc;
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++)
      d[i] = odt == CM_FLOAT16 ? cm_f32_to_f16(a[i]) : cm_f32_to_bf16(a[i]);
  } else {
    memcpy(dst, acc, (size_t)n * asz);
  }
}

/* Fold partials[0..m) into partials[0] by a fixed pairwise tree. */
static void tree(const red_k *k, char *part, int64_t m) {
  if (m <= 1) return;
  int64_t h = m / 2;
  tree(k, part, h);
  tree(k, part + h * (int64_t)k->asz, m - h);
  k->comb(part, part + h * (int64_t)k->asz);
}

/* ------------------------------------------------------------------ */
/* Rows and general: items are (output, block of BLK reduced elements). */

typedef struct row_job {
  const red_k *k;
  const cm_reduce_plan *P;
  const char *src;
  size_t isz;
  bool contiguous; /* the reduced axes are one stride-1 run */
  int64_t nb;      /* blocks per output */
  char *part;      /* nout * nb accumulators, or NULL when nb == 1 */
  char *dst;
  cm_dtype odt;
  /* instead of src: the row-major values, made on demand (fused regions) */
  cm_reduce_producer produce;
  void *pctx;
} row_job;

/* Copy elements [pos, pos + n) of the reduced walk starting at base into
 * buf: the general path reduces gathered blocks with the same kernels. */
static void gather(char *buf, const char *base, size_t isz, const cm_reduce_plan *P, int64_t pos,
                   int64_t n) {
  cm_axes_cursor c;
  int last = P->nr - 1;
  int64_t len = P->rshape[last], st = P->rstride[last] * (int64_t)isz;
  /* walk the outer reduced axes; the innermost is a strided run */
  cm_axes_cursor_seek(&c, last, P->rshape, P->rstride, pos / len);
  int64_t j = pos % len;
  while (n > 0) {
    const char *p = base + c.offset * (int64_t)isz + j * st;
    int64_t m = len - j < n ? len - j : n;
    switch (isz) {
#define GATHER(SZ) \
  case SZ: for (int64_t i = 0; i < m; i++, p += st) memcpy(buf + i * SZ, p, SZ); break;
      GATHER(1)
      GATHER(2)
      GATHER(4)
      GATHER(8)
#undef GATHER
    default: break;
    }
    buf += m * (int64_t)isz;
    n -= m;
    j = 0;
    cm_axes_cursor_next(&c);
  }
}

static void row_items(void *ctx, int64_t b, int64_t e) {
  row_job *j = ctx;
  const red_k *k = j->k;
  const cm_reduce_plan *P = j->P;
  _Alignas(16) char gbuf[BLK * 8], acc[16];
  char *buf = j->contiguous ? NULL : gbuf;
  cm_axes_cursor oc;
  int64_t o = b / j->nb;
  cm_axes_cursor_seek(&oc, P->nk, P->kshape, P->kstride, o);
  for (int64_t it = b; it < e; it++) {
    int64_t blk = it % j->nb;
    if (it > b && blk == 0) cm_axes_cursor_next(&oc), o++;
    int64_t pos = blk * BLK, n = P->nred - pos < BLK ? P->nred - pos : BLK;
    const char *base = j->src + oc.offset * (int64_t)j->isz;
    const char *p = base + pos * (int64_t)j->isz;
    if (j->produce) {
      j->produce(j->pctx, o * P->nred + pos, n, gbuf);
      p = gbuf;
    } else if (buf) {
      gather(buf, base, j->isz, P, pos, n);
      p = buf;
    }
    if (j->part) {
      k->base(j->part + it * (int64_t)k->asz, p, n);
    } else {
      k->base(acc, p, n);
      store_accs(k, j->dst + o * (int64_t)cm_dtype_size(j->odt), j->odt, acc, 1, j->contiguous);
    }
  }
}

static void row_finish(void *ctx, int64_t b, int64_t e) {
  row_job *j = ctx;
  for (int64_t o = b; o < e; o++) {
    char *p = j->part + o * j->nb * (int64_t)j->k->asz;
    tree(j->k, p, j->nb);
    store_accs(j->k, j->dst + o * (int64_t)cm_dtype_size(j->odt), j->odt, p, 1, j->contiguous);
  }
}

static int reduce_rows(const red_k *k, const cm_reduce_plan *P, const char *src, size_t isz,
                       bool contiguous, char *dst, cm_dtype odt, cm_reduce_producer produce,
                       void *pctx) {
  row_job j = {.k = k,
               .P = P,
               .src = src,
               .isz = isz,
               .contiguous = contiguous,
               .nb = (P->nred + BLK - 1) / BLK,
               .dst = dst,
               .odt = odt,
               .produce = produce,
               .pctx = pctx};
  int64_t items = P->nout * j.nb;
  if (j.nb > 1) {
    j.part = malloc((size_t)items * k->asz);
    if (!j.part) return cm_error(CM_ERR_MEMORY, "[reduce] Out of memory.");
  }
  int64_t per_item = j.nb > 1 ? BLK : P->nred;
  cm_parallel_for(items, cm_grain(per_item * (contiguous && !produce ? 1 : 3)), row_items, &j);
  if (j.part) {
    cm_parallel_for(P->nout, cm_grain(j.nb * 4), row_finish, &j);
    free(j.part);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Columns: the innermost kept axis is contiguous; whole rows of outputs
 * are folded at once.  Items are (outer output row, column chunk) and,
 * when those are too few to share, also the block of RB reduced rows. */

typedef struct col_job {
  const red_k *k;
  const cm_reduce_plan *P;
  const char *src;
  size_t isz;
  int64_t n;      /* the contiguous kept axis */
  int64_t cwmax;  /* the widest chunk: min(n, CB) */
  int64_t cwbytes; /* accumulator row stride: cwmax accumulators, 64-byte aligned */
  int64_t nc;     /* column chunks */
  int64_t nblk;   /* reduced blocks */
  bool per_block; /* items include the block; results go to part */
  char *part;
  char *dst;
  cm_dtype odt;
  atomic_int oom; /* a worker could not get its accumulators */
} col_job;

/* Fold reduced rows [r0, r1) of chunk (o2, c) into acc (cw accumulators). */
static void col_block(const col_job *j, int64_t o2, int64_t c, int64_t r0, int64_t r1, char *acc,
                      int64_t cw) {
  const cm_reduce_plan *P = j->P;
  const red_k *k = j->k;
  cm_axes_cursor oc, rc;
  cm_axes_cursor_seek(&oc, P->nk - 1, P->kshape, P->kstride, o2);
  const char *base = j->src + (oc.offset + c * CB) * (int64_t)j->isz;
  k->ident(acc, cw);
  /* Runs along the innermost reduced axis; within a run, groups of four
   * rows go through col4 when the CPU has one.  Runs and groups depend
   * only on the shape, so every thread count folds the same way. */
  int last = P->nr - 1;
  int64_t len = P->rshape[last], rs = P->rstride[last] * (int64_t)j->isz;
  cm_axes_cursor_seek(&rc, last, P->rshape, P->rstride, r0 / len);
  int64_t jn = r0 % len;
  for (int64_t r = r0; r < r1; cm_axes_cursor_next(&rc)) {
    int64_t m = len - jn < r1 - r ? len - jn : r1 - r, i = 0;
    const char *p = base + rc.offset * (int64_t)j->isz + jn * rs;
    if (k->col4)
      for (; i + 4 <= m; i += 4) k->col4(acc, p + i * rs, rs, cw);
    for (; i < m; i++) k->col(acc, p + i * rs, cw);
    r += m;
    jn = 0;
  }
}

static void col_items(void *ctx, int64_t b, int64_t e) {
  col_job *j = ctx;
  const red_k *k = j->k;
  /* per_block items write straight into part; the others need two rows
   * of accumulators (the running fold and the current block) */
  char *acc = NULL, *tmp = NULL;
  if (!j->per_block) {
    acc = aligned_alloc(64, 2 * (size_t)j->cwbytes);
    if (!acc) {
      atomic_store(&j->oom, 1);
      return;
    }
    tmp = acc + j->cwbytes;
  }
  for (int64_t it = b; it < e; it++) {
    int64_t blk = j->per_block ? it % j->nblk : 0, oc = j->per_block ? it / j->nblk : it;
    int64_t o2 = oc / j->nc, c = oc % j->nc;
    int64_t cw = j->n - c * CB < CB ? j->n - c * CB : CB;
    if (j->per_block) {
      int64_t r0 = blk * RB, r1 = r0 + RB < j->P->nred ? r0 + RB : j->P->nred;
      col_block(j, o2, c, r0, r1, j->part + it * j->cwbytes, cw);
      continue;
    }
    /* the same fold as per_block + col_finish, done in place */
    for (int64_t bl = 0; bl < j->nblk; bl++) {
      int64_t r0 = bl * RB, r1 = r0 + RB < j->P->nred ? r0 + RB : j->P->nred;
      col_block(j, o2, c, r0, r1, bl ? tmp : acc, cw);
      if (bl) k->combn(acc, tmp, cw);
    }
    store_accs(k, j->dst + (o2 * j->n + c * CB) * (int64_t)cm_dtype_size(j->odt), j->odt, acc, cw,
               false);
  }
  free(acc);
}

static void col_finish(void *ctx, int64_t b, int64_t e) {
  col_job *j = ctx;
  const red_k *k = j->k;
  int64_t stride = j->cwbytes;
  for (int64_t oc = b; oc < e; oc++) {
    int64_t o2 = oc / j->nc, c = oc % j->nc;
    int64_t cw = j->n - c * CB < CB ? j->n - c * CB : CB;
    char *acc = j->part + oc * j->nblk * stride;
    for (int64_t bl = 1; bl < j->nblk; bl++) k->combn(acc, acc + bl * stride, cw);
    store_accs(k, j->dst + (o2 * j->n + c * CB) * (int64_t)cm_dtype_size(j->odt), j->odt, acc, cw,
               false);
  }
}

static int reduce_cols(const red_k *k, const cm_reduce_plan *P, const char *src, size_t isz,
                       char *dst, cm_dtype odt) {
  col_job j = {
      .k = k, .P = P, .src = src, .isz = isz, .n = P->kshape[P->nk - 1], .dst = dst, .odt = odt};
  j.cwmax = j.n < CB ? j.n : CB;
  /* Cache-line aligned accumulator rows: vector loads and stores that
   * straddle two lines cost about as much as the whole memory stream. */
  j.cwbytes = (j.cwmax * (int64_t)k->asz + 63) / 64 * 64;
  j.nc = (j.n + CB - 1) / CB;
  j.nblk = (P->nred + RB - 1) / RB;
  int64_t chunks = P->nout / j.n * j.nc;
  int64_t work = P->nout * P->nred;
  /* Too few chunks to keep the threads busy: split the reduced rows too.
   * Both ways run the same arithmetic, so the choice cannot change the
   * result. */
  j.per_block = j.nblk > 1 && chunks < 2 * cm_num_threads() && work >= (1 << 16);
  if (j.per_block) {
    j.part = aligned_alloc(64, (size_t)(chunks * j.nblk * j.cwbytes));
    if (!j.part) return cm_error(CM_ERR_MEMORY, "[reduce] Out of memory.");
    cm_parallel_for(chunks * j.nblk, cm_grain(RB * j.cwmax), col_items, &j);
    cm_parallel_for(chunks, cm_grain(j.nblk * j.cwmax), col_finish, &j);
    free(j.part);
  } else {
    int64_t per = P->nred * j.cwmax;
    cm_parallel_for(chunks, cm_grain(per), col_items, &j);
  }
  if (atomic_load(&j.oom)) return cm_error(CM_ERR_MEMORY, "[reduce] Out of memory.");
  return 0;
}

/* ------------------------------------------------------------------ */

static void fill_identity(const red_k *k, char *dst, cm_dtype odt, int64_t n) {
  char acc[CB * 16];
  for (int64_t i = 0; i < n; i += CB) {
    int64_t m = n - i < CB ? n - i : CB;
    k->ident(acc, m);
    store_accs(k, dst + i * (int64_t)cm_dtype_size(odt), odt, acc, m, true);
  }
}

/* Reducing over size-1 axes only: an elementwise conversion, which the
 * copy kernel does (its bool store is x != 0, as all/any need). */
static void reduce_trivial(cm_array *out, const cm_array *in, uint64_t axes) {
  int32_t shape[CM_MAX_DIMS];
  int64_t istr[CM_MAX_DIMS], ostr[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < in->ndim; i++)
    if (!((axes >> i) & 1)) {
      shape[n] = in->shape[i];
      istr[n++] = in->strides[i];
    }
  cm_row_major_strides(n, shape, ostr);
  cm_cpu_copy_strided(cm_data(out), out->dtype, ostr, cm_data(in), in->dtype, istr, n, shape);
}

cm_red_fn cm_reduce_contig(int op, cm_dtype dt) {
  red_k k = kernels[op][dt];
  cm_reduce_simd(op, dt, &k.base, &k.col, &k.col4);
  return k.base;
}

/* Dense with no negative strides: element 0 is the lowest address. */
static bool dense_forward(const cm_array *x) {
  if (!cm_is_contiguous(x) || x->data_size != x->size) return false;
  for (int i = 0; i < x->ndim; i++)
    if (x->strides[i] < 0) return false;
  return true;
}

int cm_cpu_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  if ((unsigned)rp->op >= CM_REDUCE_NUM_OPS || !kernels[rp->op][x->dtype].base)
    return cm_error(CM_ERR_RUNTIME, "[Reduce] Invalid reduction op %d.", (int)rp->op);
  red_k kset = kernels[rp->op][x->dtype];
  cm_reduce_simd(rp->op, x->dtype, &kset.base, &kset.col, &kset.col4);
  const red_k *k = &kset;
  if (cm_alloc_output(out)) return -1;
  cm_reduce_plan P;
  cm_reduce_plan_init(&P, x, rp->axes);
  if (P.nout == 0) return 0;
  char *dst = cm_data(out);
  const char *src = cm_data(x);
  size_t isz = cm_itemsize(x);
  if (P.nred == 0) {
    fill_identity(k, dst, out->dtype, P.nout);
    return 0;
  }
  if (P.nr == 0) {
    reduce_trivial(out, x, rp->axes);
    return 0;
  }
  if (P.nk == 0 && P.nr > 1 && dense_forward(x)) {
    /* Everything is reduced and the data is one gap-free block: reduce it
     * in memory order (a transposed array sums as fast as its original). */
    P.nr = 1;
    P.rshape[0] = x->size;
    P.rstride[0] = 1;
    src = (const char *)cm_data(x);
  }
  if (P.nr == 1 && P.rstride[0] == 1)
    return reduce_rows(k, &P, src, isz, true, dst, out->dtype, NULL, NULL);
  /* Narrow output rows make the column loop all overhead: gather instead. */
  if (P.nk >= 1 && P.kstride[P.nk - 1] == 1 && P.kshape[P.nk - 1] >= 16)
    return reduce_cols(k, &P, src, isz, dst, out->dtype);
  return reduce_rows(k, &P, src, isz, false, dst, out->dtype, NULL, NULL);
}

bool cm_reduce_rows_supported(int op, cm_dtype dt) {
  return (unsigned)op < CM_REDUCE_NUM_OPS && kernels[op][dt].base && cm_dtype_size(dt) <= 8;
}

int cm_reduce_rows_produced(int op, cm_dtype dt, int64_t nout, int64_t nred,
                            cm_reduce_producer produce, void *ctx, char *dst, cm_dtype odt) {
  if (!cm_reduce_rows_supported(op, dt))
    return cm_error(CM_ERR_RUNTIME, "[Reduce] Invalid reduction op %d.", op);
  red_k kset = kernels[op][dt];
  cm_reduce_simd(op, dt, &kset.base, &kset.col, &kset.col4);
  if (nout == 0) return 0;
  if (nred == 0) {
    fill_identity(&kset, dst, odt, nout);
    return 0;
  }
  if (nred == 1) { /* as reduce_trivial: a conversion */
    _Alignas(16) char buf[BLK * 8];
    size_t osz = cm_dtype_size(odt);
    for (int64_t i = 0; i < nout; i += BLK) {
      int64_t m = nout - i < BLK ? nout - i : BLK;
      produce(ctx, i, m, buf);
      cm_cpu_convert(dst + i * (int64_t)osz, odt, buf, dt, m);
    }
    return 0;
  }
  cm_reduce_plan P = {.nk = 1, .nr = 1, .nout = nout, .nred = nred};
  P.kshape[0] = nout, P.kstride[0] = nred, P.rshape[0] = nred, P.rstride[0] = 1;
  return reduce_rows(&kset, &P, NULL, cm_dtype_size(dt), true, dst, odt, produce, ctx);
}
