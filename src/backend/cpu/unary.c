/* CPU driver for the Unary primitive: pick the loop for (op, dtype), place
 * the output (donated input buffer, or a fresh one with the input's dense
 * layout), and split the work over the thread pool.
 *
 * Two paths:
 *  - flat: input and output are dense with the same strides (any
 *    contiguous input, transposed ones included, since the output copies
 *    its permutation).  One loop over the buffer, cut into chunks of whole
 *    blocks per thread, using the vectorised loop when there is one.
 *  - strided: anything else (slices with gaps, broadcasts).  The row cursor
 *    walks the collapsed rows; threads take rows, or pieces of rows when
 *    there are fewer rows than threads. */
#include "backend/cpu/unary.h"

#include <string.h>

#include "backend/cpu/strided.h"
#include "backend/cpu/unary_impl.h"
#include "backend/cpu/unary_table.h"
#include "core/threadpool.h"

/* Flat chunks are whole blocks, so each thread's share starts on a fresh
 * cache line and the vector loops see long runs. */
#define BLOCK 256

/* Rough cost per element in "cheap operations", to size chunks: the pool
 * wakes threads only when each gets ~32K such operations.  The op's cost
 * column picks the class; a vectorised loop is cheap whatever the op. */
static inline int64_t cost_CHEAP(cm_dtype t) { return t == CM_FLOAT16 ? 4 : 1; }
static inline int64_t cost_EXACT(cm_dtype t) { return t == CM_COMPLEX64 ? 16 : 4; }
static inline int64_t cost_TRANS(cm_dtype t) { return t == CM_COMPLEX64 ? 64 : 16; }
static inline int64_t cost_HEAVY(cm_dtype t) { return (void)t, 64; }

static int64_t op_cost(cm_unary_op op, cm_dtype t, bool vectorised) {
  if (vectorised) return 2;
  switch (op) {
#define CM_X(CODE, cost, ...) \
  case CM_UNARY_##CODE: return cost_##cost(t);
    CM_CPU_UNARY_OPS(CM_X)
#undef CM_X
  default: return cost_TRANS(t);
  }
}

typedef struct job {
  cm_unary_row_fn fn;
  cm_unary_row_fn vec; /* contiguous vector loop, or NULL */
  const cm_unary_params *p;
  char *dst;
  const char *src;
  int64_t osz, isz;
  /* flat path */
  int64_t n;
  /* strided path */
  cm_layout L;
  int64_t split; /* pieces per row */
} job;

static void flat_range(void *ctx, int64_t b, int64_t e) {
  job *j = ctx;
  int64_t lo = b * BLOCK, hi = e * BLOCK < j->n ? e * BLOCK : j->n;
  j->fn(j->dst + lo * j->osz, 1, j->src + lo * j->isz, 1, hi - lo, j->p);
}

/* Copy n elements of size sz between strided runs (steps in elements). */
static void move_strided(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, int64_t sz) {
  switch (sz) {
#define MOVE(SZ, T)                                                        \
  case SZ: {                                                               \
    T *dt = (T *)(void *)d;                                                \
    const T *st = (const T *)(const void *)s;                              \
    for (int64_t i = 0; i < n; i++) dt[i * ds] = st[i * ss];               \
    return;                                                                \
  }
    MOVE(1, uint8_t)
    MOVE(2, uint16_t)
    MOVE(4, uint32_t)
    MOVE(8, uint64_t)
#undef MOVE
  default:
    for (int64_t i = 0; i < n; i++) memcpy(d + i * ds * sz, s + i * ss * sz, (size_t)sz);
  }
}

/* A strided run through the vector loop: gather a block into a buffer,
 * compute there, scatter back.  Every layout then gets the same results as
 * the contiguous path, bit for bit. */
static void staged(const job *j, char *d, int64_t ds, const char *s, int64_t ss, int64_t n) {
  _Alignas(64) char in[BLOCK * 8], out[BLOCK * 8];
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t m = n - i < BLOCK ? n - i : BLOCK;
    move_strided(in, 1, s + i * ss * j->isz, ss, m, j->isz);
    j->vec(out, 1, in, 1, m, j->p);
    move_strided(d + i * ds * j->osz, ds, out, 1, m, j->osz);
  }
}

static void strided_range(void *ctx, int64_t b, int64_t e) {
  job *j = ctx;
  const cm_layout *L = &j->L;
  int64_t len = cm_layout_row_len(L), ds = cm_layout_row_stride(L, 0),
          ss = cm_layout_row_stride(L, 1);
  cm_row_cursor c;
  int64_t row = b / j->split;
  cm_row_cursor_seek(&c, L, row);
  for (int64_t u = b; u < e; u++) {
    int64_t r = u / j->split, piece = u % j->split;
    if (r != row) {
      cm_row_cursor_next(&c);
      row = r;
    }
    int64_t lo = len * piece / j->split, hi = len * (piece + 1) / j->split;
    char *d = j->dst + (c.offset[0] + lo * ds) * j->osz;
    const char *s = j->src + (c.offset[1] + lo * ss) * j->isz;
    if (!j->vec) j->fn(d, ds, s, ss, hi - lo, j->p);
    else if (ds == 1 && ss == 1) j->vec(d, 1, s, 1, hi - lo, j->p);
    else staged(j, d, ds, s, ss, hi - lo);
  }
}

/* Same dense layout: element k of one buffer run is element k of the other. */
static bool same_dense_layout(const cm_array *a, const cm_array *b) {
  if (!cm_is_contiguous(a) || !cm_is_contiguous(b) || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] > 1 && a->strides[i] != b->strides[i]) return false;
  return true;
}

int cm_cpu_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *params) {
  (void)nin, (void)params;
  const cm_unary_params *p = cm_unary_params_of(out);
  cm_array *a = in[0];
  cm_unary_row_fn row = cm_unary_row(p->op, a->dtype);
  if (!row)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[%s] Not implemented for %s.", cm_unary_op_name(p->op),
                    cm_dtype_name(a->dtype));
  const char *src = cm_data(a); /* before donation may take the buffer */
  bool donated = cm_itemsize(out) == cm_itemsize(a) && cm_try_donate(out, a);
  if (!donated && cm_alloc_output_like(out, a)) return -1;
  if (out->size == 0) return 0;

  job j = {.fn = row, .vec = cm_unary_simd(p->op, a->dtype), .p = p, .dst = cm_data(out),
           .src = src, .osz = (int64_t)cm_itemsize(out), .isz = (int64_t)cm_itemsize(a)};
  if (donated || same_dense_layout(out, a)) {
    if (j.vec) j.fn = j.vec;
    j.n = out->size;
    int64_t grain = cm_grain(op_cost(p->op, a->dtype, j.vec != NULL)) / BLOCK + 1;
    cm_parallel_for((j.n + BLOCK - 1) / BLOCK, grain, flat_range, &j);
    return 0;
  }
  cm_array *ops[2] = {out, a};
  cm_layout_of(&j.L, ops, 2);
  int64_t rows = cm_layout_rows(&j.L), len = cm_layout_row_len(&j.L);
  int64_t grain = cm_grain(op_cost(p->op, a->dtype, j.vec != NULL)); /* in elements */
  j.split = 1;
  if (rows < 2 * (int64_t)cm_num_threads() && len >= 2 * grain) {
    j.split = len / grain;
    if (j.split > 4 * (int64_t)cm_num_threads()) j.split = 4 * (int64_t)cm_num_threads();
  }
  int64_t per_unit = len / j.split;
  cm_parallel_for(rows * j.split, per_unit >= grain ? 1 : grain / (per_unit ? per_unit : 1) + 1,
                  strided_range, &j);
  return 0;
}
