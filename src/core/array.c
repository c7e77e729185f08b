#include "core/array.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a * b, saturating at INT64_MAX. Only an empty array's partial products of
 * dims can overflow (a non-empty array's size is checked); its strides
 * address nothing, so saturating keeps them defined. */
static int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t cm_shape_size(int ndim, const int32_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n = mul_sat(n, shape[i]);
  return n;
}

const char *cm_shape_str(char *buf, size_t cap, int ndim, const int32_t *shape) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, i ? ",%d" : "%d", shape[i]);
  if (n < cap) snprintf(buf + n, cap - n, ")");
  return buf;
}

int cm_check_shape(const char *op, int ndim, const int32_t *shape) {
  if (ndim < 0) return cm_error(CM_ERR_VALUE, "[%s] Invalid number of dimensions %d.", op, ndim);
  if (ndim > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[%s] Arrays may have at most %d dimensions.", op, CM_MAX_DIMS);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return cm_error(CM_ERR_VALUE, "[%s] Negative dimensions not allowed.", op);
    if (shape[i] && n > INT64_MAX / 64 / shape[i])
      return cm_error(CM_ERR_VALUE, "[%s] Shape is too large.", op);
    n *= shape[i];
  }
  return 0;
}

int cm_shape_dim(const char *op, int64_t v, int32_t *out) {
  if (v < INT32_MIN || v > INT32_MAX)
    return cm_error(CM_ERR_OVERFLOW,
                    "%s%s%sShape dimension %lld is outside the supported range [-2147483648, "
                    "2147483647]. MLX currently uses 32-bit integers for shape dimensions.",
                    op ? "[" : "", op ? op : "", op ? "] " : "", (long long)v);
  *out = (int32_t)v;
  return 0;
}

void cm_row_major_strides(int ndim, const int32_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s = mul_sat(s, shape[i] > 0 ? shape[i] : 1);
  }
}

/* Allocate a node with room for ndim dims and nin inputs; zeroed. */
static cm_array *node_alloc(cm_dtype dtype, int ndim, const int32_t *shape, int nin) {
  cm_array *a = calloc(1, sizeof *a);
  if (!a) {
    cm_error(CM_ERR_MEMORY, "[array] Out of memory.");
    return NULL;
  }
  if (ndim > CM_INLINE_DIMS) {
    a->shape = malloc(sizeof(int32_t) * (size_t)ndim);
    a->strides = malloc(sizeof(int64_t) * (size_t)ndim);
  } else {
    a->shape = a->shape_inline;
    a->strides = a->strides_inline;
  }
  a->in = nin > CM_INLINE_INPUTS ? calloc((size_t)nin, sizeof(cm_array *)) : a->in_inline;
  if (!a->shape || !a->strides || !a->in) {
    if (a->shape != a->shape_inline) { free(a->shape); free(a->strides); }
    if (a->in != a->in_inline) free(a->in);
    free(a);
    cm_error(CM_ERR_MEMORY, "[array] Out of memory.");
    return NULL;
  }
  atomic_init(&a->refs, 1);
  atomic_init(&a->state, CM_STATE_PENDING);
  atomic_init(&a->waited, false);
  a->dtype = dtype;
  a->ndim = ndim;
  if (ndim) memcpy(a->shape, shape, sizeof(int32_t) * (size_t)ndim);
  a->size = cm_shape_size(ndim, shape);
  cm_row_major_strides(ndim, a->shape, a->strides);
  a->data_size = a->size;
  a->flags = CM_FLAG_CONTIGUOUS | CM_FLAG_ROW_CONTIGUOUS | CM_FLAG_COL_CONTIGUOUS;
  return a;
}

/* Copy a parameter block into a, after checking its size against the
 * descriptor: a block of the wrong size is a bug in an op constructor, and
 * reading past it would be undefined behaviour. */
static int set_params(cm_array *a, const cm_prim *prim, const void *params, size_t size) {
  size_t want = prim->params_size;
  if (size >= want && prim->params_extent && params) want = prim->params_extent(params);
  if (size != want || (size && !params))
    return cm_error(CM_ERR_RUNTIME, "[%s] Parameter block of %zu bytes, expected %zu.", prim->name,
                    size, want);
  if (size > UINT32_MAX)
    return cm_error(CM_ERR_VALUE, "[%s] Parameter block too large.", prim->name);
  if (!size) return 0;
  void *dst = size <= CM_PARAMS_INLINE ? a->params_inline : malloc(size);
  if (!dst) return cm_error(CM_ERR_MEMORY, "[array] Out of memory.");
  memcpy(dst, params, size);
  a->params = dst;
  a->params_size = (uint32_t)size;
  return 0;
}

/* Drop a's parameter block; the destructor runs only when asked (a node
 * that failed construction leaves ownership with its caller). */
static void drop_params(cm_array *a, bool destroy) {
  if (!a->params) return;
  if (destroy && a->prim && a->prim->params_destroy) a->prim->params_destroy(a->params);
  if ((void *)a->params != (void *)a->params_inline) free(a->params);
  a->params = NULL;
  a->params_size = 0;
}

static void node_struct_free(cm_array *a) {
  if (a->in != a->in_inline && (!a->sib || a->position == 0)) free(a->in);
  if (a->shape != a->shape_inline) {
    free(a->shape);
    free(a->strides);
  }
  cm_buffer_release(a->buf);
  free(a->error);
  free(a);
}

cm_array *cm_node_new(cm_dtype dtype, int ndim, const int32_t *shape, const cm_prim *prim,
                      const void *params, size_t params_size, cm_array *const *inputs, int nin,
                      cm_stream stream) {
  cm_array *a = node_alloc(dtype, ndim, shape, nin);
  if (!a) return NULL;
  if (set_params(a, prim, params, params_size)) {
    node_struct_free(a);
    return NULL;
  }
  a->prim = prim;
  a->stream = stream;
  a->nin = nin;
  for (int i = 0; i < nin; i++) {
    a->in[i] = cm_retain(inputs[i]);
    a->tracer |= inputs[i]->tracer;
    if (prim->moves_bytes && dtype == CM_BOOL)
      a->raw_bytes |= inputs[i]->raw_bytes || inputs[i]->dtype != CM_BOOL;
  }
  return a;
}

int cm_node_new_multi(int nout, const cm_dtype *dtypes, const int *ndims,
                      const int32_t *const *shapes, const cm_prim *prim, const void *params,
                      size_t params_size, cm_array *const *inputs, int nin, cm_stream stream,
                      cm_array **outs) {
  if (nout < 1) return cm_error(CM_ERR_VALUE, "[%s] A node needs at least one output.", prim->name);
  cm_siblings *sib = malloc(sizeof *sib + sizeof(cm_array *) * (size_t)nout);
  if (!sib) return cm_error(CM_ERR_MEMORY, "[array] Out of memory.");
  sib->n = nout;
  sib->alive = nout;
  int made = 0;
  for (; made < nout; made++) {
    cm_array *o = made == 0 ? cm_node_new(dtypes[0], ndims[0], shapes[0], prim, params,
                                          params_size, inputs, nin, stream)
                            : node_alloc(dtypes[made], ndims[made], shapes[made], 0);
    if (!o) break;
    if (made) { /* the inputs and parameters are the first output's */
      cm_array *first = sib->out[0];
      o->prim = prim;
      o->params = first->params;
      o->params_size = first->params_size;
      o->stream = stream;
      o->nin = nin;
      o->in = first->in;
      o->tracer = first->tracer;
    }
    o->sib = sib;
    o->position = made;
    sib->out[made] = o;
  }
  if (made < nout) { /* the caller keeps the block's resources */
    for (int k = made - 1; k >= 0; k--) {
      cm_array *o = sib->out[k];
      if (k == 0) {
        drop_params(o, false);
        for (int i = 0; i < o->nin; i++) cm_release(o->in[i]);
      }
      node_struct_free(o);
    }
    free(sib);
    return -1;
  }
  for (int k = 0; k < nout; k++) outs[k] = sib->out[k];
  return 0;
}

cm_array *cm_array_from_buffer(cm_buffer *buf, int64_t offset, int ndim, const int32_t *shape,
                               const int64_t *strides, cm_dtype dtype) {
  cm_array *a = node_alloc(dtype, ndim, shape, 0);
  if (!a) return NULL;
  cm_buffer_retain(buf);
  a->buf = buf;
  a->offset = offset;
  if (strides) memcpy(a->strides, strides, sizeof(int64_t) * (size_t)ndim);
  /* data_size: span between the lowest and highest element touched (an
   * empty array touches none, and its saturated strides must not be
   * multiplied out) */
  int64_t lo = 0, hi = 0;
  for (int i = 0; a->size && i < ndim; i++) {
    int64_t ext = a->strides[i] * (a->shape[i] - 1);
    if (ext > 0) hi += ext; else lo += ext;
  }
  a->data_size = a->size ? hi - lo + 1 : 0;
  cm_update_flags(a);
  atomic_store_explicit(&a->state, CM_STATE_DONE, memory_order_release);
  return a;
}

cm_array *cm_array_from_data(const void *data, int ndim, const int32_t *shape, cm_dtype dtype) {
  if (cm_check_shape("array", ndim, shape)) return NULL;
  size_t nbytes = (size_t)cm_shape_size(ndim, shape) * cm_dtype_size(dtype);
  cm_buffer *buf = cm_buffer_alloc(nbytes);
  if (!buf) return NULL;
  if (data) memcpy(buf->ptr, data, nbytes);
  else memset(buf->ptr, 0, nbytes);
  cm_array *a = cm_array_from_buffer(buf, 0, ndim, shape, NULL, dtype);
  cm_buffer_release(buf);
  return a;
}

cm_array *cm_array_scalar(const void *value, cm_dtype st, cm_dtype dtype) {
  unsigned char tmp[16];
  cm_convert_scalar(tmp, dtype, value, st);
  return cm_array_from_data(tmp, 0, NULL, dtype);
}

cm_array *cm_array_scalar_double(double v, cm_dtype dtype) {
  return cm_array_scalar(&v, CM_FLOAT64, dtype);
}
cm_array *cm_array_scalar_int(int64_t v, cm_dtype dtype) {
  return cm_array_scalar(&v, CM_INT64, dtype);
}

/* ---- layout ---- */

void cm_update_flags(cm_array *a) {
  bool row = true, col = true;
  int64_t expect = 1;
  for (int i = a->ndim - 1; i >= 0; i--) {
    if (a->shape[i] == 1) continue;
    if (a->strides[i] != expect) row = false;
    expect = mul_sat(expect, a->shape[i]);
  }
  expect = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] == 1) continue;
    if (a->strides[i] != expect) col = false;
    expect = mul_sat(expect, a->shape[i]);
  }
  /* Dense in some axis order: sorted by stride, each stride must equal the
   * number of elements the smaller-stride axes span (no gaps, repeats or
   * overlaps, e.g. as_strided (3,3) with strides (2,2) spans 9 slots but
   * is not dense). */
  bool dense = !row && !col && a->data_size == a->size;
  if (dense) {
    int order[CM_MAX_DIMS], n = 0;
    for (int i = 0; i < a->ndim; i++)
      if (a->shape[i] > 1) {
        if (a->strides[i] <= 0) dense = false;
        int j = n++;
        while (j > 0 && a->strides[order[j - 1]] > a->strides[i]) {
          order[j] = order[j - 1];
          j--;
        }
        order[j] = i;
      }
    int64_t span = 1;
    for (int k = 0; k < n && dense; k++) {
      if (a->strides[order[k]] != span) dense = false;
      span = mul_sat(span, a->shape[order[k]]);
    }
  }
  a->flags = (row ? CM_FLAG_ROW_CONTIGUOUS : 0) | (col ? CM_FLAG_COL_CONTIGUOUS : 0) |
             ((row || col || dense) ? CM_FLAG_CONTIGUOUS : 0);
}

/* A kernel's output lives on the device of the node's stream (a node
 * without a graph has the zeroed stream: the CPU's). */
static cm_device_type output_device(const cm_array *out) { return out->stream.device.type; }

int cm_alloc_output(cm_array *out) {
  cm_buffer *b = cm_buffer_alloc_on(output_device(out), cm_nbytes(out));
  if (!b) return -1;
  cm_buffer_release(out->buf);
  out->buf = b;
  out->offset = 0;
  cm_row_major_strides(out->ndim, out->shape, out->strides);
  out->data_size = out->size;
  out->flags = CM_FLAG_CONTIGUOUS | CM_FLAG_ROW_CONTIGUOUS | CM_FLAG_COL_CONTIGUOUS;
  if (out->ndim > 1) cm_update_flags(out);
  return 0;
}

void cm_share_layout(cm_array *out, const cm_array *src, const int64_t *strides, int64_t offset,
                     int64_t data_size) {
  cm_buffer_retain(src->buf);
  cm_buffer_release(out->buf);
  out->buf = src->buf;
  out->offset = offset;
  memcpy(out->strides, strides, sizeof(int64_t) * (size_t)out->ndim);
  out->data_size = data_size;
  cm_update_flags(out);
}

int cm_alloc_output_like(cm_array *out, const cm_array *like) {
  if (!cm_is_contiguous(like) || cm_row_contiguous(like) || like->ndim != out->ndim)
    return cm_alloc_output(out);
  /* like is dense but permuted: keep its strides, with the base shifted to
   * the lowest address (negative offsets never arise: strides are > 0) */
  cm_buffer *b = cm_buffer_alloc_on(output_device(out), (size_t)like->data_size * cm_itemsize(out));
  if (!b) return -1;
  cm_buffer_release(out->buf);
  out->buf = b;
  out->offset = 0;
  memcpy(out->strides, like->strides, sizeof(int64_t) * (size_t)out->ndim);
  out->data_size = like->data_size;
  cm_update_flags(out);
  return 0;
}

static atomic_int graph_retention;
void cm_graph_retention_push(void) { atomic_fetch_add(&graph_retention, 1); }
void cm_graph_retention_pop(void) { atomic_fetch_sub(&graph_retention, 1); }
bool cm_graph_retained(void) {
  return atomic_load_explicit(&graph_retention, memory_order_relaxed) > 0;
}

bool cm_try_donate(cm_array *out, cm_array *in) {
  if (cm_graph_retained() || atomic_load_explicit(&in->refs, memory_order_acquire) != 1 ||
      !in->buf || atomic_load_explicit(&in->buf->refs, memory_order_acquire) != 1 ||
      in->buf->wrapped || in->buf->device != output_device(out) || !cm_is_contiguous(in) ||
      in->size != out->size || in->ndim != out->ndim || cm_itemsize(in) != cm_itemsize(out))
    return false;
  cm_buffer_release(out->buf);
  out->buf = in->buf;
  in->buf = NULL; /* in is about to be dropped by its only holder, out */
  out->offset = in->offset;
  memcpy(out->strides, in->strides, sizeof(int64_t) * (size_t)out->ndim);
  out->data_size = in->data_size;
  out->flags = in->flags;
  return true;
}

/* ---- teardown ---- */

/* Guards the group bookkeeping of multi-output nodes (alive counts, zombie
 * marks, the buffers of dropped outputs).  Single-output nodes never take
 * it. */
static pthread_mutex_t sibling_mu = PTHREAD_MUTEX_INITIALIZER;

/* The buffer of an output nobody holds, once it is computed and its graph
 * dropped, is dead weight: free it now rather than with the group. */
static cm_buffer *take_dead_buffer(cm_array *a) {
  if (!a->zombie || a->prim) return NULL; /* no graph: it was computed */
  cm_buffer *b = a->buf;
  a->buf = NULL;
  return b;
}

/* Drop a's graph; the inputs it owned go to *in / *nin for the caller to
 * release (a group's after the sibling lock is let go: releasing one may
 * free another group's output, which takes that lock). */
static void detach_graph(cm_array *a, cm_array ***in, int *nin) {
  *in = a->in;
  *nin = a->nin;
  bool owner = !a->sib || a->position == 0;
  if (owner) drop_params(a, true);
  a->params = NULL;
  a->params_size = 0;
  a->nin = 0;
  a->prim = NULL;
  a->in = a->in_inline;
  if (!owner) *nin = 0, *in = NULL;
}

/* Inputs are released iteratively by cm_release's worklist when they hit
 * zero, so a long chain is freed without recursion here too. */
static void release_inputs(cm_array *a, cm_array **in, int nin) {
  for (int i = 0; i < nin; i++) cm_release(in[i]);
  if (in && in != a->in_inline) free(in);
}

void cm_detach(cm_array *a) {
  cm_array **in = NULL;
  int nin = 0;
  if (!a->sib) {
    detach_graph(a, &in, &nin);
    release_inputs(a, in, nin);
    return;
  }
  /* Every output drops the shared graph at once; the first goes last as
   * it owns the inputs and parameters the others point at. */
  cm_siblings *sib = a->sib;
  cm_buffer *dead[64], **dp = sib->n <= 64 ? dead : calloc((size_t)sib->n, sizeof *dp);
  int ndead = 0;
  cm_array *first = sib->out[0];
  pthread_mutex_lock(&sibling_mu);
  for (int k = sib->n - 1; k >= 0; k--) {
    cm_array **kin;
    int kn;
    detach_graph(sib->out[k], &kin, &kn);
    if (k == 0) in = kin, nin = kn;
    cm_buffer *b = dp ? take_dead_buffer(sib->out[k]) : NULL;
    if (b) dp[ndead++] = b;
  }
  pthread_mutex_unlock(&sibling_mu);
  release_inputs(first, in, nin);
  for (int i = 0; i < ndead; i++) cm_buffer_release(dp[i]);
  if (dp != dead) free(dp);
}

typedef struct free_list {
  cm_array **stack;
  size_t top, cap;
} free_list;

static void push_input(free_list *fl, cm_array *x) {
  if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1) return;
  if (fl->top == fl->cap) {
    size_t ncap = fl->cap ? fl->cap * 2 : 64;
    cm_array **ns = realloc(fl->stack, ncap * sizeof *ns);
    if (!ns) abort(); /* cannot free without memory for the worklist */
    fl->stack = ns;
    fl->cap = ncap;
  }
  fl->stack[fl->top++] = x;
}

/* Free one node whose handle count reached zero.  An output of a
 * multi-output node becomes a zombie instead while a sibling is held (the
 * group's structs share inputs and parameters); the last one frees them
 * all. */
static void node_free(cm_array *a, free_list *fl) {
  cm_siblings *sib = a->sib;
  if (sib) {
    pthread_mutex_lock(&sibling_mu);
    /* revived meanwhile, or already counted: nothing to do */
    bool skip = atomic_load(&a->refs) != 0 || a->zombie;
    bool last = false;
    cm_buffer *b = NULL;
    if (!skip) {
      a->zombie = true;
      last = --sib->alive == 0;
      if (!last) b = take_dead_buffer(a);
    }
    pthread_mutex_unlock(&sibling_mu);
    cm_buffer_release(b);
    if (!last) return;
    cm_array *first = sib->out[0];
    if (first->prim) drop_params(first, true);
    for (int i = 0; i < first->nin; i++) push_input(fl, first->in[i]);
    for (int k = sib->n - 1; k >= 0; k--) node_struct_free(sib->out[k]);
    free(sib);
    return;
  }
  if (a->prim) drop_params(a, true);
  for (int i = 0; i < a->nin; i++) push_input(fl, a->in[i]);
  node_struct_free(a);
}

void cm_sibling_revive(cm_array *a) {
  pthread_mutex_lock(&sibling_mu);
  if (a->zombie) {
    a->zombie = false;
    a->sib->alive++;
  }
  pthread_mutex_unlock(&sibling_mu);
}

void cm_release(cm_array *a) {
  if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
  free_list fl = {0};
  node_free(a, &fl);
  while (fl.top) node_free(fl.stack[--fl.top], &fl);
  free(fl.stack);
}
