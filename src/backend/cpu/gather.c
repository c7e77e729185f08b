/* Gather and GatherAxis, and the index machinery shared with the scatter
 * kernels.  Gathers only move bytes, so one loop per item size serves
 * every dtype.  Large gathers split over the thread pool by index
 * position (each position writes its own slice of the output: no races). */
#include "backend/cpu/gather.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/strided.h"
#include "core/threadpool.h"
#include "primitives/indexing.h"

/* ---- checked mode and faults ---- */

bool cm_cpu_check_indices(void) {
  static atomic_int cached = -1;
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("CMLX_CHECK_INDICES");
    v = e && *e && strcmp(e, "0") != 0;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  return v;
}

void cm_index_fault_note(cm_index_fault *f, int64_t value, int axis, int64_t dim) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&f->hit, &expected, 1)) {
    f->value = value;
    f->axis = axis;
    f->dim = dim;
  }
}

int cm_index_fault_raise(cm_index_fault *f, const char *op) {
  if (!atomic_load(&f->hit)) return 0;
  return cm_error(CM_ERR_INDEX, "[%s] Index %lld is out of bounds for axis %d with size %lld.", op,
                  (long long)f->value, f->axis, (long long)f->dim);
}

/* ---- index sets and cursors ---- */

void cm_index_set_init(cm_index_set *s, cm_array *const *idx, int n, const uint8_t *axes,
                       const int32_t *tshape, const int64_t *tstrides, const int32_t *win) {
  memset(s, 0, sizeof *s);
  s->n = n;
  s->ndim = n ? idx[0]->ndim : 0;
  s->shape = n ? idx[0]->shape : NULL;
  s->count = n ? idx[0]->size : 1;
  for (int j = 0; j < n; j++) {
    int ax = axes[j];
    s->data[j] = cm_data(idx[j]);
    s->strides[j] = idx[j]->strides;
    s->dtype[j] = idx[j]->dtype;
    s->isz[j] = (int64_t)cm_itemsize(idx[j]);
    s->axis[j] = ax;
    s->dim[j] = tshape[ax];
    s->win[j] = win[ax];
    s->stride[j] = tstrides[ax];
  }
  s->checked = cm_cpu_check_indices();
}

void cm_index_cursor_seek(cm_index_cursor *c, const cm_index_set *s, int64_t p) {
  c->s = s;
  c->extra_off = 0;
  for (int j = 0; j < s->n; j++) c->off[j] = 0;
  for (int d = s->ndim - 1; d >= 0; d--) {
    int64_t i = s->shape[d] ? p % s->shape[d] : 0;
    p = s->shape[d] ? p / s->shape[d] : 0;
    c->pos[d] = i;
    for (int j = 0; j < s->n; j++) c->off[j] += i * s->strides[j][d];
    if (s->extra_strides) c->extra_off += i * s->extra_strides[d];
  }
}

void cm_index_cursor_next(cm_index_cursor *c) {
  const cm_index_set *s = c->s;
  const int64_t *x = s->extra_strides;
  for (int d = s->ndim - 1; d >= 0; d--) {
    for (int j = 0; j < s->n; j++) c->off[j] += s->strides[j][d];
    if (x) c->extra_off += x[d];
    if (++c->pos[d] < s->shape[d]) return;
    for (int j = 0; j < s->n; j++) c->off[j] -= s->strides[j][d] * s->shape[d];
    if (x) c->extra_off -= x[d] * s->shape[d];
    c->pos[d] = 0;
  }
}

bool cm_index_offset(cm_index_set *s, const cm_index_cursor *c, bool clamp, int64_t *out) {
  int64_t off = 0;
  for (int j = 0; j < s->n; j++) {
    int64_t raw = cm_cpu_load_index(s->data[j] + c->off[j] * s->isz[j], s->dtype[j]);
    int64_t v = raw < 0 ? raw + s->dim[j] : raw, last = s->dim[j] - s->win[j];
    if (v < 0 || v > last) {
      if (s->checked) {
        cm_index_fault_note(&s->fault, raw, s->axis[j], s->dim[j]);
        return false;
      }
      if (!clamp || last < 0) return false;
      v = v < 0 ? 0 : last;
    }
    off += v * s->stride[j];
  }
  *out = off;
  return true;
}

/* ---- byte moves ---- */

static inline void copy_elem(char *d, const char *s, size_t isz) {
  switch (isz) {
  case 1: *d = *s; break;
  case 2: memcpy(d, s, 2); break;
  case 4: memcpy(d, s, 4); break;
  default: memcpy(d, s, 8); break;
  }
}

/* n elements from s (element stride ss) to d (element stride ds). */
static void copy_row(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t isz) {
  if (ds == 1 && ss == 1) {
    memcpy(d, s, (size_t)n * isz);
    return;
  }
  int64_t db = ds * (int64_t)isz, sb = ss * (int64_t)isz;
  switch (isz) {
#define ROW(SZ, T)                                                                         \
  case SZ:                                                                                 \
    for (int64_t i = 0; i < n; i++) memcpy(d + i * db, s + i * sb, sizeof(T));             \
    break;
    ROW(1, uint8_t)
    ROW(2, uint16_t)
    ROW(4, uint32_t)
    ROW(8, uint64_t)
#undef ROW
  default:
    for (int64_t i = 0; i < n; i++) memcpy(d + i * db, s + i * sb, isz);
  }
}

/* ---- Gather ---- */

typedef struct gather_job {
  cm_index_set idx;
  const char *src; /* element 0 of a */
  char *dst;
  size_t isz;
  int64_t slice; /* elements per index position */
  cm_layout L;   /* the slice window: op 0 = out (row-major), op 1 = a */
  bool fast;     /* one row-contiguous index array, one element each */
} gather_job;

/* The common case, one contiguous index array picking single elements
 * (a[idx], take of a vector): a tight loop per index type and item size,
 * so that the random loads overlap. */
#define FAST_LOOP(IT, ET)                                                          \
  do {                                                                             \
    const IT *ix = (const IT *)s->data[0];                                         \
    ET *d = (ET *)g->dst;                                                          \
    const ET *src = (const ET *)g->src;                                            \
    for (int64_t p = begin; p < end; p++) {                                        \
      int64_t v = (int64_t)ix[p];                                                  \
      if (v < 0) v += dim;                                                         \
      if (v < 0 || v > last) {                                                     \
        if (s->checked) {                                                          \
          cm_index_fault_note(&s->fault, (int64_t)ix[p], s->axis[0], dim);         \
          continue;                                                                \
        }                                                                          \
        v = v < 0 ? 0 : last;                                                      \
      }                                                                            \
      d[p] = src[v * st];                                                          \
    }                                                                              \
  } while (0)
#define FAST_SIZES(IT)                                    \
  switch (g->isz) {                                       \
  case 1: FAST_LOOP(IT, uint8_t); return true;            \
  case 2: FAST_LOOP(IT, uint16_t); return true;           \
  case 4: FAST_LOOP(IT, uint32_t); return true;           \
  case 8: FAST_LOOP(IT, uint64_t); return true;           \
  default: return false;                                  \
  }

static bool gather_fast(gather_job *g, int64_t begin, int64_t end) {
  cm_index_set *s = &g->idx;
  int64_t dim = s->dim[0], last = dim - 1, st = s->stride[0];
  switch (s->dtype[0]) {
  case CM_INT32: FAST_SIZES(int32_t)
  case CM_INT64: FAST_SIZES(int64_t)
  case CM_UINT32: FAST_SIZES(uint32_t)
  default: return false;
  }
}

static void gather_range(void *ctx, int64_t begin, int64_t end) {
  gather_job *g = ctx;
  if (g->fast && gather_fast(g, begin, end)) return;
  cm_index_cursor c;
  cm_index_cursor_seek(&c, &g->idx, begin);
  int64_t rows = cm_layout_rows(&g->L), len = cm_layout_row_len(&g->L);
  int64_t ds = cm_layout_row_stride(&g->L, 0), ss = cm_layout_row_stride(&g->L, 1);
  int64_t isz = (int64_t)g->isz;
  for (int64_t p = begin; p < end; p++, cm_index_cursor_next(&c)) {
    int64_t base;
    if (!cm_index_offset(&g->idx, &c, true, &base)) continue; /* checked mode: reported later */
    char *d = g->dst + p * g->slice * isz;
    const char *s = g->src + base * isz;
    if (g->slice == 1) {
      copy_elem(d, s, g->isz);
      continue;
    }
    cm_row_cursor rc;
    cm_row_cursor_seek(&rc, &g->L, 0);
    for (int64_t r = 0; r < rows; r++, cm_row_cursor_next(&rc))
      copy_row(d + rc.offset[0] * isz, ds, s + rc.offset[1] * isz, ss, len, g->isz);
  }
}

int cm_cpu_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_gather_params *gp = cm_gather_params_of(out);
  cm_array *a = in[0];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  const int32_t *win = cm_gather_slice_sizes(out, in, nin);
  gather_job *g = malloc(sizeof *g);
  if (!g) return cm_error(CM_ERR_MEMORY, "[gather] Out of memory.");
  cm_index_set_init(&g->idx, in + 1, nin - 1, gp->axes, a->shape, a->strides, win);
  g->src = cm_data(a);
  g->dst = cm_data(out);
  g->isz = cm_itemsize(a);
  g->slice = cm_shape_size(a->ndim, win);
  int64_t ostrides[CM_MAX_DIMS];
  cm_row_major_strides(a->ndim, win, ostrides);
  const int64_t *st[2] = {ostrides, a->strides};
  cm_layout_init(&g->L, a->ndim, win, 2, st);
  g->fast = nin == 2 && g->slice == 1 && cm_row_contiguous(in[1]);
  cm_parallel_for(g->idx.count, cm_grain(g->slice + 4 * g->idx.n), gather_range, g);
  int rc = cm_index_fault_raise(&g->idx.fault, "gather");
  free(g);
  return rc;
}

/* ---- GatherAxis ---- */

typedef struct gather_axis_job {
  cm_layout L; /* idx's shape; ops: out, idx, a (axis stride 0) */
  const char *src, *idx;
  char *dst;
  cm_dtype itype;
  int64_t isz, iisz, ax_stride, dim;
  int axis;
  bool checked;
  cm_index_fault fault;
} gather_axis_job;

static void gather_axis_range(void *ctx, int64_t begin, int64_t end) {
  gather_axis_job *g = ctx;
  cm_row_cursor rc;
  cm_row_cursor_seek(&rc, &g->L, begin);
  int64_t len = cm_layout_row_len(&g->L);
  int64_t os = cm_layout_row_stride(&g->L, 0), is = cm_layout_row_stride(&g->L, 1),
          as = cm_layout_row_stride(&g->L, 2);
  for (int64_t r = begin; r < end; r++, cm_row_cursor_next(&rc)) {
    char *d = g->dst + rc.offset[0] * g->isz;
    const char *ip = g->idx + rc.offset[1] * g->iisz;
    const char *s = g->src + rc.offset[2] * g->isz;
    for (int64_t i = 0; i < len; i++) {
      int64_t raw = cm_cpu_load_index(ip + i * is * g->iisz, g->itype);
      int64_t v = raw < 0 ? raw + g->dim : raw;
      if (v < 0 || v >= g->dim) {
        if (g->checked) {
          cm_index_fault_note(&g->fault, raw, g->axis, g->dim);
          continue;
        }
        v = v < 0 ? 0 : g->dim - 1;
      }
      copy_elem(d + i * os * g->isz, s + (i * as + v * g->ax_stride) * g->isz, (size_t)g->isz);
    }
  }
}

int cm_cpu_gather_axis(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(out);
  cm_array *a = in[0], *idx = in[1];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  gather_axis_job *g = calloc(1, sizeof *g);
  if (!g) return cm_error(CM_ERR_MEMORY, "[take_along_axis] Out of memory.");
  int64_t astr[CM_MAX_DIMS];
  memcpy(astr, a->strides, sizeof(int64_t) * (size_t)a->ndim);
  astr[ap->axis] = 0; /* the axis coordinate comes from the index */
  const int64_t *st[3] = {out->strides, idx->strides, astr};
  cm_layout_init(&g->L, idx->ndim, idx->shape, 3, st);
  g->src = cm_data(a);
  g->idx = cm_data(idx);
  g->dst = cm_data(out);
  g->itype = idx->dtype;
  g->isz = (int64_t)cm_itemsize(a);
  g->iisz = (int64_t)cm_itemsize(idx);
  g->ax_stride = a->strides[ap->axis];
  g->dim = a->shape[ap->axis];
  g->axis = ap->axis;
  g->checked = cm_cpu_check_indices();
  cm_parallel_for(cm_layout_rows(&g->L), cm_grain(4 * cm_layout_row_len(&g->L)), gather_axis_range,
                  g);
  int rc = cm_index_fault_raise(&g->fault, "take_along_axis");
  free(g);
  return rc;
}
