#include "backend/cpu/layout.h"

#include "backend/cpu/copy.h"

/* Strides of in seen through out's (broadcast) shape: axes that in lacks
 * or has as size 1 get stride 0. */
static void broadcast_strides(const cm_array *out, const cm_array *in, int64_t *strides) {
  int lead = out->ndim - in->ndim;
  for (int i = 0; i < out->ndim; i++) {
    int j = i - lead;
    strides[i] = (j < 0 || in->shape[j] == 1) ? 0 : in->strides[j];
  }
}

int cm_cpu_broadcast(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  int64_t strides[CM_MAX_DIMS];
  broadcast_strides(out, in[0], strides);
  cm_share_layout(out, in[0], strides, in[0]->offset, in[0]->data_size);
  return 0;
}

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
  broadcast_strides(out, src, strides);
  cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(src), src->dtype, strides,
                      out->ndim, out->shape);
  return 0;
}

int cm_cpu_identity(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_share_layout(out, in[0], in[0]->strides, in[0]->offset, in[0]->data_size);
  return 0;
}

/* Depends: output k shares input k; the other inputs were only needed
 * before it. */
int cm_cpu_depends(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  for (int k = 0; k < cm_num_outputs(out); k++) {
    cm_array *o = cm_output(out, k);
    cm_share_layout(o, in[k], in[k]->strides, in[k]->offset, in[k]->data_size);
  }
  return 0;
}
