#include "backend/cpu/layout.h"

#include "backend/cpu/copy.h"
#include "backend/views.h"

int cm_cpu_copy(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *src = in[0];
  bool same_shape = src->size == out->size && src->ndim == out->ndim;
  if (same_shape && src->dtype == out->dtype && cm_row_contiguous(src) && src->buf) {
    /* already what a copy would produce: share it (arrays are immutable) */
    cm_share_layout(out, src, src->strides, src->offset, src->data_size);
    return 0;
  }
  if (same_shape && cm_row_contiguous(src) && cm_itemsize(src) == cm_itemsize(out) &&
      cm_try_donate(out, src)) {
    /* converting in place over a donated buffer: read and write the same
     * element per step, which the row loops do in order */
    cm_cpu_convert(cm_data(out), out->dtype, cm_data(out), src->dtype, out->data_size);
    return 0;
  }
  if (cm_alloc_output(out)) return -1;
  int64_t strides[CM_MAX_DIMS];
  cm_view_broadcast_strides(out, src, strides);
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(src), src->dtype, strides,
                      out->ndim, out->shape);
  return 0;
}

