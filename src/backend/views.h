/* The view primitives' layouts, the same on every device.  A view gives
 * its output new strides and a byte offset over the input's buffer and
 * moves no data, so what it computes does not depend on where the buffer
 * lives: every backend registers the kernels below for the views, and
 * uses the layout helpers in the kernels of its own that copy when a view
 * cannot express the result (Reshape of a transposed array, AsStrided and
 * View of a non-contiguous one, the slice updates).
 *
 * These run on the host, reading only shapes, strides and parameters;
 * none reads an element. */
#ifndef CMLX_BACKEND_VIEWS_H
#define CMLX_BACKEND_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "primitives/primitive.h"
#include "primitives/shape.h"

/* ---- layout helpers ---- */

/* Make out a view of src's buffer with the given element strides and byte
 * offset (relative to the buffer start), with flags that only claim
 * CONTIGUOUS when the elements really tile memory. */
void cm_view_share(cm_array *out, const cm_array *src, const int64_t *strides, int64_t offset);
/* Strides that read a's elements in row-major order as `shape` without
 * moving them, if such strides exist (NumPy's no-copy reshape). */
bool cm_view_reshape_strides(const cm_array *a, int ndim, const int32_t *shape, int64_t *strides);
/* Make out (Reshape and its kin) a view of a when strides can express
 * the new shape; false when it takes a copy (the backend's). */
bool cm_view_reshape(cm_array *out, const cm_array *a);
/* Strides and byte offset (from base's element 0) of the window sp selects. */
int64_t cm_view_slice_layout(const cm_array *base, const cm_slice_params *sp, int64_t *strides);
/* Strides of in seen through out's (broadcast) shape: axes that in lacks
 * or has as size 1 get stride 0. */
void cm_view_broadcast_strides(const cm_array *out, const cm_array *in, int64_t *strides);
/* Strides of in's bytes read as out's dtype, when in's layout allows it. */
bool cm_view_dtype_strides(const cm_array *in, const cm_array *out, int64_t *strides);

/* The element offset of batch element bi (row-major over the nb batch
 * axes bshape, with strides bstrides): batched products walk batches
 * of any layout with it. */
int64_t cm_batch_offset(int64_t bi, int nb, const int32_t *bshape, const int64_t *bstrides);

/* ---- kernels of the pure views (registered by every backend) ---- */
int cm_view_transpose(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_view_slice(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_view_diagonal(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_view_broadcast(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Identity and StopGradient: out shares in[0] as it is. */
int cm_view_identity(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Depends: output k shares input k; the other inputs were only needed
 * before it. */
int cm_view_depends(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
