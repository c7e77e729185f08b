#include "backend/cpu/unary.h"

#include <math.h>

#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/unary.h"

typedef void (*row_fn)(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n);

#define DEF_ROW(NAME, T, SFX, EXPR)                                                       \
  static void NAME##_##SFX(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) { \
    T *d = dst;                                                                            \
    const T *s = src;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                      \
      __typeof__(CM_LOAD_##SFX(s[0])) x = CM_LOAD_##SFX(s[i * ss]);                        \
      d[i * ds] = (T)(EXPR);                                                               \
    }                                                                                      \
  }

DEF_ROW(neg, float, f32, -x)
DEF_ROW(exp, float, f32, expf(x))

static row_fn kernel_for(cm_unary_op op, cm_dtype t) {
  if (t != CM_FLOAT32) return NULL;
  switch (op) {
  case CM_UNARY_NEGATIVE: return neg_f32;
  case CM_UNARY_EXP: return exp_f32;
  default: return NULL;
  }
}

typedef struct job { cm_layout L; row_fn fn; char *dst; const char *src; size_t isz, osz; } job;

static void run_rows(void *ctx, int64_t b, int64_t e) {
  job *j = ctx;
  cm_row_cursor c;
  cm_row_cursor_seek(&c, &j->L, b);
  for (int64_t r = b; r < e; r++, cm_row_cursor_next(&c))
    j->fn(j->dst + c.offset[0] * (int64_t)j->osz, cm_layout_row_stride(&j->L, 0),
          j->src + c.offset[1] * (int64_t)j->isz, cm_layout_row_stride(&j->L, 1), cm_layout_row_len(&j->L));
}

int cm_cpu_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  cm_unary_op op = ((const cm_unary_params *)p)->op;
  row_fn fn = kernel_for(op, in[0]->dtype);
  if (!fn)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[%s] Not implemented for %s.", cm_unary_op_name(op),
                    cm_dtype_name(in[0]->dtype));
  const char *src = cm_data(in[0]); /* before donation may take the buffer */
  if (!cm_try_donate(out, in[0]) && cm_alloc_output_like(out, in[0])) return -1;
  job j = {.fn = fn, .dst = cm_data(out), .src = src, .isz = cm_itemsize(in[0]), .osz = cm_itemsize(out)};
  cm_array *ops[2] = {out, in[0]};
  cm_layout_of(&j.L, ops, 2);
  cm_parallel_for(cm_layout_rows(&j.L), 1, run_rows, &j);
  return 0;
}
