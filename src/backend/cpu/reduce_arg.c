/* ArgReduce (argmax, argmin) and Median on the CPU.
 *
 * ArgReduce keeps (best value, its index) while walking the reduced
 * elements in row-major order.  "Better" is strict, so ties keep the first
 * occurrence; a NaN beats everything and the first NaN stays, as in MLX
 * (complex: lexicographic order, NaN in either part).  Long rows are
 * split into blocks whose results are merged left to right with the same
 * rule, which gives the same answer as one sequential walk.
 *
 * Median gathers each output's elements, selects the middle one(s) with
 * quickselect, and gives NaN if any element is NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_table.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/reduce.h"

#define ABLK 8192 /* elements per block of a long arg-reduction row */
#define ACB 512   /* outputs per column chunk */

/* One walk's state; value in the compute type of the dtype. */
typedef struct arg_state {
  union { int64_t i; uint64_t u; float f; double d; cm_c64_t c; } v;
  int64_t idx; /* -1: nothing seen yet */
} arg_state;

typedef void (*arg_run_fn)(arg_state *st, const char *p, int64_t stride, int64_t n, int64_t idx0);
typedef void (*arg_col_fn)(arg_state *acc, const char *row, int64_t n, int64_t idx);
typedef bool (*arg_better_fn)(const arg_state *x, const arg_state *best);

/* Per-type "x is better than best" (strict). */
#define GT_INT(x, b) ((x) > (b))
#define LT_INT(x, b) ((x) < (b))
#define GT_FLT(x, b) (!isnan(b) && ((x) > (b) || isnan(x)))
#define LT_FLT(x, b) (!isnan(b) && ((x) < (b) || isnan(x)))
/* Complex, as MLX compares: lexicographically, where a comparison with a
 * NaN part is false, and an element with a NaN in either part beats one
 * without.  So a running 0+nanj still loses to a later 1+0j (1 > 0).
 * That is not associative: complex rows are walked in one piece. */
static inline bool cnan(cm_c64_t x) { return isnan(crealf(x)) || isnan(cimagf(x)); }
static inline bool gt_c(cm_c64_t x, cm_c64_t b) {
  return (cnan(x) && !cnan(b)) || crealf(x) > crealf(b) ||
         (crealf(x) == crealf(b) && cimagf(x) > cimagf(b));
}
static inline bool lt_c(cm_c64_t x, cm_c64_t b) {
  return (cnan(x) && !cnan(b)) || crealf(x) < crealf(b) ||
         (crealf(x) == crealf(b) && cimagf(x) < cimagf(b));
}
#define GT_C(x, b) gt_c(x, b)
#define LT_C(x, b) lt_c(x, b)

/* A contiguous run of a float type (FAST: its dtype, -1 for the others)
 * in two vector passes: the run's extreme by the Reduce kernel (NaN if
 * there is one), then the first element equal to it (the first NaN).
 * That is the walk's answer: ties keep the first, -0 and +0 are equal to
 * both, and a NaN is the first NaN. */
#define FAST_MIN_RUN 64
static bool arg_fast_run(arg_state *st, const char *p, int64_t n, int64_t idx0, int fast,
                         bool is_max);

#define DEF_ARG(NAME, T, CT, FIELD, LOAD, BETTER, FAST, IS_MAX)                            \
  static void run_##NAME(arg_state *st, const char *p, int64_t stride, int64_t n,          \
                         int64_t idx0) {                                                    \
    if ((FAST) >= 0 && stride == 1 && n >= FAST_MIN_RUN &&                                 \
        arg_fast_run(st, p, n, idx0, FAST, IS_MAX))                                        \
      return;                                                                              \
    const T *s = (const T *)p;                                                             \
    int64_t i = 0, bi = st->idx;                                                           \
    CT best;                                                                               \
    if (bi < 0) {                                                                          \
      if (n == 0) return;                                                                  \
      best = LOAD(s[0]);                                                                   \
      bi = idx0;                                                                           \
      i = 1;                                                                               \
    } else {                                                                               \
      best = st->v.FIELD;                                                                  \
    }                                                                                      \
    for (; i < n; i++) {                                                                   \
      CT x = LOAD(s[i * stride]);                                                          \
      if (BETTER(x, best)) best = x, bi = idx0 + i;                                        \
    }                                                                                      \
    st->v.FIELD = best;                                                                    \
    st->idx = bi;                                                                          \
  }                                                                                        \
  static void col_##NAME(arg_state *acc, const char *row, int64_t n, int64_t idx) {       \
    const T *s = (const T *)row;                                                           \
    for (int64_t j = 0; j < n; j++) {                                                      \
      CT x = LOAD(s[j]);                                                                   \
      if (acc[j].idx < 0 || BETTER(x, acc[j].v.FIELD)) acc[j].v.FIELD = x, acc[j].idx = idx; \
    }                                                                                      \
  }                                                                                        \
  static bool better_##NAME(const arg_state *x, const arg_state *b) {                     \
    return BETTER(x->v.FIELD, b->v.FIELD);                                                 \
  }

#define LD(x) (x)
#define LD_F16(x) cm_f16_to_f32(x)
#define LD_BF16(x) cm_bf16_to_f32(x)

#define DEF_ARG_PAIR(SFX, T, CT, FIELD, LOAD, GT, LT, FAST) \
  DEF_ARG(max_##SFX, T, CT, FIELD, LOAD, GT, FAST, true)    \
  DEF_ARG(min_##SFX, T, CT, FIELD, LOAD, LT, FAST, false)
DEF_ARG_PAIR(b8, uint8_t, uint64_t, u, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(u8, uint8_t, uint64_t, u, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(u16, uint16_t, uint64_t, u, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(u32, uint32_t, uint64_t, u, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(u64, uint64_t, uint64_t, u, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(i8, int8_t, int64_t, i, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(i16, int16_t, int64_t, i, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(i32, int32_t, int64_t, i, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(i64, int64_t, int64_t, i, LD, GT_INT, LT_INT, -1)
DEF_ARG_PAIR(f16, cm_f16_t, float, f, LD_F16, GT_FLT, LT_FLT, CM_FLOAT16)
DEF_ARG_PAIR(f32, float, float, f, LD, GT_FLT, LT_FLT, CM_FLOAT32)
DEF_ARG_PAIR(f64, double, double, d, LD, GT_FLT, LT_FLT, -1)
DEF_ARG_PAIR(bf16, cm_bf16_t, float, f, LD_BF16, GT_FLT, LT_FLT, CM_BFLOAT16)
DEF_ARG_PAIR(c64, cm_c64_t, cm_c64_t, c, LD, GT_C, LT_C, -1)

/* The first of x[0..n) equal to m (the first NaN when m is NaN), or -1;
 * a block's test is one vector loop, the scan only runs in the block
 * that has it. */
static int64_t first_equal(const float *x, int64_t n, float m) {
  bool nan = m != m;
  for (int64_t i = 0; i < n; i += 64) {
    int64_t k = n - i < 64 ? n - i : 64;
    int any = 0;
    if (nan)
      for (int64_t j = 0; j < k; j++) any |= x[i + j] != x[i + j];
    else
      for (int64_t j = 0; j < k; j++) any |= x[i + j] == m;
    if (any)
      for (int64_t j = 0; j < k; j++)
        if (nan ? x[i + j] != x[i + j] : x[i + j] == m) return i + j;
  }
  return -1;
}

static bool arg_fast_run(arg_state *st, const char *p, int64_t n, int64_t idx0, int fast,
                         bool is_max) {
  cm_dtype dt = (cm_dtype)fast;
  cm_red_fn ext = cm_reduce_contig(is_max ? CM_REDUCE_MAX : CM_REDUCE_MIN, CM_FLOAT32);
  cm_convert_row_fn widen = dt == CM_FLOAT32 ? NULL : cm_cpu_convert_row(dt, CM_FLOAT32);
  if (!ext || (dt != CM_FLOAT32 && !widen)) return false;
  float buf[1024];
  size_t isz = cm_dtype_size(dt);
  /* piece by piece (halves widened into buf), each merged into the state
   * with the walk's rule: a piece's extreme replaces the best only when
   * strictly better, so an equal one keeps the earlier index */
  for (int64_t c = 0; c < n; c += 1024) {
    int64_t k = n - c < 1024 ? n - c : 1024;
    const float *x = (const float *)(p + c * (int64_t)isz);
    if (widen) widen(buf, 1, p + c * (int64_t)isz, 1, k), x = buf;
    float m;
    ext(&m, x, k);
    bool better = st->idx < 0 || (is_max ? GT_FLT(m, st->v.f) : LT_FLT(m, st->v.f));
    if (!better) continue;
    int64_t i = first_equal(x, k, m);
    if (i < 0) return false; /* cannot happen: m is one of them */
    st->v.f = x[i]; /* the element itself: -0 or +0 as the walk keeps it */
    st->idx = idx0 + c + i;
  }
  return true;
}

typedef struct arg_k { arg_run_fn run; arg_col_fn col; arg_better_fn better; } arg_k;
#define AK(NAME) {run_##NAME, col_##NAME, better_##NAME}
#define AK_ROW(OP)                                                                      \
  {[CM_BOOL] = AK(OP##_b8),     [CM_UINT8] = AK(OP##_u8),     [CM_UINT16] = AK(OP##_u16), \
   [CM_UINT32] = AK(OP##_u32),  [CM_UINT64] = AK(OP##_u64),   [CM_INT8] = AK(OP##_i8),    \
   [CM_INT16] = AK(OP##_i16),   [CM_INT32] = AK(OP##_i32),    [CM_INT64] = AK(OP##_i64),  \
   [CM_FLOAT16] = AK(OP##_f16), [CM_FLOAT32] = AK(OP##_f32),  [CM_FLOAT64] = AK(OP##_f64), \
   [CM_BFLOAT16] = AK(OP##_bf16), [CM_COMPLEX64] = AK(OP##_c64)}
/* The rows of the ArgReduce ops: the op's name for messages (class ARG of
 * ops/reduce_ops.h) and its kernels (accumulators ARG of
 * backend/cpu/reduce_table.h, which checks that they are the same rows). */
#define ARG_NAME_ARG(CODE, op) [CM_REDUCE_##CODE].name = #op,
#define ARG_NAME_WIDE(CODE, op)
#define ARG_NAME_SAME(CODE, op)
#define ARG_NAME_LOGIC(CODE, op)
#define ARG_ENTRY_ARG(CODE, kern) [CM_REDUCE_##CODE].k = AK_ROW(kern),
#define ARG_ENTRY_WIDE(CODE, kern)
#define ARG_ENTRY_SAME(CODE, kern)
#define ARG_ENTRY_LOGIC(CODE, kern)
static const struct {
  const char *name;
  arg_k k[CM_NUM_DTYPES];
} arg_kernels[CM_REDUCE_NUM_OPS] = {
#define CM_X(CODE, name, Name, class, ...) ARG_NAME_##class(CODE, name)
    CM_REDUCE_OPS(CM_X)
#undef CM_X
#define CM_X(CODE, acc, kern) ARG_ENTRY_##acc(CODE, kern)
    CM_CPU_REDUCE_OPS(CM_X)
#undef CM_X
};

/* Merge the state of a later stretch into an earlier one. */
static void arg_merge(const arg_k *k, arg_state *a, const arg_state *b) {
  if (b->idx < 0) return;
  if (a->idx < 0 || k->better(b, a)) *a = *b;
}

typedef struct arg_job {
  const arg_k *k;
  const cm_reduce_plan *P;
  const char *src;
  size_t isz;
  int64_t blk;      /* elements per block */
  int64_t nb;       /* blocks per output */
  arg_state *part;  /* nout * nb states when nb > 1 */
  uint32_t *dst;
} arg_job;

/* Walk reduced elements [pos, pos + n) of the output whose first element
 * is at base. */
static void arg_walk(const arg_job *j, arg_state *st, const char *base, int64_t pos, int64_t n) {
  const cm_reduce_plan *P = j->P;
  if (P->nr == 0) { /* a single element */
    j->k->run(st, base, 1, n, pos);
    return;
  }
  int last = P->nr - 1;
  int64_t len = P->rshape[last], stride = P->rstride[last];
  cm_axes_cursor c;
  cm_axes_cursor_seek(&c, last, P->rshape, P->rstride, pos / len);
  int64_t jn = pos % len;
  while (n > 0) {
    int64_t m = len - jn < n ? len - jn : n;
    j->k->run(st, base + (c.offset + jn * stride) * (int64_t)j->isz, stride, m, pos);
    pos += m;
    n -= m;
    jn = 0;
    cm_axes_cursor_next(&c);
  }
}

static void arg_items(void *ctx, int64_t b, int64_t e) {
  arg_job *j = ctx;
  const cm_reduce_plan *P = j->P;
  cm_axes_cursor oc;
  int64_t o = b / j->nb;
  cm_axes_cursor_seek(&oc, P->nk, P->kshape, P->kstride, o);
  for (int64_t it = b; it < e; it++) {
    int64_t blk = it % j->nb;
    if (it > b && blk == 0) cm_axes_cursor_next(&oc), o++;
    int64_t pos = blk * j->blk, n = P->nred - pos < j->blk ? P->nred - pos : j->blk;
    arg_state st = {.idx = -1};
    arg_walk(j, &st, j->src + oc.offset * (int64_t)j->isz, pos, n);
    if (j->part) j->part[it] = st;
    else j->dst[o] = (uint32_t)st.idx;
  }
}

static void arg_finish(void *ctx, int64_t b, int64_t e) {
  arg_job *j = ctx;
  for (int64_t o = b; o < e; o++) {
    arg_state *p = j->part + o * j->nb;
    for (int64_t i = 1; i < j->nb; i++) arg_merge(j->k, p, p + i);
    j->dst[o] = (uint32_t)p->idx;
  }
}

/* Columns: the innermost kept axis is contiguous. */
typedef struct arg_col_job {
  const arg_k *k;
  const cm_reduce_plan *P;
  const char *src;
  size_t isz;
  int64_t n, nc;
  uint32_t *dst;
} arg_col_job;

static void arg_col_items(void *ctx, int64_t b, int64_t e) {
  arg_col_job *j = ctx;
  const cm_reduce_plan *P = j->P;
  arg_state acc[ACB];
  for (int64_t it = b; it < e; it++) {
    int64_t o2 = it / j->nc, c = it % j->nc;
    int64_t cw = j->n - c * ACB < ACB ? j->n - c * ACB : ACB;
    cm_axes_cursor oc, rc;
    cm_axes_cursor_seek(&oc, P->nk - 1, P->kshape, P->kstride, o2);
    cm_axes_cursor_seek(&rc, P->nr, P->rshape, P->rstride, 0);
    const char *base = j->src + (oc.offset + c * ACB) * (int64_t)j->isz;
    for (int64_t i = 0; i < cw; i++) acc[i].idx = -1;
    for (int64_t r = 0; r < P->nred; r++, cm_axes_cursor_next(&rc))
      j->k->col(acc, base + rc.offset * (int64_t)j->isz, cw, r);
    for (int64_t i = 0; i < cw; i++) j->dst[o2 * j->n + c * ACB + i] = (uint32_t)acc[i].idx;
  }
}

int cm_cpu_arg_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  if ((unsigned)rp->op >= CM_REDUCE_NUM_OPS || !arg_kernels[rp->op].name)
    return cm_error(CM_ERR_RUNTIME, "[ArgReduce] Invalid reduction op %d.", (int)rp->op);
  const char *name = arg_kernels[rp->op].name;
  const arg_k *k = &arg_kernels[rp->op].k[x->dtype];
  if (cm_alloc_output(out)) return -1;
  cm_reduce_plan P;
  cm_reduce_plan_init(&P, x, rp->axes);
  if (P.nout == 0) return 0;
  if (P.nred == 0)
    return cm_error(CM_ERR_VALUE, "[%s] Cannot %s reduce zero size array.", name, name);
  size_t isz = cm_itemsize(x);
  if (P.nr >= 1 && P.nk >= 1 && P.kstride[P.nk - 1] == 1 && P.kshape[P.nk - 1] >= 16 &&
      P.rstride[P.nr - 1] != 1) {
    arg_col_job j = {k, &P, cm_data(x), isz, P.kshape[P.nk - 1], 0, cm_data(out)};
    j.nc = (j.n + ACB - 1) / ACB;
    int64_t items = P.nout / j.n * j.nc;
    cm_parallel_for(items, cm_grain(P.nred * (j.n < ACB ? j.n : ACB) * 2), arg_col_items, &j);
    return 0;
  }
  /* complex's rule does not merge blocks: one block per row */
  int64_t blk = x->dtype == CM_COMPLEX64 ? (P.nred > 0 ? P.nred : 1) : ABLK;
  arg_job j = {k, &P, cm_data(x), isz, blk, (P.nred + blk - 1) / blk, NULL, cm_data(out)};
  int64_t items = P.nout * j.nb;
  if (j.nb > 1) {
    j.part = malloc((size_t)items * sizeof *j.part);
    if (!j.part) return cm_error(CM_ERR_MEMORY, "[ArgReduce] Out of memory.");
  }
  cm_parallel_for(items, cm_grain((j.nb > 1 ? ABLK : P.nred) * 2), arg_items, &j);
  if (j.part) {
    cm_parallel_for(P.nout, cm_grain(j.nb * 2), arg_finish, &j);
    free(j.part);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Median                                                              */

/* Quickselect on a gathered buffer: after select(a, n, k), a[k] holds the
 * k-th smallest and everything after it is >= a[k].  Median-of-three
 * pivots keep sorted inputs fast. */
#define DEF_SELECT(SFX, CT, LESS)                                                         \
  static void select_##SFX(CT *a, int64_t n, int64_t k) {                                 \
    int64_t lo = 0, hi = n - 1;                                                           \
    while (hi > lo) {                                                                     \
      int64_t mid = lo + (hi - lo) / 2;                                                   \
      if (LESS(a[mid], a[lo])) { CT t = a[mid]; a[mid] = a[lo]; a[lo] = t; }              \
      if (LESS(a[hi], a[lo])) { CT t = a[hi]; a[hi] = a[lo]; a[lo] = t; }                 \
      if (LESS(a[hi], a[mid])) { CT t = a[hi]; a[hi] = a[mid]; a[mid] = t; }              \
      CT pv = a[mid];                                                                     \
      int64_t i = lo, j = hi;                                                             \
      while (i <= j) {                                                                    \
        while (LESS(a[i], pv)) i++;                                                       \
        while (LESS(pv, a[j])) j--;                                                       \
        if (i <= j) { CT t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }                     \
      }                                                                                   \
      if (k <= j) hi = j;                                                                 \
      else if (k >= i) lo = i;                                                            \
      else return;                                                                        \
    }                                                                                     \
  }                                                                                       \
  static CT min_from_##SFX(const CT *a, int64_t n) {                                      \
    CT m = a[0];                                                                          \
    for (int64_t i = 1; i < n; i++)                                                       \
      if (LESS(a[i], m)) m = a[i];                                                        \
    return m;                                                                             \
  }
#define LESS_R(x, y) ((x) < (y))
#define LESS_C(x, y) (crealf(x) < crealf(y) || (crealf(x) == crealf(y) && cimagf(x) < cimagf(y)))
DEF_SELECT(f, float, LESS_R)
DEF_SELECT(d, double, LESS_R)
DEF_SELECT(c, cm_c64_t, LESS_C)

typedef struct med_job {
  const cm_reduce_plan *P;
  const char *src;
  cm_dtype dt;
  char *dst;
  bool failed;
} med_job;

/* Round a float to the output's half type and back (so the sum of the
 * two middle values rounds as MLX's half-precision add does). */
static float round_to(cm_dtype dt, float v) {
  if (dt == CM_FLOAT16) return cm_f16_to_f32(cm_f32_to_f16(v));
  if (dt == CM_BFLOAT16) return cm_bf16_to_f32(cm_f32_to_bf16(v));
  return v;
}

static void med_items(void *ctx, int64_t b, int64_t e) {
  med_job *j = ctx;
  const cm_reduce_plan *P = j->P;
  int64_t n = P->nred, mid = (n - 1) / 2;
  size_t csz = j->dt == CM_FLOAT64 || j->dt == CM_COMPLEX64 ? 8 : 4;
  char *buf = malloc((size_t)n * csz);
  if (!buf) {
    j->failed = true;
    return;
  }
  cm_axes_cursor oc;
  cm_axes_cursor_seek(&oc, P->nk, P->kshape, P->kstride, b);
  for (int64_t o = b; o < e; o++, cm_axes_cursor_next(&oc)) {
    /* gather in compute type, noting NaNs */
    cm_axes_cursor rc;
    cm_axes_cursor_seek(&rc, P->nr, P->rshape, P->rstride, 0);
    bool nan = false;
    const char *base = j->src + oc.offset * (int64_t)cm_dtype_size(j->dt);
    for (int64_t i = 0; i < n; i++, cm_axes_cursor_next(&rc)) {
      const char *p = base + rc.offset * (int64_t)cm_dtype_size(j->dt);
      switch (j->dt) {
      case CM_FLOAT16:
        ((float *)buf)[i] = cm_f16_to_f32(*(const uint16_t *)p);
        nan |= isnan(((float *)buf)[i]);
        break;
      case CM_BFLOAT16:
        ((float *)buf)[i] = cm_bf16_to_f32(*(const uint16_t *)p);
        nan |= isnan(((float *)buf)[i]);
        break;
      case CM_FLOAT32: memcpy(buf + i * 4, p, 4); nan |= isnan(((float *)buf)[i]); break;
      case CM_FLOAT64: memcpy(buf + i * 8, p, 8); nan |= isnan(((double *)buf)[i]); break;
      default: {
        cm_c64_t c;
        memcpy(&c, p, 8);
        ((cm_c64_t *)buf)[i] = c;
        nan |= isnan(crealf(c)) || isnan(cimagf(c));
      }
      }
    }
    char *d = j->dst + o * (int64_t)cm_dtype_size(j->dt);
    if (j->dt == CM_FLOAT64) {
      double *a = (double *)buf, r = NAN;
      if (!nan) {
        select_d(a, n, mid);
        r = n % 2 ? a[mid] : (a[mid] + min_from_d(a + mid + 1, n - mid - 1)) * 0.5;
      }
      memcpy(d, &r, 8);
    } else if (j->dt == CM_COMPLEX64) {
      cm_c64_t *a = (cm_c64_t *)buf, r = cm_reduce_cplx(NAN, 0.0f);
      if (!nan) {
        select_c(a, n, mid);
        r = n % 2 ? a[mid] : (a[mid] + min_from_c(a + mid + 1, n - mid - 1)) * 0.5f;
      }
      memcpy(d, &r, 8);
    } else {
      float *a = (float *)buf, r = NAN;
      if (!nan) {
        select_f(a, n, mid);
        r = n % 2 ? a[mid] : round_to(j->dt, a[mid] + min_from_f(a + mid + 1, n - mid - 1)) * 0.5f;
      }
      if (j->dt == CM_FLOAT32) memcpy(d, &r, 4);
      else {
        uint16_t h = j->dt == CM_FLOAT16 ? cm_f32_to_f16(r) : cm_f32_to_bf16(r);
        memcpy(d, &h, 2);
      }
    }
  }
  free(buf);
}

int cm_cpu_median(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  if (!cm_dtype_is_inexact(x->dtype))
    return cm_error(CM_ERR_RUNTIME, "[Median] Expected a floating input, got %s.",
                    cm_dtype_name(x->dtype));
  if (cm_alloc_output(out)) return -1;
  cm_reduce_plan P;
  cm_reduce_plan_init(&P, x, rp->axes);
  if (P.nout == 0) return 0;
  if (P.nred == 0) return cm_error(CM_ERR_VALUE, "[median] Cannot take median along empty axis.");
  med_job j = {&P, cm_data(x), x->dtype, cm_data(out), false};
  cm_parallel_for(P.nout, cm_grain(P.nred * 8), med_items, &j);
  if (j.failed) return cm_error(CM_ERR_MEMORY, "[median] Out of memory.");
  return 0;
}
