/* CPU kernels for the shape primitives.  The views compute strides and a
 * byte offset over the input's buffer and hand them to cm_share_layout;
 * nothing is copied.  Negative strides (from slices with negative steps)
 * are ordinary strides here: element 0 sits at `offset`, and the other
 * elements may lie below it.  The materialising kernels (SliceUpdate,
 * Concatenate) write sub-views of their output with the general strided
 * copy, which splits large copies over the thread pool. */
#include "backend/cpu/shape.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/views.h"
#include "primitives/shape.h"

/* ---- layout helpers ---- */

/* a (a new reference) when it is row-contiguous (and `copy` is false),
 * else an evaluated row-contiguous copy at the start of a new buffer: for
 * views whose rules need plain row-major, aligned data. */
static cm_array *row_contiguous(cm_array *a, bool copy) {
  if (cm_row_contiguous(a) && !copy) return cm_retain(a);
  cm_buffer *b = cm_buffer_alloc(cm_nbytes(a));
  if (!b) return NULL;
  int64_t strides[CM_MAX_DIMS];
  cm_row_major_strides(a->ndim, a->shape, strides);
  cm_cpu_copy_strided(b->ptr, a->dtype, strides, cm_data(a), a->dtype, a->strides, a->ndim,
                      a->shape);
  cm_array *c = cm_array_from_buffer(b, 0, a->ndim, a->shape, NULL, a->dtype);
  cm_buffer_release(b);
  return c;
}

/* ---- Reshape, Flatten, Unflatten, Squeeze, ExpandDims ---- */

int cm_cpu_reshape(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *a = in[0];
  if (cm_view_reshape(out, a)) return 0;
  /* The strides cannot express the new shape: copy a out in row-major
   * order of its own shape, which is the new shape's order too. */
  if (cm_alloc_output(out)) return -1;
  int64_t dst[CM_MAX_DIMS];
  cm_row_major_strides(a->ndim, a->shape, dst);
  cm_cpu_copy_strided(cm_data(out), out->dtype, dst, cm_data(a), a->dtype, a->strides, a->ndim,
                      a->shape);
  return 0;
}

/* out = src, reusing src's buffer when out is its last holder. */
static int copy_source(cm_array *out, cm_array *src) {
  if (cm_try_donate(out, src)) return 0;
  if (cm_alloc_output(out)) return -1;
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(src), src->dtype,
                      src->strides, src->ndim, src->shape);
  return 0;
}

/* Write upd into out's window starting at byte offset off with strides. */
static void write_window(cm_array *out, int64_t off, const int64_t *strides, const cm_array *upd) {
  if (upd->size == 0) return;
  cm_cpu_copy_strided((char *)cm_data(out) + off, out->dtype, strides, cm_data(upd), upd->dtype,
                      upd->strides, upd->ndim, upd->shape);
}

int cm_cpu_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (copy_source(out, in[0])) return -1;
  int64_t strides[CM_MAX_DIMS];
  int64_t off = cm_view_slice_layout(out, cm_slice_params_of(out), strides);
  write_window(out, off, strides, in[1]);
  return 0;
}

/* Pad: the value everywhere, then the input over its window. */
int cm_cpu_pad(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int64_t zero[CM_MAX_DIMS] = {0}, strides[CM_MAX_DIMS];
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(in[1]), in[1]->dtype, zero,
                      out->ndim, out->shape);
  int64_t off = cm_view_slice_layout(out, cm_slice_params_of(out), strides);
  write_window(out, off, strides, in[0]);
  return 0;
}

/* ---- DynamicSlice and DynamicSliceUpdate ---- */

/* Element offset into base of the window of shape win whose starts are
 * read from the start array (0-d or 1-d, any integer dtype).  A negative
 * start counts from the end; then every start is clamped so the window
 * lies inside base (MLX reads out of bounds instead). */
static int64_t dynamic_offset(const cm_array *base, const cm_array *start, const uint8_t *axes,
                              const int32_t *win) {
  const char *data = cm_data(start);
  int64_t step = start->ndim ? start->strides[0] : 0, off = 0;
  size_t isz = cm_itemsize(start);
  for (int64_t i = 0; i < start->size; i++) {
    int ax = axes[i];
    int64_t v = cm_load_as_int64(data + i * step * (int64_t)isz, start->dtype);
    int64_t dim = base->shape[ax], hi = dim - win[ax];
    if (v < 0) v += dim;
    if (v > hi) v = hi;
    if (v < 0) v = 0;
    off += v * base->strides[ax];
  }
  return off;
}

int cm_cpu_dynamic_slice(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *a = in[0];
  const cm_dynamic_slice_params *dp = cm_dynamic_slice_params_of(out);
  int64_t off = out->size ? dynamic_offset(a, in[1], dp->axes, out->shape) : 0;
  cm_view_share(out, a, a->strides, a->offset + off * (int64_t)cm_itemsize(a));
  return 0;
}

int cm_cpu_dynamic_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_dynamic_slice_params *dp = cm_dynamic_slice_params_of(out);
  if (copy_source(out, in[0])) return -1;
  if (in[1]->size == 0) return 0;
  int64_t off = dynamic_offset(out, in[2], dp->axes, in[1]->shape);
  write_window(out, off * (int64_t)cm_itemsize(out), out->strides, in[1]);
  return 0;
}

/* ---- AsStrided ---- */

int cm_cpu_as_strided(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_as_strided_params *ap = cm_as_strided_params_of(out);
  /* the strides count elements of the row-major input (the op flattened
   * it; a 1-d input may still have been reversed) */
  cm_array *a = row_contiguous(in[0], false);
  if (!a) return -1;
  (void)nin;
  cm_view_share(out, a, ap->strides, a->offset + ap->offset * (int64_t)cm_itemsize(a));
  cm_release(a);
  return 0;
}

/* ---- View ---- */

int cm_cpu_view(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  int64_t strides[CM_MAX_DIMS];
  if (in[0]->size == 0) {
    cm_row_major_strides(out->ndim, out->shape, strides);
    cm_view_share(out, in[0], strides, in[0]->offset);
    return 0;
  }
  if (cm_view_dtype_strides(in[0], out, strides)) {
    cm_view_share(out, in[0], strides, in[0]->offset);
    return 0;
  }
  /* Make the bytes row-major and aligned first (a same-dtype copy moves
   * bytes as they are), then view that. */
  cm_array *a = row_contiguous(in[0], true);
  if (!a) return -1;
  cm_row_major_strides(out->ndim, out->shape, strides);
  cm_view_share(out, a, strides, a->offset);
  cm_release(a);
  return 0;
}

/* ---- Concatenate ---- */

int cm_cpu_concatenate(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  int ax = cm_concatenate_params_of(out)->axis;
  if (cm_alloc_output(out)) return -1;
  int64_t step = out->strides[ax] * (int64_t)cm_itemsize(out), pos = 0;
  for (int i = 0; i < nin; i++) {
    cm_array *x = in[i];
    if (x->size)
      cm_cpu_copy_strided((char *)cm_data(out) + pos * step, out->dtype, out->strides, cm_data(x),
                          x->dtype, x->strides, x->ndim, x->shape);
    pos += x->shape[ax];
  }
  return 0;
}

/* ---- Window functions ---- */

/* MLX computes these in float32 with the constant factor rounded to float
 * first; doing the same keeps the values within an ulp of MLX's (the rest
 * is MLX's own sin/cos approximation). */
int cm_cpu_window(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  const cm_window_params *wp = cm_window_params_of(out);
  if (cm_alloc_output(out)) return -1;
  float *w = cm_data(out);
  int m = wp->m;
  const double pi = 3.14159265358979323846;
  float f1 = (float)(2.0 * pi / (m - 1)), f2 = (float)(4.0 * pi / (m - 1));
  float fh = (float)(pi / (m - 1)), fb = (float)(2.0 / (m - 1));
  for (int i = 0; i < m; i++) {
    float n = (float)i;
    switch (wp->kind) {
    case CM_WINDOW_BARTLETT: w[i] = 1.0f - fabsf(n * fb - 1.0f); break;
    case CM_WINDOW_BLACKMAN: w[i] = (0.42f + 0.08f * cosf(f2 * n)) - 0.5f * cosf(f1 * n); break;
    case CM_WINDOW_HAMMING: w[i] = 0.54f - 0.46f * cosf(f1 * n); break;
    default: {
      float s = sinf(fh * n);
      w[i] = s * s;
    }
    }
  }
  return 0;
}
