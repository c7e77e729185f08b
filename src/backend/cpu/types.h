/* Element types for kernels and the X-macro lists that stamp out one loop
 * per dtype.  float16 and bfloat16 are stored as uint16_t bit patterns and
 * computed in float; complex64 is C's float _Complex. */
#ifndef CMLX_BACKEND_CPU_TYPES_H
#define CMLX_BACKEND_CPU_TYPES_H

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef uint16_t cm_f16_t;
typedef uint16_t cm_bf16_t;
typedef float _Complex cm_c64_t;

/* X(dtype_enum, c_type, suffix) for every dtype. */
#define CM_FOR_ALL_DTYPES(X)               \
  X(CM_BOOL, bool, b8)                   \
  X(CM_UINT8, uint8_t, u8)                 \
  X(CM_UINT16, uint16_t, u16)              \
  X(CM_UINT32, uint32_t, u32)              \
  X(CM_UINT64, uint64_t, u64)              \
  X(CM_INT8, int8_t, i8)                   \
  X(CM_INT16, int16_t, i16)                \
  X(CM_INT32, int32_t, i32)                \
  X(CM_INT64, int64_t, i64)                \
  X(CM_FLOAT16, cm_f16_t, f16)             \
  X(CM_FLOAT32, float, f32)                \
  X(CM_FLOAT64, double, f64)               \
  X(CM_BFLOAT16, cm_bf16_t, bf16)          \
  X(CM_COMPLEX64, cm_c64_t, c64)

/* Loads into a computation type and stores back, per storage suffix.
 * Integers and bool compute in themselves; halves in float. */
#define CM_LOAD_b8(x) (x)
#define CM_LOAD_u8(x) (x)
#define CM_LOAD_u16(x) (x)
#define CM_LOAD_u32(x) (x)
#define CM_LOAD_u64(x) (x)
#define CM_LOAD_i8(x) (x)
#define CM_LOAD_i16(x) (x)
#define CM_LOAD_i32(x) (x)
#define CM_LOAD_i64(x) (x)
#define CM_LOAD_f16(x) cm_f16_to_f32(x)
#define CM_LOAD_f32(x) (x)
#define CM_LOAD_f64(x) (x)
#define CM_LOAD_bf16(x) cm_bf16_to_f32(x)
#define CM_LOAD_c64(x) (x)

#define CM_STORE_f16(v) cm_f32_to_f16((float)(v))
#define CM_STORE_bf16(v) cm_f32_to_bf16((float)(v))

#endif
