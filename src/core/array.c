#include "core/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t cm_shape_size(int ndim, const int32_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
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
  if (ndim < 0 || ndim > CM_MAX_DIMS)
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

void cm_row_major_strides(int ndim, const int32_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
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
  a->dtype = dtype;
  a->ndim = ndim;
  if (ndim) memcpy(a->shape, shape, sizeof(int32_t) * (size_t)ndim);
  a->size = cm_shape_size(ndim, shape);
  cm_row_major_strides(ndim, a->shape, a->strides);
  a->data_size = a->size;
  a->flags = CM_FLAG_CONTIGUOUS | CM_FLAG_ROW_CONTIGUOUS | CM_FLAG_COL_CONTIGUOUS;
  return a;
}

cm_array *cm_node_new(cm_dtype dtype, int ndim, const int32_t *shape, const cm_prim *prim,
                      const void *params, size_t params_size, cm_array *const *inputs, int nin,
                      cm_stream stream) {
  cm_array *a = node_alloc(dtype, ndim, shape, nin);
  if (!a) return NULL;
  a->prim = prim;
  if (params && params_size) memcpy(&a->params, params, params_size);
  a->stream = stream;
  a->nin = nin;
  for (int i = 0; i < nin; i++) a->in[i] = cm_retain(inputs[i]);
  return a;
}

cm_array *cm_array_from_buffer(cm_buffer *buf, int64_t offset, int ndim, const int32_t *shape,
                               const int64_t *strides, cm_dtype dtype) {
  cm_array *a = node_alloc(dtype, ndim, shape, 0);
  if (!a) return NULL;
  cm_buffer_retain(buf);
  a->buf = buf;
  a->offset = offset;
  if (strides) memcpy(a->strides, strides, sizeof(int64_t) * (size_t)ndim);
  /* data_size: span between the lowest and highest element touched */
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < ndim; i++) {
    if (a->shape[i] == 0) { lo = hi = 0; break; }
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

cm_array *cm_array_scalar_double(double v, cm_dtype dtype) { return cm_array_scalar(&v, CM_FLOAT64, dtype); }
cm_array *cm_array_scalar_int(int64_t v, cm_dtype dtype) { return cm_array_scalar(&v, CM_INT64, dtype); }

/* ---- layout ---- */

void cm_update_flags(cm_array *a) {
  bool row = true, col = true;
  int64_t expect = 1;
  for (int i = a->ndim - 1; i >= 0; i--) {
    if (a->shape[i] == 1) continue;
    if (a->strides[i] != expect) row = false;
    expect *= a->shape[i];
  }
  expect = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] == 1) continue;
    if (a->strides[i] != expect) col = false;
    expect *= a->shape[i];
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
      span *= a->shape[order[k]];
    }
  }
  a->flags = (row ? CM_FLAG_ROW_CONTIGUOUS : 0) | (col ? CM_FLAG_COL_CONTIGUOUS : 0) |
             ((row || col || dense) ? CM_FLAG_CONTIGUOUS : 0);
}

int cm_alloc_output(cm_array *out) {
  cm_buffer *b = cm_buffer_alloc(cm_nbytes(out));
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
  cm_buffer *b = cm_buffer_alloc((size_t)like->data_size * cm_itemsize(out));
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
bool cm_graph_retained(void) { return atomic_load_explicit(&graph_retention, memory_order_relaxed) > 0; }

bool cm_try_donate(cm_array *out, cm_array *in) {
  if (cm_graph_retained() || atomic_load_explicit(&in->refs, memory_order_acquire) != 1 || !in->buf ||
      atomic_load_explicit(&in->buf->refs, memory_order_acquire) != 1 || in->buf->capacity == 0 ||
      !cm_is_contiguous(in) || in->size != out->size || in->ndim != out->ndim ||
      cm_itemsize(in) != cm_itemsize(out))
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

void cm_detach(cm_array *a) {
  /* Inputs are released iteratively by cm_release's worklist when they hit
   * zero, so a long chain is freed without recursion here too. */
  cm_array **in = a->in;
  int nin = a->nin;
  a->nin = 0;
  a->prim = NULL;
  a->in = a->in_inline;
  for (int i = 0; i < nin; i++) cm_release(in[i]);
  if (in != a->in_inline) free(in);
}

static void node_free(cm_array *a, cm_array ***stack, size_t *top, size_t *cap) {
  for (int i = 0; i < a->nin; i++) {
    cm_array *x = a->in[i];
    if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1) continue;
    if (*top == *cap) {
      size_t ncap = *cap ? *cap * 2 : 64;
      cm_array **ns = realloc(*stack, ncap * sizeof **stack);
      if (!ns) abort(); /* cannot free without memory for the worklist */
      *stack = ns;
      *cap = ncap;
    }
    (*stack)[(*top)++] = x;
  }
  if (a->in != a->in_inline) free(a->in);
  if (a->shape != a->shape_inline) {
    free(a->shape);
    free(a->strides);
  }
  cm_buffer_release(a->buf);
  free(a->error);
  free(a);
}

void cm_release(cm_array *a) {
  if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1) return;
  cm_array **stack = NULL;
  size_t top = 0, cap = 0;
  node_free(a, &stack, &top, &cap);
  while (top) node_free(stack[--top], &stack, &top, &cap);
  free(stack);
}
