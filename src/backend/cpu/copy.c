#include "backend/cpu/copy.h"

#include <string.h>

#include "backend/cpu/convert_half.h"
#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"

/* Store a loaded value v (bool, an integer, float, double or complex) as
 * the destination type.  _Generic picks the rule by the loaded type:
 * floats convert as MLX's casts do (cm_f2<T> in core/dtype.h), complex
 * by its real part, integers wrap. */
#define TO_INT(T, F2I, v)                                                      \
  _Generic((v), float: F2I((double)(v)), double: F2I((double)(v)),             \
           cm_c64_t: F2I((double)crealf((cm_c64_t)(v))), default: (T)(v))
#define TO_REAL(T, v) _Generic((v), cm_c64_t: (T)crealf((cm_c64_t)(v)), default: (T)(v))

#define STORE_b8(v) ((v) != 0)
#define STORE_u8(v) TO_INT(uint8_t, cm_f2u8, v)
#define STORE_u16(v) TO_INT(uint16_t, cm_f2u16, v)
#define STORE_u32(v) TO_INT(uint32_t, cm_f2u32, v)
#define STORE_u64(v) TO_INT(uint64_t, cm_f2u64, v)
#define STORE_i8(v) TO_INT(int8_t, cm_f2i8, v)
#define STORE_i16(v) TO_INT(int16_t, cm_f2i16, v)
#define STORE_i32(v) TO_INT(int32_t, cm_f2i32, v)
#define STORE_i64(v) TO_INT(int64_t, cm_f2i64, v)
#define STORE_f16(v) cm_f32_to_f16(TO_REAL(float, v))
#define STORE_f32(v) TO_REAL(float, v)
#define STORE_f64(v) TO_REAL(double, v)
#define STORE_bf16(v) cm_f32_to_bf16(TO_REAL(float, v))
#define STORE_c64(v) ((cm_c64_t)(v))

typedef cm_convert_row_fn convert_row_fn;

/* One row loop per (source, destination) pair. */
#define DEFINE_ROW(SE, ST, SS, DE, DT, DS)                                               \
  static void row_##SS##_##DS(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) { \
    DT *d = dst;                                                                          \
    const ST *s = src;                                                                    \
    if (ds == 1 && ss == 1) {                                                             \
      for (int64_t i = 0; i < n; i++) d[i] = STORE_##DS(CM_LOAD_##SS(s[i]));              \
    } else {                                                                              \
      for (int64_t i = 0; i < n; i++) d[i * ds] = STORE_##DS(CM_LOAD_##SS(s[i * ss]));    \
    }                                                                                     \
  }
#define DEFINE_ROWS_FROM(SE, ST, SS)                   \
  DEFINE_ROW(SE, ST, SS, CM_BOOL, bool, b8)          \
  DEFINE_ROW(SE, ST, SS, CM_UINT8, uint8_t, u8)        \
  DEFINE_ROW(SE, ST, SS, CM_UINT16, uint16_t, u16)     \
  DEFINE_ROW(SE, ST, SS, CM_UINT32, uint32_t, u32)     \
  DEFINE_ROW(SE, ST, SS, CM_UINT64, uint64_t, u64)     \
  DEFINE_ROW(SE, ST, SS, CM_INT8, int8_t, i8)          \
  DEFINE_ROW(SE, ST, SS, CM_INT16, int16_t, i16)       \
  DEFINE_ROW(SE, ST, SS, CM_INT32, int32_t, i32)       \
  DEFINE_ROW(SE, ST, SS, CM_INT64, int64_t, i64)       \
  DEFINE_ROW(SE, ST, SS, CM_FLOAT16, cm_f16_t, f16)    \
  DEFINE_ROW(SE, ST, SS, CM_FLOAT32, float, f32)       \
  DEFINE_ROW(SE, ST, SS, CM_FLOAT64, double, f64)      \
  DEFINE_ROW(SE, ST, SS, CM_BFLOAT16, cm_bf16_t, bf16) \
  DEFINE_ROW(SE, ST, SS, CM_COMPLEX64, cm_c64_t, c64)
CM_FOR_ALL_DTYPES(DEFINE_ROWS_FROM)

#define ROW_ENTRY(SE, ST, SS) \
  {row_##SS##_b8, row_##SS##_u8,  row_##SS##_u16, row_##SS##_u32, row_##SS##_u64, \
   row_##SS##_i8,   row_##SS##_i16, row_##SS##_i32, row_##SS##_i64, row_##SS##_f16, \
   row_##SS##_f32,  row_##SS##_f64, row_##SS##_bf16, row_##SS##_c64},
static const convert_row_fn convert_rows[CM_NUM_DTYPES][CM_NUM_DTYPES] = {
    CM_FOR_ALL_DTYPES(ROW_ENTRY)};

/* MLX never vectorises its float16 -> uint32 loop, so every element gets
 * the scalar loop's result: the low 32 bits of the int64 conversion (see
 * cm_f2u32 for the vectorised rule the other float types get). */
#define STORE_u32w(v) ((uint32_t)cm_f2i64((double)(v)))
DEFINE_ROW(CM_FLOAT16, cm_f16_t, f16, CM_UINT32, uint32_t, u32w)

static convert_row_fn row_for(cm_dtype st, cm_dtype dt) {
  if (st == CM_FLOAT16 && dt == CM_UINT32) return row_f16_u32w;
  convert_row_fn fast = cm_convert_half_row(st, dt);
  return fast ? fast : convert_rows[st][dt];
}

cm_convert_row_fn cm_cpu_convert_row(cm_dtype st, cm_dtype dt) { return row_for(st, dt); }

/* Same-dtype rows: a plain (strided) byte copy. */
static void copy_row_bytes(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t size) {
  if (ds == 1 && ss == 1) {
    memcpy(d, s, (size_t)n * size);
    return;
  }
  switch (size) {
#define STRIDED_CASE(SZ, T)                                                        \
  case SZ:                                                                         \
    for (int64_t i = 0; i < n; i++) ((T *)d)[i * ds] = ((const T *)s)[i * ss];     \
    break;
    STRIDED_CASE(1, uint8_t)
    STRIDED_CASE(2, uint16_t)
    STRIDED_CASE(4, uint32_t)
    STRIDED_CASE(8, uint64_t)
#undef STRIDED_CASE
  default: break;
  }
}

typedef struct copy_job {
  cm_layout L;
  char *dst;
  const char *src;
  cm_dtype dt, st;
} copy_job;

static void copy_rows(void *ctx, int64_t begin, int64_t end) {
  copy_job *j = ctx;
  size_t dsz = cm_dtype_size(j->dt), ssz = cm_dtype_size(j->st);
  int64_t n = cm_layout_row_len(&j->L), ds = cm_layout_row_stride(&j->L, 0),
          ss = cm_layout_row_stride(&j->L, 1);
  convert_row_fn fn = row_for(j->st, j->dt);
  cm_row_cursor c;
  cm_row_cursor_seek(&c, &j->L, begin);
  for (int64_t r = begin; r < end; r++, cm_row_cursor_next(&c)) {
    char *d = j->dst + c.offset[0] * (int64_t)dsz;
    const char *s = j->src + c.offset[1] * (int64_t)ssz;
    if (j->dt == j->st) copy_row_bytes(d, ds, s, ss, n, dsz);
    else fn(d, ds, s, ss, n);
  }
}

/* Parallelise over rows, or over chunks of one long row. */
typedef struct flat_job { char *dst; const char *src; cm_dtype dt, st; } flat_job;

static void copy_flat(void *ctx, int64_t begin, int64_t end) {
  flat_job *j = ctx;
  size_t dsz = cm_dtype_size(j->dt), ssz = cm_dtype_size(j->st);
  char *d = j->dst + begin * (int64_t)dsz;
  const char *s = j->src + begin * (int64_t)ssz;
  if (j->dt == j->st) memcpy(d, s, (size_t)(end - begin) * dsz);
  else row_for(j->st, j->dt)(d, 1, s, 1, end - begin);
}

void cm_cpu_convert(void *dst, cm_dtype dt, const void *src, cm_dtype st, int64_t n) {
  flat_job j = {dst, src, dt, st};
  cm_parallel_for(n, cm_grain(2), copy_flat, &j);
}

void cm_cpu_copy_strided(void *dst, cm_dtype dt, const int64_t *dst_strides, const void *src,
                         cm_dtype st, const int64_t *src_strides, int ndim, const int32_t *shape) {
  copy_job j;
  const int64_t *strides[2] = {dst_strides, src_strides};
  cm_layout_init(&j.L, ndim, shape, 2, strides);
  j.dst = dst;
  j.src = src;
  j.dt = dt;
  j.st = st;
  if (j.L.ndim == 1 && j.L.strides[0][0] == 1 && j.L.strides[1][0] == 1) {
    cm_cpu_convert(dst, dt, src, st, j.L.shape[0]);
    return;
  }
  int64_t rows = cm_layout_rows(&j.L), len = cm_layout_row_len(&j.L);
  cm_parallel_for(rows, cm_grain(2 * (len ? len : 1)), copy_rows, &j);
}
