/* Scatter, ScatterAxis, MaskedScatter and MaskedGather.  The output starts
 * as a copy of the input (or takes over its buffer); updates are then
 * combined in place by a per-(op, dtype) row function.  See scatter.h for
 * how the work is split without races. */
#include "backend/cpu/scatter.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/gather.h"
#include "backend/cpu/scatter_table.h"
#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/indexing.h"

/* ---- combining rows ---- */

/* d[i*ds] = op(d[i*ds], u[i*us]) for i < n. */
typedef void (*apply_fn)(char *d, int64_t ds, const char *u, int64_t us, int64_t n);

static void apply_copy(char *d, int64_t ds, const char *u, int64_t us, int64_t n, size_t isz) {
  for (int64_t i = 0; i < n; i++) memcpy(d + i * ds * (int64_t)isz, u + i * us * (int64_t)isz, isz);
}
#define COPY_FN(SZ)                                                                  \
  static void copy_##SZ(char *d, int64_t ds, const char *u, int64_t us, int64_t n) { \
    if (ds == 1 && us == 1) memcpy(d, u, (size_t)n * SZ);                             \
    else apply_copy(d, ds, u, us, n, SZ);                                             \
  }
COPY_FN(1)
COPY_FN(2)
COPY_FN(4)
COPY_FN(8)

/* Combiners on loaded values.  Signed integers wrap (through unsigned
 * arithmetic, as C leaves signed overflow undefined); max/min keep the
 * current value only when it compares strictly better, so a NaN on either
 * side wins (MLX's rule); complex numbers compare by real part, then
 * imaginary part. */
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define MAXV(a, b) ((a) > (b) ? (a) : (b))
#define MINV(a, b) ((a) < (b) ? (a) : (b))
#define OR(a, b) ((a) || (b))
#define AND(a, b) ((a) && (b))

static inline int32_t wadd_i32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static inline int32_t wmul_i32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a * (uint32_t)b);
}
static inline int64_t wadd_i64(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t wmul_i64(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}
static inline bool c_gt(cm_c64_t a, cm_c64_t b) {
  return crealf(a) > crealf(b) || (crealf(a) == crealf(b) && cimagf(a) > cimagf(b));
}
static inline cm_c64_t cmax(cm_c64_t a, cm_c64_t b) { return c_gt(a, b) ? a : b; }
static inline cm_c64_t cmin(cm_c64_t a, cm_c64_t b) { return c_gt(b, a) ? a : b; }

#define ID(x) (x)
#define DEF_APPLY(NAME, T, LOAD, STORE, COMBINE)                                        \
  static void NAME(char *d_, int64_t ds, const char *u_, int64_t us, int64_t n) {       \
    T *d = (T *)d_;                                                                     \
    const T *u = (const T *)u_;                                                         \
    for (int64_t i = 0; i < n; i++) d[i * ds] = STORE(COMBINE(LOAD(d[i * ds]), LOAD(u[i * us]))); \
  }

/* Single-element windows: d[b[i]] = op(d[b[i]], u[uo[i]]) for the i
 * whose destination b[i] lies in [lo, hi) (dropped ones never do); uo
 * NULL means update i sits at i * us. */
typedef void (*point_fn)(char *d, const char *u, const int64_t *b, const int64_t *uo, int64_t us,
                         int64_t n, int64_t lo, int64_t hi);
#define DEF_POINT(NAME, T, LOAD, STORE, COMBINE)                                             \
  static void NAME(char *d_, const char *u_, const int64_t *b, const int64_t *uo, int64_t us, \
                   int64_t n, int64_t lo, int64_t hi) {                                      \
    T *d = (T *)d_;                                                                          \
    const T *u = (const T *)u_;                                                              \
    for (int64_t i = 0; i < n; i++) {                                                        \
      int64_t o = b[i];                                                                      \
      if (o >= lo && o < hi) d[o] = STORE(COMBINE(LOAD(d[o]), LOAD(u[uo ? uo[i] : i * us]))); \
    }                                                                                        \
  }
#define KEEP_NEW(a, b) (b)
DEF_POINT(set_p1, uint8_t, ID, ID, KEEP_NEW)
DEF_POINT(set_p2, uint16_t, ID, ID, KEEP_NEW)
DEF_POINT(set_p4, uint32_t, ID, ID, KEEP_NEW)
DEF_POINT(set_p8, uint64_t, ID, ID, KEEP_NEW)

/* The four reductions of one type, as rows and as points. */
#define DEF_FOUR(SUF, T, LOAD, STORE, ADDF, MULF, MAXF, MINF) \
  DEF_APPLY(sum_##SUF, T, LOAD, STORE, ADDF)                  \
  DEF_APPLY(prod_##SUF, T, LOAD, STORE, MULF)                 \
  DEF_APPLY(max_##SUF, T, LOAD, STORE, MAXF)                  \
  DEF_APPLY(min_##SUF, T, LOAD, STORE, MINF)                  \
  DEF_POINT(sum_p_##SUF, T, LOAD, STORE, ADDF)                \
  DEF_POINT(prod_p_##SUF, T, LOAD, STORE, MULF)               \
  DEF_POINT(max_p_##SUF, T, LOAD, STORE, MAXF)                \
  DEF_POINT(min_p_##SUF, T, LOAD, STORE, MINF)

#define F16_STORE(v) cm_f32_to_f16(v)
#define BF16_STORE(v) cm_f32_to_bf16(v)
DEF_FOUR(b8, bool, ID, ID, OR, AND, OR, AND)
DEF_FOUR(u8, uint8_t, ID, (uint8_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(u16, uint16_t, (uint32_t), (uint16_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(u32, uint32_t, ID, (uint32_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(u64, uint64_t, ID, (uint64_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(i8, int8_t, (int32_t), (int8_t)(uint8_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(i16, int16_t, (int32_t), (int16_t)(uint16_t), ADD, MUL, MAXV, MINV)
DEF_FOUR(i32, int32_t, ID, ID, wadd_i32, wmul_i32, MAXV, MINV)
DEF_FOUR(i64, int64_t, ID, ID, wadd_i64, wmul_i64, MAXV, MINV)
DEF_FOUR(f16, cm_f16_t, cm_f16_to_f32, F16_STORE, ADD, MUL, MAXV, MINV)
DEF_FOUR(bf16, cm_bf16_t, cm_bf16_to_f32, BF16_STORE, ADD, MUL, MAXV, MINV)
DEF_FOUR(f32, float, ID, ID, ADD, MUL, MAXV, MINV)
DEF_FOUR(f64, double, ID, ID, ADD, MUL, MAXV, MINV)
DEF_FOUR(c64, cm_c64_t, ID, ID, ADD, MUL, cmax, cmin)

/* The rows and points of the combining modes (the ROWS rows of
 * backend/cpu/scatter_table.h), by [op][dtype]; NONE copies by element
 * size instead. */
#define BY_DTYPE(P)                                                                         \
  {[CM_BOOL] = P##_b8,     [CM_UINT8] = P##_u8,      [CM_UINT16] = P##_u16,                 \
   [CM_UINT32] = P##_u32,  [CM_UINT64] = P##_u64,    [CM_INT8] = P##_i8,                    \
   [CM_INT16] = P##_i16,   [CM_INT32] = P##_i32,     [CM_INT64] = P##_i64,                  \
   [CM_FLOAT16] = P##_f16, [CM_BFLOAT16] = P##_bf16, [CM_FLOAT32] = P##_f32,                \
   [CM_FLOAT64] = P##_f64, [CM_COMPLEX64] = P##_c64}
static const apply_fn apply_table[CM_SCATTER_NUM_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, apply, kern) \
  CM_CPU_SCATTER_IF_ROWS_##apply([CM_SCATTER_##CODE] = BY_DTYPE(kern), )
    CM_CPU_SCATTER_OPS(CM_X)
#undef CM_X
};
static const point_fn point_table[CM_SCATTER_NUM_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, apply, kern) \
  CM_CPU_SCATTER_IF_ROWS_##apply([CM_SCATTER_##CODE] = BY_DTYPE(kern##_p), )
    CM_CPU_SCATTER_OPS(CM_X)
#undef CM_X
};

/* Row function for an op and dtype. */
static apply_fn apply_for(cm_scatter_op op, cm_dtype t) {
  if (op == CM_SCATTER_NONE) {
    switch (cm_dtype_size(t)) {
    case 1: return copy_1;
    case 2: return copy_2;
    case 4: return copy_4;
    default: return copy_8;
    }
  }
  return apply_table[op][t];
}

static point_fn point_for(cm_scatter_op op, cm_dtype t) {
  if (op == CM_SCATTER_NONE) {
    switch (cm_dtype_size(t)) {
    case 1: return set_p1;
    case 2: return set_p2;
    case 4: return set_p4;
    default: return set_p8;
    }
  }
  return point_table[op][t];
}

/* ---- the output ---- */

/* out = a: take a's buffer when nothing else holds it and its strides are
 * positive (destinations are then offsets in [0, size)), else copy. */
static int prepare_output(cm_array *out, cm_array *a) {
  bool positive = true;
  for (int d = 0; d < a->ndim; d++) positive &= a->shape[d] <= 1 || a->strides[d] > 0;
  if (positive && cm_try_donate(out, a)) return 0;
  if (cm_alloc_output(out)) return -1;
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(a), a->dtype, a->strides,
                      a->ndim, a->shape);
  return 0;
}

/* ---- Scatter ---- */

typedef struct scatter_job {
  cm_index_set idx; /* target: out; extra: the updates' leading axes */
  char *dst;
  const char *upd;
  int64_t isz;
  int64_t S;   /* elements per window */
  cm_layout L; /* the window: op 0 = out, op 1 = updates' trailing axes */
  apply_fn fn;
  point_fn point; /* set when windows are single elements */
  int64_t span;   /* largest window offset + 1 (out strides are positive) */
  int64_t *base, *uoff; /* per position, for the destination split */
  bool flat_index;      /* one row-contiguous index array ... */
  int64_t ustep;        /* ... and the updates' offset per position */
  int64_t nparts, total;
} scatter_job;

/* Apply window elements [e0, e1) (row-major in the window) of one
 * position whose target offset is base and updates offset uo. */
static void apply_window(const scatter_job *g, int64_t base, int64_t uo, int64_t e0, int64_t e1) {
  int64_t len = cm_layout_row_len(&g->L);
  int64_t ds = cm_layout_row_stride(&g->L, 0), us = cm_layout_row_stride(&g->L, 1);
  cm_row_cursor rc;
  int64_t row = e0 / len, col = e0 % len;
  cm_row_cursor_seek(&rc, &g->L, row);
  for (int64_t e = e0; e < e1; row++, col = 0, cm_row_cursor_next(&rc)) {
    int64_t n = len - col < e1 - e ? len - col : e1 - e;
    g->fn(g->dst + (base + rc.offset[0] + col * ds) * g->isz, ds,
          g->upd + (uo + rc.offset[1] + col * us) * g->isz, us, n);
    e += n;
  }
}

/* Every position, window elements [e0, e1): a split by window element. */
static void scatter_by_element(void *ctx, int64_t e0, int64_t e1) {
  scatter_job *g = ctx;
  cm_index_cursor c;
  cm_index_cursor_seek(&c, &g->idx, 0);
  for (int64_t p = 0; p < g->idx.count; p++, cm_index_cursor_next(&c)) {
    int64_t base;
    if (cm_index_offset(&g->idx, &c, false, &base)) apply_window(g, base, c.extra_off, e0, e1);
  }
}

/* Phase 1 of the destination split: every position's offsets (the
 * output's strides are positive here, but say "dropped" unambiguously). */
#define DROPPED INT64_MIN
static void scatter_offsets(void *ctx, int64_t p0, int64_t p1) {
  scatter_job *g = ctx;
  cm_index_set *s = &g->idx;
  if (g->flat_index) { /* one row-contiguous index array */
    int64_t dim = s->dim[0], last = dim - s->win[0], st = s->stride[0], isz = s->isz[0];
    for (int64_t p = p0; p < p1; p++) {
      int64_t raw = cm_cpu_load_index(s->data[0] + p * isz, s->dtype[0]);
      int64_t v = raw < 0 ? raw + dim : raw;
      if (v < 0 || v > last) {
        if (s->checked) cm_index_fault_note(&s->fault, raw, s->axis[0], dim);
        g->base[p] = DROPPED;
      } else {
        g->base[p] = v * st;
      }
    }
    return;
  }
  cm_index_cursor c;
  cm_index_cursor_seek(&c, &g->idx, p0);
  for (int64_t p = p0; p < p1; p++, cm_index_cursor_next(&c)) {
    if (!cm_index_offset(&g->idx, &c, false, &g->base[p])) g->base[p] = DROPPED;
    g->uoff[p] = c.extra_off;
  }
}

/* Phase 2: part k owns destinations [lo, hi) and applies, in position
 * order, the window elements that land there. */
static void scatter_by_destination(void *ctx, int64_t k0, int64_t k1) {
  scatter_job *g = ctx;
  int64_t len = cm_layout_row_len(&g->L), rows = cm_layout_rows(&g->L);
  int64_t ds = cm_layout_row_stride(&g->L, 0), us = cm_layout_row_stride(&g->L, 1);
  for (int64_t k = k0; k < k1; k++) {
    int64_t lo = g->total * k / g->nparts, hi = g->total * (k + 1) / g->nparts;
    if (g->point) { /* one element per position */
      g->point(g->dst, g->upd, g->base, g->uoff, g->ustep, g->idx.count, lo, hi);
      continue;
    }
    for (int64_t p = 0; p < g->idx.count; p++) {
      int64_t b = g->base[p];
      if (b == DROPPED || b >= hi || b + g->span <= lo) continue;
      cm_row_cursor rc;
      cm_row_cursor_seek(&rc, &g->L, 0);
      for (int64_t r = 0; r < rows; r++, cm_row_cursor_next(&rc)) {
        int64_t d0 = b + rc.offset[0];
        int64_t i0 = d0 >= lo ? 0 : (lo - d0 + ds - 1) / ds;
        int64_t i1 = d0 >= hi ? 0 : (hi - d0 + ds - 1) / ds;
        if (i1 > len) i1 = len;
        if (i0 < i1)
          g->fn(g->dst + (d0 + i0 * ds) * g->isz, ds,
                g->upd + ((g->uoff ? g->uoff[p] : p * g->ustep) + rc.offset[1] + i0 * us) * g->isz,
                us, i1 - i0);
      }
    }
  }
}

int cm_cpu_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_scatter_params *sp = cm_scatter_params_of(out);
  cm_array *a = in[0], *upd = in[nin - 1];
  if (prepare_output(out, a)) return -1;
  if (upd->size == 0 || out->size == 0) return 0;
  const int32_t *win = cm_scatter_window(in, nin);
  int lead = upd->ndim - a->ndim; /* the updates' index-shaped axes */
  scatter_job *g = calloc(1, sizeof *g);
  if (!g) return cm_error(CM_ERR_MEMORY, "[scatter] Out of memory.");
  /* (no index arrays: one position, and the updates are the window) */
  cm_index_set_init(&g->idx, in + 1, nin - 2, sp->axes, out->shape, out->strides, win);
  g->idx.extra_strides = upd->strides;
  g->dst = cm_data(out);
  g->upd = cm_data(upd);
  g->isz = (int64_t)cm_itemsize(out);
  g->fn = apply_for((cm_scatter_op)sp->op, out->dtype);
  g->S = cm_shape_size(a->ndim, win);
  const int64_t *st[2] = {out->strides, upd->strides + lead};
  cm_layout_init(&g->L, a->ndim, win, 2, st);
  g->span = 1;
  for (int d = 0; d < a->ndim; d++) g->span += (int64_t)(win[d] - 1) * out->strides[d];
  int64_t P = g->idx.count, work = P * g->S;
  bool overlap = false; /* may two windows share an element at different window places? */
  for (int j = 0; j < g->idx.n; j++) overlap |= win[g->idx.axis[j]] > 1;
  int threads = cm_num_threads();
  int rc = 0;
  if (work < (1 << 15)) {
    scatter_by_element(g, 0, g->S);
  } else if (!overlap && g->S >= 1024) {
    cm_parallel_for(g->S, g->S / threads + 1, scatter_by_element, g);
  } else {
    bool lead_zero = true;
    for (int d = 0; d < lead; d++) lead_zero &= upd->strides[d] == 0 || upd->shape[d] == 1;
    g->flat_index =
        g->idx.n == 1 && cm_row_contiguous(in[1]) && (lead_zero || cm_row_contiguous(upd));
    g->ustep = lead_zero ? 0 : g->S;
    /* from the allocator's cache: repeated scatters do not fault pages in */
    cm_buffer *bb = cm_buffer_alloc(sizeof(int64_t) * (size_t)P);
    cm_buffer *ub = g->flat_index ? NULL : cm_buffer_alloc(sizeof(int64_t) * (size_t)P);
    g->base = bb ? bb->ptr : NULL;
    g->uoff = ub ? ub->ptr : NULL;
    if (!bb || (!g->flat_index && !ub)) {
      rc = -1;
    } else {
      cm_parallel_for(P, cm_grain(4 * (g->idx.n + 1)), scatter_offsets, g);
      g->nparts = threads;
      g->total = out->data_size;
      if (g->S == 1) g->point = point_for((cm_scatter_op)sp->op, out->dtype);
      cm_parallel_for(g->nparts, 1, scatter_by_destination, g);
    }
    if (bb) cm_buffer_release(bb);
    if (ub) cm_buffer_release(ub);
  }
  if (!rc) rc = cm_index_fault_raise(&g->idx.fault, "scatter");
  free(g);
  return rc;
}

/* ---- ScatterAxis ---- */

typedef struct scatter_axis_job {
  cm_layout L; /* idx's shape with the axis moved last; ops: upd, idx, out */
  const char *upd, *idx;
  char *dst;
  cm_dtype itype;
  int64_t isz, iisz, ax_stride, dim;
  int axis;
  apply_fn fn;
  bool checked;
  cm_index_fault fault;
} scatter_axis_job;

/* Rows are whole fibres along the axis (or single elements when the axis
 * has length 1), so rows never share a destination. */
static void scatter_axis_range(void *ctx, int64_t begin, int64_t end) {
  scatter_axis_job *g = ctx;
  cm_row_cursor rc;
  cm_row_cursor_seek(&rc, &g->L, begin);
  int64_t len = cm_layout_row_len(&g->L);
  int64_t us = cm_layout_row_stride(&g->L, 0), is = cm_layout_row_stride(&g->L, 1),
          os = cm_layout_row_stride(&g->L, 2);
  for (int64_t r = begin; r < end; r++, cm_row_cursor_next(&rc)) {
    const char *u = g->upd + rc.offset[0] * g->isz;
    const char *ip = g->idx + rc.offset[1] * g->iisz;
    char *d = g->dst + rc.offset[2] * g->isz;
    for (int64_t i = 0; i < len; i++) {
      int64_t raw = cm_cpu_load_index(ip + i * is * g->iisz, g->itype);
      int64_t v = raw < 0 ? raw + g->dim : raw;
      if (v < 0 || v >= g->dim) {
        if (g->checked) cm_index_fault_note(&g->fault, raw, g->axis, g->dim);
        continue; /* dropped */
      }
      g->fn(d + (i * os + v * g->ax_stride) * g->isz, 1, u + i * us * g->isz, 1, 1);
    }
  }
}

int cm_cpu_scatter_axis(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(out);
  cm_array *a = in[0], *idx = in[1], *upd = in[2];
  if (prepare_output(out, a)) return -1;
  if (idx->size == 0) return 0;
  scatter_axis_job *g = calloc(1, sizeof *g);
  if (!g) return cm_error(CM_ERR_MEMORY, "[put_along_axis] Out of memory.");
  int32_t shape[CM_MAX_DIMS];
  int64_t su[CM_MAX_DIMS], si[CM_MAX_DIMS], so[CM_MAX_DIMS];
  int n = 0, ax = ap->axis;
  for (int d = 0; d <= idx->ndim; d++) {
    int e = d < idx->ndim ? (d < ax ? d : d + 1) : ax; /* the axis goes last */
    if (e >= idx->ndim && d < idx->ndim) continue;
    shape[n] = idx->shape[e];
    su[n] = upd->strides[e];
    si[n] = idx->strides[e];
    so[n] = e == ax ? 0 : out->strides[e];
    n++;
  }
  const int64_t *st[3] = {su, si, so};
  cm_layout_init(&g->L, n, shape, 3, st);
  g->upd = cm_data(upd);
  g->idx = cm_data(idx);
  g->dst = cm_data(out);
  g->itype = idx->dtype;
  g->isz = (int64_t)cm_itemsize(out);
  g->iisz = (int64_t)cm_itemsize(idx);
  g->ax_stride = out->strides[ax];
  g->dim = out->shape[ax];
  g->axis = ax;
  g->fn = apply_for((cm_scatter_op)ap->op, out->dtype);
  g->checked = cm_cpu_check_indices();
  cm_parallel_for(cm_layout_rows(&g->L), cm_grain(6 * cm_layout_row_len(&g->L)), scatter_axis_range,
                  g);
  int rc = cm_index_fault_raise(&g->fault, "put_along_axis");
  free(g);
  return rc;
}

/* ---- MaskedScatter and MaskedGather ---- */

/* The mask walked in row-major order in chunks of rows; counts[c] is the
 * number of True entries in chunk c (filled by mask_count). */
typedef struct mask_job {
  cm_layout L; /* a's shape; ops: x (out or the gathered array), mask */
  const char *mask;
  int64_t nchunks, *start;
  char *x;
  char *flat; /* MaskedScatter: the source; MaskedGather: the output */
  int64_t flat_size, isz;
  /* the flat array's layout, read in row-major order (any strides) */
  int flat_ndim;
  const int32_t *flat_shape;
  const int64_t *flat_strides;
  bool gather;
} mask_job;

/* Element offsets of an array walked in row-major order, one step at a
 * time (a broadcast or strided source is read in place). */
typedef struct flat_cursor {
  const mask_job *m;
  int64_t pos[CM_MAX_DIMS], off;
} flat_cursor;

static void flat_seek(flat_cursor *f, const mask_job *m, int64_t j) {
  f->m = m;
  f->off = 0;
  for (int d = m->flat_ndim - 1; d >= 0; d--) {
    f->pos[d] = j % m->flat_shape[d];
    j /= m->flat_shape[d];
    f->off += f->pos[d] * m->flat_strides[d];
  }
}

static void flat_next(flat_cursor *f) {
  const mask_job *m = f->m;
  for (int d = m->flat_ndim - 1; d >= 0; d--) {
    f->off += m->flat_strides[d];
    if (++f->pos[d] < m->flat_shape[d]) return;
    f->off -= m->flat_strides[d] * m->flat_shape[d];
    f->pos[d] = 0;
  }
}

static void chunk_rows(const mask_job *m, int64_t c, int64_t *r0, int64_t *r1) {
  int64_t rows = cm_layout_rows(&m->L);
  *r0 = rows * c / m->nchunks;
  *r1 = rows * (c + 1) / m->nchunks;
}

static void mask_count(void *ctx, int64_t c0, int64_t c1) {
  mask_job *m = ctx;
  int64_t len = cm_layout_row_len(&m->L), ms = cm_layout_row_stride(&m->L, 1);
  for (int64_t c = c0; c < c1; c++) {
    int64_t r0, r1, n = 0;
    chunk_rows(m, c, &r0, &r1);
    cm_row_cursor rc;
    cm_row_cursor_seek(&rc, &m->L, r0);
    for (int64_t r = r0; r < r1; r++, cm_row_cursor_next(&rc)) {
      const bool *mk = (const bool *)m->mask + rc.offset[1];
      for (int64_t i = 0; i < len; i++) n += mk[i * ms];
    }
    m->start[c + 1] = n;
  }
}

static void mask_fill(void *ctx, int64_t c0, int64_t c1) {
  mask_job *m = ctx;
  int64_t len = cm_layout_row_len(&m->L), xs = cm_layout_row_stride(&m->L, 0),
          ms = cm_layout_row_stride(&m->L, 1);
  for (int64_t c = c0; c < c1; c++) {
    int64_t r0, r1, j = m->start[c];
    if (j >= m->flat_size) continue;
    chunk_rows(m, c, &r0, &r1);
    cm_row_cursor rc;
    cm_row_cursor_seek(&rc, &m->L, r0);
    flat_cursor f;
    flat_seek(&f, m, j);
    for (int64_t r = r0; r < r1; r++, cm_row_cursor_next(&rc)) {
      const bool *mk = (const bool *)m->mask + rc.offset[1];
      char *x = m->x + rc.offset[0] * m->isz;
      for (int64_t i = 0; i < len && j < m->flat_size; i++) {
        if (!mk[i * ms]) continue;
        char *xe = x + i * xs * m->isz, *fe = m->flat + f.off * m->isz;
        if (m->gather) memcpy(fe, xe, (size_t)m->isz);
        else memcpy(xe, fe, (size_t)m->isz);
        j++;
        flat_next(&f);
      }
    }
  }
}

/* Count (phase 1), then fill (phase 2) with each chunk's first flat index
 * known.  The walked array (m->x) and the mask share shape; xs and ms are
 * their strides.  Returns the number of True entries, or -1. */
static int64_t mask_run(mask_job *m, int nd, const int32_t *shape, const int64_t *xs,
                        const int64_t *ms, const char *mask, int64_t check_size) {
  const int64_t *st[2] = {xs, ms};
  cm_layout_init(&m->L, nd, shape, 2, st);
  int64_t rows = cm_layout_rows(&m->L), work = rows * cm_layout_row_len(&m->L);
  m->nchunks = work < (1 << 16) ? 1 : 4 * (int64_t)cm_num_threads();
  if (m->nchunks > rows) m->nchunks = rows ? rows : 1;
  m->start = calloc((size_t)m->nchunks + 1, sizeof(int64_t));
  if (!m->start) return cm_error(CM_ERR_MEMORY, "[masked_scatter] Out of memory.");
  m->mask = mask;
  cm_parallel_for(m->nchunks, 1, mask_count, m);
  for (int64_t c = 0; c < m->nchunks; c++) m->start[c + 1] += m->start[c];
  int64_t total = m->start[m->nchunks];
  if (check_size >= 0 && total > check_size) {
    free(m->start);
    return cm_error(CM_ERR_VALUE,
                    "[masked_scatter] Source does not have enough elements for mask (the masked "
                    "positions need %lld, the source has %lld).",
                    (long long)total, (long long)check_size);
  }
  cm_parallel_for(m->nchunks, 1, mask_fill, m);
  free(m->start);
  return total;
}

/* One masked scatter or gather per entry of the leading batch axis (one
 * in all without it): x is walked with the mask, flat is the source or
 * the output, read or written from its start for each entry. */
static int mask_batches(cm_array *x, cm_array *mask, cm_array *flat, const cm_masked_params *mp,
                        bool gather) {
  int b0 = mp->batch ? 1 : 0;
  int64_t nb = b0 ? x->shape[0] : 1, isz = (int64_t)cm_itemsize(flat);
  /* an empty source still has to cover every True entry (an error) */
  if (x->size == 0 || (gather && flat->size == 0)) return 0;
  for (int64_t b = 0; b < nb; b++) {
    mask_job m = {.isz = isz, .gather = gather, .flat_size = flat->size / nb,
                  .flat_ndim = flat->ndim - b0, .flat_shape = flat->shape + b0,
                  .flat_strides = flat->strides + b0};
    m.x = (char *)cm_data(x) + (b0 ? b * x->strides[0] * isz : 0);
    m.flat = (char *)cm_data(flat) + (b0 ? b * flat->strides[0] * isz : 0);
    const char *mk = (const char *)cm_data(mask) + (b0 ? b * mask->strides[0] : 0);
    int64_t r = mask_run(&m, x->ndim - b0, x->shape + b0, x->strides + b0, mask->strides + b0,
                         mk, gather ? -1 : m.flat_size);
    if (r < 0) return -1;
  }
  return 0;
}

int cm_cpu_masked_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (prepare_output(out, in[0])) return -1;
  return mask_batches(out, in[1], in[2], cm_masked_params_of(out), false);
}

int cm_cpu_masked_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (cm_alloc_output(out)) return -1;
  if (out->size) memset(cm_data(out), 0, cm_nbytes(out)); /* all-zero bits: 0 in every dtype */
  return mask_batches(in[0], in[1], out, cm_masked_params_of(out), true);
}
