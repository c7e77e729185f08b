/* Element types: the 14 dtypes, their sizes and categories, and MLX's
 * promotion rules.  The enum order matches mlx-c's mlx_dtype so the C API
 * converts by cast. */
#ifndef CMLX_CORE_DTYPE_H
#define CMLX_CORE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cm_dtype {
  CM_BOOL,
  CM_UINT8,
  CM_UINT16,
  CM_UINT32,
  CM_UINT64,
  CM_INT8,
  CM_INT16,
  CM_INT32,
  CM_INT64,
  CM_FLOAT16,
  CM_FLOAT32,
  CM_FLOAT64,
  CM_BFLOAT16,
  CM_COMPLEX64,
  CM_NUM_DTYPES
} cm_dtype;

/* Kinds, as numpy's array-interface letters: b, u, i, f, V (bfloat16), c. */
typedef enum cm_kind {
  CM_KIND_BOOL,
  CM_KIND_UINT,
  CM_KIND_INT,
  CM_KIND_FLOAT,
  CM_KIND_COMPLEX
} cm_kind;

/* MLX's abstract dtype categories (mx.floating, mx.integer, ...). */
typedef enum cm_category {
  CM_CAT_COMPLEXFLOATING,
  CM_CAT_FLOATING,
  CM_CAT_INEXACT,
  CM_CAT_SIGNEDINTEGER,
  CM_CAT_UNSIGNEDINTEGER,
  CM_CAT_INTEGER,
  CM_CAT_NUMBER,
  CM_CAT_GENERIC,
  CM_NUM_CATEGORIES
} cm_category;

typedef struct { float re, im; } cm_complex64;

size_t cm_dtype_size(cm_dtype t);
const char *cm_dtype_name(cm_dtype t); /* "float32" */
cm_kind cm_dtype_kind(cm_dtype t);
bool cm_dtype_valid(int t);
cm_dtype cm_promote_types(cm_dtype a, cm_dtype b);
bool cm_dtype_is_float(cm_dtype t);   /* float16/32/64, bfloat16 */
bool cm_dtype_is_inexact(cm_dtype t); /* floating or complex */
bool cm_dtype_is_integral(cm_dtype t); /* signed or unsigned int (not bool) */
/* issubdtype for dtype/category pairs. */
bool cm_issubdtype(cm_dtype t, cm_category c);
bool cm_category_sub(cm_category a, cm_category b);
const char *cm_category_name(cm_category c);

/* MLX's rule for Python scalars, which are "weak": they take the array's
 * dtype instead of promoting it.  scalar_kind: 0 bool, 1 int, 2 float,
 * 3 complex.  Returns the dtype the scalar is converted to; promoting it
 * with array_dtype then gives the op's type (read off MLX 0.32):
 *   bool scalar:    array_dtype            (bool + True -> bool, int8 + True -> int8)
 *   int scalar:     array_dtype, but bool arrays give int32
 *                   (int8 + 1 -> int8, uint8 + 1 -> uint8, bool + 1 -> int32)
 *   float scalar:   a real float array_dtype stays (float16 + 1.5 ->
 *                   float16); integers, bool and complex64 give float32
 *                   (int32 + 1.5 -> float32; complex64 + 1.5 is complex64
 *                   by promotion, but MLX's error messages name the scalar
 *                   as float32, e.g. bitwise_and(complex64, 1.5))
 *   complex scalar: complex64 whatever the array.
 * Range checks (uint8 + -1 raises "Converting -1 to uint8 would result in
 * overflow." in MLX, except for uint64) are the caller's job. */
cm_dtype cm_weak_scalar_dtype(cm_dtype array_dtype, int scalar_kind);

/* The float type an op that needs one (divide, exp, mean) uses for t:
 * inexact types stay, integers and bool go to float32. */
cm_dtype cm_float_result_type(cm_dtype t);

/* half-precision conversions; round to nearest even, NaN preserved. */
float cm_f16_to_f32(uint16_t h);
uint16_t cm_f32_to_f16(float f);
static inline float cm_bf16_to_f32(uint16_t h) {
  union { uint32_t u; float f; } v = { .u = (uint32_t)h << 16 };
  return v.f;
}
static inline uint16_t cm_f32_to_bf16(float f) {
  union { uint32_t u; float f; } v = { .f = f };
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40); /* quiet NaN */
  v.u += 0x7fffu + ((v.u >> 16) & 1u);
  return (uint16_t)(v.u >> 16);
}

/* Float -> integer conversion with MLX's results.  C leaves a cast of an
 * out-of-range value (or NaN) undefined; MLX's compiled casts give what
 * x86-64's truncating conversions give, which is what these reproduce with
 * defined C: an int32 or int64 conversion yields INT_MIN ("indefinite")
 * for NaN and out-of-range values; the 8- and 16-bit types take the low
 * bits of the int32 conversion (300.2 -> uint8 44, -1.7 -> uint8 255,
 * 3e9 -> int8 0); uint64 converts values from 2^63 up as v - 2^63 with
 * the top bit set again, the rest through int64 (-1 -> 2^64 - 1, NaN ->
 * 2^63); uint32 does the same around 2^31 through int32, as MLX's
 * vectorised loop does (its scalar loop, which MLX runs on the last few
 * elements of a row, wraps the int64 conversion instead: the two differ
 * only for NaN, values below -2^31 and from 2^32 up).  Computed in
 * double, which holds every float, half and bfloat16 exactly. */
static inline int32_t cm_f2i32(double v) {
  return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}
static inline int64_t cm_f2i64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}
static inline uint8_t cm_f2u8(double v) { return (uint8_t)(uint32_t)cm_f2i32(v); }
static inline uint16_t cm_f2u16(double v) { return (uint16_t)(uint32_t)cm_f2i32(v); }
static inline int8_t cm_f2i8(double v) { return (int8_t)cm_f2i32(v); }
static inline int16_t cm_f2i16(double v) { return (int16_t)cm_f2i32(v); }
static inline uint32_t cm_f2u32(double v) {
  return v >= 2147483648.0 ? (uint32_t)cm_f2i32(v - 2147483648.0) ^ 0x80000000u
                           : (uint32_t)cm_f2i32(v);
}
static inline uint64_t cm_f2u64(double v) {
  return v >= 9223372036854775808.0 ? (uint64_t)cm_f2i64(v - 9223372036854775808.0) ^ (1ull << 63)
                                    : (uint64_t)cm_f2i64(v);
}

/* Convert one element between any two dtypes (slow path, used for scalars,
 * fills and item()).  Values go through double/complex. */
void cm_convert_scalar(void *dst, cm_dtype dt, const void *src, cm_dtype st);
/* Read an element as double (real part for complex) / write from double. */
double cm_load_as_double(const void *src, cm_dtype t);
void cm_store_double(void *dst, cm_dtype t, double v);
int64_t cm_load_as_int64(const void *src, cm_dtype t);

#endif
