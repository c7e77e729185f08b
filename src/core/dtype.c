#include "core/dtype.h"

#include <math.h>
#include <string.h>

static const size_t dtype_sizes[CM_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8};
static const char *const dtype_names[CM_NUM_DTYPES] = {
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
    "int32", "int64", "float16", "float32", "float64", "bfloat16", "complex64"};
static const cm_kind dtype_kinds[CM_NUM_DTYPES] = {
    CM_KIND_BOOL, CM_KIND_UINT, CM_KIND_UINT, CM_KIND_UINT, CM_KIND_UINT,
    CM_KIND_INT, CM_KIND_INT, CM_KIND_INT, CM_KIND_INT, CM_KIND_FLOAT,
    CM_KIND_FLOAT, CM_KIND_FLOAT, CM_KIND_FLOAT, CM_KIND_COMPLEX};

bool cm_dtype_valid(int t) { return t >= 0 && t < CM_NUM_DTYPES; }
size_t cm_dtype_size(cm_dtype t) { return dtype_sizes[t]; }
const char *cm_dtype_name(cm_dtype t) {
  return cm_dtype_valid((int)t) ? dtype_names[t] : "invalid";
}
cm_kind cm_dtype_kind(cm_dtype t) { return dtype_kinds[t]; }
bool cm_dtype_is_float(cm_dtype t) { return dtype_kinds[t] == CM_KIND_FLOAT; }
bool cm_dtype_is_inexact(cm_dtype t) { return dtype_kinds[t] >= CM_KIND_FLOAT; }
bool cm_dtype_is_integral(cm_dtype t) {
  return dtype_kinds[t] == CM_KIND_UINT || dtype_kinds[t] == CM_KIND_INT;
}

/* The promotion lattice, read off MLX 0.32 (mx.promote_types) for every pair.
 * It follows JAX's rules: mixing signed and unsigned widens, uint64 with a
 * signed int goes to float32, any int with a float keeps the float, and
 * float16 with bfloat16 meets at float32. */
#define B CM_BOOL
#define U8 CM_UINT8
#define U16 CM_UINT16
#define U32 CM_UINT32
#define U64 CM_UINT64
#define I8 CM_INT8
#define I16 CM_INT16
#define I32 CM_INT32
#define I64 CM_INT64
#define F16 CM_FLOAT16
#define F32 CM_FLOAT32
#define F64 CM_FLOAT64
#define BF CM_BFLOAT16
#define C64 CM_COMPLEX64
static const unsigned char promotion[CM_NUM_DTYPES][CM_NUM_DTYPES] = {
    /*        B    U8   U16  U32  U64  I8   I16  I32  I64  F16  F32  F64  BF   C64 */
    /* B   */ {B, U8, U16, U32, U64, I8, I16, I32, I64, F16, F32, F64, BF, C64},
    /* U8  */ {U8, U8, U16, U32, U64, I16, I16, I32, I64, F16, F32, F64, BF, C64},
    /* U16 */ {U16, U16, U16, U32, U64, I32, I32, I32, I64, F16, F32, F64, BF, C64},
    /* U32 */ {U32, U32, U32, U32, U64, I64, I64, I64, I64, F16, F32, F64, BF, C64},
    /* U64 */ {U64, U64, U64, U64, U64, F32, F32, F32, F32, F16, F32, F64, BF, C64},
    /* I8  */ {I8, I16, I32, I64, F32, I8, I16, I32, I64, F16, F32, F64, BF, C64},
    /* I16 */ {I16, I16, I32, I64, F32, I16, I16, I32, I64, F16, F32, F64, BF, C64},
    /* I32 */ {I32, I32, I32, I64, F32, I32, I32, I32, I64, F16, F32, F64, BF, C64},
    /* I64 */ {I64, I64, I64, I64, F32, I64, I64, I64, I64, F16, F32, F64, BF, C64},
    /* F16 */ {F16, F16, F16, F16, F16, F16, F16, F16, F16, F16, F32, F64, F32, C64},
    /* F32 */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F64, F32, C64},
    /* F64 */ {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C64},
    /* BF  */ {BF, BF, BF, BF, BF, BF, BF, BF, BF, F32, F32, F64, BF, C64},
    /* C64 */ {C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64},
};
#undef B
#undef U8
#undef U16
#undef U32
#undef U64
#undef I8
#undef I16
#undef I32
#undef I64
#undef F16
#undef F32
#undef F64
#undef BF
#undef C64

cm_dtype cm_promote_types(cm_dtype a, cm_dtype b) { return (cm_dtype)promotion[a][b]; }

cm_dtype cm_weak_scalar_dtype(cm_dtype array_dtype, int scalar_kind) {
  switch (scalar_kind) {
  case 0: return array_dtype;
  case 1: return array_dtype == CM_BOOL ? CM_INT32 : array_dtype;
  case 2: return cm_dtype_is_float(array_dtype) ? array_dtype : CM_FLOAT32;
  default: return CM_COMPLEX64;
  }
}

cm_dtype cm_float_result_type(cm_dtype t) { return cm_dtype_is_inexact(t) ? t : CM_FLOAT32; }

/* ---- categories ---------------------------------------------------------- */

static const char *const category_names[CM_NUM_CATEGORIES] = {
    "complexfloating", "floating", "inexact", "signedinteger",
    "unsignedinteger", "integer", "number", "generic"};

const char *cm_category_name(cm_category c) { return category_names[c]; }

static cm_category parent_category(cm_category c) {
  switch (c) {
  case CM_CAT_COMPLEXFLOATING:
  case CM_CAT_FLOATING: return CM_CAT_INEXACT;
  case CM_CAT_SIGNEDINTEGER:
  case CM_CAT_UNSIGNEDINTEGER: return CM_CAT_INTEGER;
  case CM_CAT_INEXACT:
  case CM_CAT_INTEGER: return CM_CAT_NUMBER;
  default: return CM_CAT_GENERIC;
  }
}

bool cm_category_sub(cm_category a, cm_category b) {
  for (;;) {
    if (a == b) return true;
    if (a == CM_CAT_GENERIC) return false;
    a = parent_category(a);
  }
}

bool cm_issubdtype(cm_dtype t, cm_category c) {
  cm_category own;
  switch (dtype_kinds[t]) {
  case CM_KIND_BOOL: return c == CM_CAT_GENERIC; /* bool is only generic in MLX */
  case CM_KIND_UINT: own = CM_CAT_UNSIGNEDINTEGER; break;
  case CM_KIND_INT: own = CM_CAT_SIGNEDINTEGER; break;
  case CM_KIND_FLOAT: own = CM_CAT_FLOATING; break;
  default: own = CM_CAT_COMPLEXFLOATING; break;
  }
  return cm_category_sub(own, c);
}

/* ---- float16 ------------------------------------------------------------- */

float cm_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: renormalise */
    int e = -1;
    do { man <<= 1; e++; } while (!(man & 0x400u));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  union { uint32_t u; float f; } v = { .u = bits };
  return v.f;
}

uint16_t cm_f32_to_f16(float f) {
  union { uint32_t u; float f; } v = { .f = f };
  uint32_t sign = (v.u >> 16) & 0x8000u, a = v.u & 0x7fffffffu;
  if (a >= 0x7f800000u) /* inf or NaN */
    return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
  if (a < 0x38800000u) { /* result is subnormal or zero */
    if (a < 0x33000000u) return (uint16_t)sign; /* below half the smallest subnormal */
    /* value = man * 2^(e-150) and a subnormal half counts units of 2^-24 */
    uint32_t man = (a & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(a >> 23);
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = a + 0xc8000fffu + ((a >> 13) & 1u); /* rebias exponent, round to even */
  return (uint16_t)(sign | (r >> 13));
}

/* ---- scalar conversion (slow path) -------------------------------------- */

double cm_load_as_double(const void *p, cm_dtype t) {
  switch (t) {
  case CM_BOOL: return *(const uint8_t *)p != 0; /* raw bytes too */
  case CM_UINT8: return *(const uint8_t *)p;
  case CM_UINT16: return *(const uint16_t *)p;
  case CM_UINT32: return *(const uint32_t *)p;
  case CM_UINT64: return (double)*(const uint64_t *)p;
  case CM_INT8: return *(const int8_t *)p;
  case CM_INT16: return *(const int16_t *)p;
  case CM_INT32: return *(const int32_t *)p;
  case CM_INT64: return (double)*(const int64_t *)p;
  case CM_FLOAT16: return cm_f16_to_f32(*(const uint16_t *)p);
  case CM_FLOAT32: return *(const float *)p;
  case CM_FLOAT64: return *(const double *)p;
  case CM_BFLOAT16: return cm_bf16_to_f32(*(const uint16_t *)p);
  case CM_COMPLEX64: return ((const cm_complex64 *)p)->re;
  default: return 0;
  }
}

int64_t cm_load_as_int64(const void *p, cm_dtype t) {
  switch (t) {
  case CM_BOOL: return *(const uint8_t *)p != 0; /* raw bytes too */
  case CM_UINT8: return *(const uint8_t *)p;
  case CM_UINT16: return *(const uint16_t *)p;
  case CM_UINT32: return *(const uint32_t *)p;
  case CM_UINT64: return (int64_t)*(const uint64_t *)p;
  case CM_INT8: return *(const int8_t *)p;
  case CM_INT16: return *(const int16_t *)p;
  case CM_INT32: return *(const int32_t *)p;
  case CM_INT64: return *(const int64_t *)p;
  default: return cm_f2i64(cm_load_as_double(p, t)); /* as astype to int64 */
  }
}

void cm_store_double(void *p, cm_dtype t, double v) {
  switch (t) {
  case CM_BOOL: *(bool *)p = v != 0; break;
  case CM_UINT8: *(uint8_t *)p = cm_f2u8(v); break;
  case CM_UINT16: *(uint16_t *)p = cm_f2u16(v); break;
  case CM_UINT32: *(uint32_t *)p = cm_f2u32(v); break;
  case CM_UINT64: *(uint64_t *)p = cm_f2u64(v); break;
  case CM_INT8: *(int8_t *)p = cm_f2i8(v); break;
  case CM_INT16: *(int16_t *)p = cm_f2i16(v); break;
  case CM_INT32: *(int32_t *)p = cm_f2i32(v); break;
  case CM_INT64: *(int64_t *)p = cm_f2i64(v); break;
  case CM_FLOAT16: *(uint16_t *)p = cm_f32_to_f16((float)v); break;
  case CM_FLOAT32: *(float *)p = (float)v; break;
  case CM_FLOAT64: *(double *)p = v; break;
  case CM_BFLOAT16: *(uint16_t *)p = cm_f32_to_bf16((float)v); break;
  case CM_COMPLEX64: ((cm_complex64 *)p)->re = (float)v; ((cm_complex64 *)p)->im = 0; break;
  default: break;
  }
}

void cm_convert_scalar(void *dst, cm_dtype dt, const void *src, cm_dtype st) {
  if (dt == st) {
    memcpy(dst, src, dtype_sizes[dt]);
  } else if (dt == CM_COMPLEX64 && st == CM_COMPLEX64) {
    memcpy(dst, src, 8);
  } else if (st == CM_COMPLEX64 && dt != CM_COMPLEX64) {
    cm_store_double(dst, dt, ((const cm_complex64 *)src)->re);
  } else if (cm_dtype_is_integral(st) && cm_dtype_is_integral(dt)) {
    /* integer to integer wraps, as a C cast does; no trip through double */
    int64_t v = cm_load_as_int64(src, st);
    switch (dt) {
    case CM_UINT8: *(uint8_t *)dst = (uint8_t)v; break;
    case CM_UINT16: *(uint16_t *)dst = (uint16_t)v; break;
    case CM_UINT32: *(uint32_t *)dst = (uint32_t)v; break;
    case CM_UINT64: *(uint64_t *)dst = (uint64_t)v; break;
    case CM_INT8: *(int8_t *)dst = (int8_t)v; break;
    case CM_INT16: *(int16_t *)dst = (int16_t)v; break;
    case CM_INT32: *(int32_t *)dst = (int32_t)v; break;
    default: *(int64_t *)dst = v; break;
    }
  } else {
    cm_store_double(dst, dt, cm_load_as_double(src, st));
  }
}
