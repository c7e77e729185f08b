/* Shape kernels that copy when a view cannot express the result (see
 * backend/views.h for the layouts, and backend/cpu/shape.c for the same
 * primitives on the CPU).  Every copy is a strided elementwise launch
 * (elementwise.h), queued on the node's stream. */
#include "backend/cuda/shape.h"

#include "backend/cuda/elementwise.h"
#include "backend/views.h"

/* Copy src into out's buffer in row-major order of src's shape (out was
 * allocated row-contiguous with as many elements). */
static int copy_row_major(cm_array *out, const cm_array *src) {
  int64_t dst[CM_MAX_DIMS];
  cm_row_major_strides(src->ndim, src->shape, dst);
  return cm_cuda_copy_strided(out, out->offset, dst, src->ndim, src->shape, src);
}

/* An evaluated row-contiguous copy of a in GPU memory, computed on out's
 * stream; a new reference, or NULL. */
static cm_array *row_contiguous_copy(cm_array *out, cm_array *a) {
  cm_buffer *b = cm_buffer_alloc_on(CM_GPU, cm_nbytes(a));
  if (!b) return NULL;
  cm_array *c = cm_array_from_buffer(b, 0, a->ndim, a->shape, NULL, a->dtype);
  cm_buffer_release(b);
  if (!c) return NULL;
  c->stream = out->stream;
  if (copy_row_major(c, a)) {
    cm_release(c);
    return NULL;
  }
  return c;
}

int cm_cuda_reshape(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *a = in[0];
  if (cm_view_reshape(out, a)) return 0;
  /* a's row-major order of its own shape is the new shape's order too */
  if (cm_alloc_output(out)) return -1;
  return copy_row_major(out, a);
}

int cm_cuda_as_strided(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_as_strided_params *ap = cm_as_strided_params_of(out);
  /* the strides count elements of the row-major input */
  cm_array *a = cm_row_contiguous(in[0]) ? cm_retain(in[0]) : row_contiguous_copy(out, in[0]);
  if (!a) return -1;
  cm_view_share(out, a, ap->strides, a->offset + ap->offset * (int64_t)cm_itemsize(a));
  cm_release(a);
  return 0;
}

int cm_cuda_view(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  int64_t strides[CM_MAX_DIMS];
  if (in[0]->size == 0 || cm_view_dtype_strides(in[0], out, strides)) {
    if (in[0]->size == 0) cm_row_major_strides(out->ndim, out->shape, strides);
    cm_view_share(out, in[0], strides, in[0]->offset);
    return 0;
  }
  cm_array *a = row_contiguous_copy(out, in[0]);
  if (!a) return -1;
  cm_row_major_strides(out->ndim, out->shape, strides);
  cm_view_share(out, a, strides, a->offset);
  cm_release(a);
  return 0;
}

/* out = a copy of src (donating src's buffer when out is its last holder
 * and it is GPU memory). */
static int copy_source(cm_array *out, cm_array *src) {
  if (cm_try_donate(out, src)) return 0;
  if (cm_alloc_output(out)) return -1;
  return copy_row_major(out, src);
}

int cm_cuda_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (copy_source(out, in[0])) return -1;
  if (in[1]->size == 0) return 0;
  int64_t strides[CM_MAX_DIMS];
  int64_t off = cm_view_slice_layout(out, cm_slice_params_of(out), strides);
  return cm_cuda_copy_strided(out, out->offset + off, strides, in[1]->ndim, in[1]->shape, in[1]);
}

int cm_cuda_pad(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  /* the value everywhere (a scalar broadcast over out's shape), then the
   * input over its window */
  int64_t rows[CM_MAX_DIMS], strides[CM_MAX_DIMS];
  cm_row_major_strides(out->ndim, out->shape, rows);
  if (cm_cuda_copy_strided(out, out->offset, rows, out->ndim, out->shape, in[1])) return -1;
  int64_t off = cm_view_slice_layout(out, cm_slice_params_of(out), strides);
  return in[0]->size ? cm_cuda_copy_strided(out, out->offset + off, strides, in[0]->ndim,
                                           in[0]->shape, in[0])
                    : 0;
}

int cm_cuda_concatenate(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  int ax = cm_concatenate_params_of(out)->axis;
  if (cm_alloc_output(out)) return -1;
  int64_t step = out->strides[ax] * (int64_t)cm_itemsize(out), pos = 0;
  for (int i = 0; i < nin; i++) {
    if (in[i]->size && cm_cuda_copy_strided(out, out->offset + pos * step, out->strides,
                                             in[i]->ndim, in[i]->shape, in[i]))
      return -1;
    pos += in[i]->shape[ax];
  }
  return 0;
}
