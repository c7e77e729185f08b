#include "backend/cpu/ternary.h"

#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/binary_loop.h"

/* Selection only moves bits, so one loop per element size serves every
 * dtype.  Fast paths: all contiguous, and one value a broadcast scalar
 * (where(mask, x, 0)); everything else takes the strided loop. */
#define SELECT_ROW(T)                                                                  \
  static void select_##T(void *ctx, char *const *p, const int64_t *st, int64_t n) {    \
    (void)ctx;                                                                         \
    T *restrict o = (T *)p[0];                                                         \
    const bool *restrict c = (const bool *)p[1];                                       \
    const T *restrict x = (const T *)p[2], *restrict y = (const T *)p[3];              \
    if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) {                        \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                       \
    } else if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 0) {                 \
      const T yv = y[0];                                                               \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : yv;                         \
    } else if (st[0] == 1 && st[1] == 1 && st[2] == 0 && st[3] == 1) {                 \
      const T xv = x[0];                                                               \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? xv : y[i];                         \
    } else {                                                                           \
      for (int64_t i = 0; i < n; i++)                                                  \
        o[i * st[0]] = c[i * st[1]] ? x[i * st[2]] : y[i * st[3]];                     \
    }                                                                                  \
  }
SELECT_ROW(uint8_t)
SELECT_ROW(uint16_t)
SELECT_ROW(uint32_t)
SELECT_ROW(uint64_t)

int cm_cpu_select(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  (void)p;
  cm_ew_seg_fn fn;
  switch (cm_itemsize(out)) {
  case 1: fn = select_uint8_t; break;
  case 2: fn = select_uint16_t; break;
  case 4: fn = select_uint32_t; break;
  case 8: fn = select_uint64_t; break;
  default: return cm_error(CM_ERR_NOT_IMPLEMENTED, "[Select] Not implemented for %s.", cm_dtype_name(out->dtype));
  }
  if (in[0]->dtype != CM_BOOL || in[1]->dtype != out->dtype || in[2]->dtype != out->dtype)
    return cm_error(CM_ERR_RUNTIME, "[Select] Inputs must be bool, %s, %s.", cm_dtype_name(out->dtype),
                    cm_dtype_name(out->dtype));
  char *data[4] = {NULL, cm_data(in[0]), cm_data(in[1]), cm_data(in[2])};
  /* any input of the output's item size may give its buffer: the condition
   * too when the output is 1 byte wide */
  if (cm_ew_output(out, in, 3, NULL)) return -1;
  data[0] = cm_data(out);
  cm_array *ops[4] = {out, in[0], in[1], in[2]};
  cm_ew_run(ops, data, 4, 1, fn, NULL);
  return 0;
}
