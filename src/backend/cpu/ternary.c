#include "backend/cpu/ternary.h"

#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/binary_loop.h"

/* Selection only moves bits, so one loop per element size serves every
 * dtype.  Fast paths: all contiguous, and one value a broadcast scalar
 * (where(mask, x, 0)); everything else takes the strided loop.  The fast
 * loops select with a mask (x & m) | (y & ~m) -- SSE2 has no blend for ?:
 * -- and run in blocks of 16 for gcc's -O2 vectoriser (see binary_impl.h). */
#define BLOCKS(N, ...)                             \
  {                                                \
    int64_t i0 = 0;                                \
    for (; i0 + 16 <= (N); i0 += 16)               \
      for (int k = 0; k < 16; k++) {               \
        int64_t i = i0 + k;                        \
        __VA_ARGS__                                \
      }                                            \
    for (int64_t i = i0; i < (N); i++) __VA_ARGS__ \
  }

#define SELECT_ROW(T)                                                                         \
  static void sel_vv_##T(T *restrict o, const uint8_t *restrict c, const T *restrict x,       \
                         const T *restrict y, int64_t n) {                                    \
    BLOCKS(n, {                                                                               \
      T m = (T)0 - (T)c[i];                                                                   \
      o[i] = (T)((x[i] & m) | (y[i] & (T)~m));                                                \
    })                                                                                        \
  }                                                                                           \
  static void sel_vs_##T(T *restrict o, const uint8_t *restrict c, const T *restrict x,       \
                         T yv, int64_t n) {                                                   \
    BLOCKS(n, {                                                                               \
      T m = (T)0 - (T)c[i];                                                                   \
      o[i] = (T)((x[i] & m) | (yv & (T)~m));                                                  \
    })                                                                                        \
  }                                                                                           \
  static void sel_sv_##T(T *restrict o, const uint8_t *restrict c, T xv, const T *restrict y, \
                         int64_t n) {                                                         \
    BLOCKS(n, {                                                                               \
      T m = (T)0 - (T)c[i];                                                                   \
      o[i] = (T)((xv & m) | (y[i] & (T)~m));                                                  \
    })                                                                                        \
  }                                                                                           \
  static void select_##T(void *ctx, char *const *p, const int64_t *st, int64_t n,             \
                         int64_t rows, const int64_t *rs) {                                   \
    (void)ctx;                                                                                \
    bool unit = st[0] == 1 && st[1] == 1;                                                     \
    for (int64_t r = 0; r < rows; r++) {                                                      \
      T *o = (T *)p[0] + r * rs[0];                                                           \
      const uint8_t *c = (const uint8_t *)p[1] + r * rs[1];                                   \
      const T *x = (const T *)p[2] + r * rs[2], *y = (const T *)p[3] + r * rs[3];             \
      if (unit && st[2] == 1 && st[3] == 1) sel_vv_##T(o, c, x, y, n);                        \
      else if (unit && st[2] == 1 && st[3] == 0) sel_vs_##T(o, c, x, y[0], n);                \
      else if (unit && st[2] == 0 && st[3] == 1) sel_sv_##T(o, c, x[0], y, n);                \
      else                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                       \
          o[i * st[0]] = c[i * st[1]] ? x[i * st[2]] : y[i * st[3]];                          \
    }                                                                                         \
  }
SELECT_ROW(uint8_t)
SELECT_ROW(uint16_t)
SELECT_ROW(uint32_t)
SELECT_ROW(uint64_t)

int cm_cpu_select(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_ew_seg_fn fn;
  switch (cm_itemsize(out)) {
  case 1: fn = select_uint8_t; break;
  case 2: fn = select_uint16_t; break;
  case 4: fn = select_uint32_t; break;
  case 8: fn = select_uint64_t; break;
  default:
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[Select] Not implemented for %s.",
                    cm_dtype_name(out->dtype));
  }
  if (in[0]->dtype != CM_BOOL || in[1]->dtype != out->dtype || in[2]->dtype != out->dtype)
    return cm_error(CM_ERR_RUNTIME, "[Select] Inputs must be bool, %s, %s.",
                    cm_dtype_name(out->dtype), cm_dtype_name(out->dtype));
  char *data[4] = {NULL, cm_data(in[0]), cm_data(in[1]), cm_data(in[2])};
  /* any input of the output's item size may give its buffer: the condition
   * too when the output is 1 byte wide */
  if (cm_ew_output(out, in, 3)) return -1;
  data[0] = cm_data(out);
  cm_array *ops[4] = {out, in[0], in[1], in[2]};
  cm_ew_run(ops, data, 4, 1, fn, NULL);
  return 0;
}
