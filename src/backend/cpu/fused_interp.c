/* A fused program run without a generated kernel (no C compiler, or a
 * build that failed): op by op over blocks of BLK elements, each op one
 * call of the row function its op-by-op kernel runs, into a block buffer
 * of its dtype.  The values are those of the unfused nodes, which the
 * generated kernels equal bit for bit, so a program gives the same bits
 * whether it was built or not.  Outputs are stored after the block's last
 * op, since an output may have taken over an input's buffer. */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/binary_impl.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/fused.h"
#include "backend/cpu/unary_impl.h"

#define BLK 256
#define ITEM 8 /* the widest dtype (int64, float64, complex64) */

/* Block buffers, one per op: per thread, grown to the largest program
 * seen (the pool's threads live as long as the process). */
static _Thread_local char *scratch;
static _Thread_local size_t scratch_cap;

static char *buffers(size_t need) {
  if (need <= scratch_cap) return scratch;
  char *s = realloc(scratch, need);
  if (!s) return NULL;
  scratch = s, scratch_cap = need;
  return s;
}

/* Rows of bytes only: the select the Select kernel computes. */
static void select_row(char *o, const char *c, int64_t cs, const char *a, int64_t as, const char *b,
                       int64_t bs, int64_t m, int64_t isz) {
  for (int64_t i = 0; i < m; i++)
    memcpy(o + i * isz, c[i * cs] ? a + i * as * isz : b + i * bs * isz, (size_t)isz);
}

/* The AsType kernel's rows: a byte copy within a dtype, else the
 * conversion row (the copy kernel's choice). */
static void cast_row(char *dst, cm_dtype dt, const char *src, int64_t ss, cm_dtype st, int64_t m) {
  cm_convert_row_fn f = dt == st ? NULL : cm_cpu_convert_row(st, dt);
  int64_t isz = (int64_t)cm_dtype_size(st);
  if (f) f(dst, 1, src, ss, m);
  else if (dt == st)
    for (int64_t i = 0; i < m; i++) memcpy(dst + i * isz, src + i * ss * isz, (size_t)isz);
  else {
    int64_t one = 1;
    int32_t len = (int32_t)m;
    cm_cpu_copy_strided(dst, dt, &one, src, st, &ss, 1, &len);
  }
}

static void run_op(const cm_fused_op *o, char *dst, const char *const *src, const int64_t *ss,
                   const cm_dtype *dt, int64_t m) {
  switch ((cm_fused_op_kind)o->kind) {
  case CM_FUSED_UNARY: {
    cm_unary_row_fn f = ss[0] == 1 ? cm_unary_simd((cm_unary_op)o->op, dt[0]) : NULL;
    if (!f) f = cm_unary_row((cm_unary_op)o->op, dt[0]);
    f(dst, 1, src[0], ss[0], m, &o->up);
    break;
  }
  case CM_FUSED_BINARY: {
    cm_bin_run run = {m, 1, {1, ss[0], ss[1]}, {0, 0, 0}};
    cm_binary_row_for((cm_binary_op)o->op, dt[0])(dst, src[0], src[1], &run);
    break;
  }
  case CM_FUSED_SELECT:
    select_row(dst, src[0], ss[0], src[1], ss[1], src[2], ss[2], m, (int64_t)cm_dtype_size(dt[1]));
    break;
  case CM_FUSED_CAST: cast_row(dst, (cm_dtype)o->dtype, src[0], ss[0], dt[0], m); break;
  default: break;
  }
}

void cm_fused_interpret(const cm_fused_program *p, int64_t n, const char *const *in,
                        const int64_t *is, char *const *out) {
  char *buf = buffers((size_t)p->nops * BLK * ITEM);
  if (!buf) abort(); /* inside a kernel's work item: nothing sane to do */
  for (int64_t b0 = 0; b0 < n; b0 += BLK) {
    int64_t m = n - b0 < BLK ? n - b0 : BLK;
    for (int j = 0; j < p->nops; j++) {
      const cm_fused_op *o = &p->ops[j];
      const char *src[3];
      int64_t ss[3];
      cm_dtype dt[3];
      for (int a = 0; a < o->nargs; a++) {
        int v = o->arg[a];
        dt[a] = cm_fused_value_dtype(p, v);
        if (v >= p->nin) {
          src[a] = buf + (size_t)(v - p->nin) * BLK * ITEM, ss[a] = 1;
        } else {
          ss[a] = p->in_scalar[v] ? 0 : is[v];
          src[a] = in[v] + b0 * ss[a] * (int64_t)cm_dtype_size(dt[a]);
        }
      }
      run_op(o, buf + (size_t)j * BLK * ITEM, src, ss, dt, m);
    }
    for (int k = 0; k < p->nout; k++) {
      size_t osz = cm_dtype_size((cm_dtype)p->ops[p->outs[k]].dtype);
      memcpy(out[k] + (size_t)b0 * osz, buf + (size_t)p->outs[k] * BLK * ITEM, (size_t)m * osz);
    }
  }
}
