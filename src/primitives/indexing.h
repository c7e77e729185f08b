/* Indexing primitives: Gather, Scatter (op none/add/prod/max/min),
 * GatherAxis, ScatterAxis (none/add), MaskedScatter, and MaskedGather
 * (MaskedScatter's transpose, used by its derivative).
 *
 * Gather (inputs: a, idx_0..idx_{k-1}; the indices broadcast to one shape
 * I): out has shape I + slice_sizes (a.ndim entries) and
 *     out[i, s] = a[s with s[axes[j]] += idx_j[i]].
 * The slice sizes are the node's trailing shape, so the parameters only
 * hold the axes.
 *
 * Scatter (inputs: a, idx_0..idx_{k-1}, updates of shape I + U with U of
 * a.ndim entries, U <= a.shape): out = a, then for each i in row-major
 * order, the window of shape U at the indexed position is combined with
 * updates[i] by the op.  Repeated indices apply in that order, so "none"
 * keeps the last write and the reductions accumulate.
 *
 * GatherAxis (inputs: a, idx; equal shapes except along axis): out has
 * idx's shape, out[..., i, ...] = a[..., idx[..., i, ...], ...].
 * ScatterAxis (inputs: a, idx, updates; idx and updates one shape, equal
 * to a's except along axis): the transpose, with op none or add.
 *
 * MaskedScatter (inputs: a, mask of a's shape, src): out = a with the
 * True positions, in row-major order, replaced by src's elements read in
 * row-major order; src must have at least as many elements as there are
 * True entries (ValueError from the kernel otherwise).
 * MaskedGather (inputs: x, mask of x's shape; output shape and dtype set
 * by the op): out.flat[j] = x at the j-th True position, zeros after.
 * Both may carry a leading batch axis (cm_masked_params).
 *
 * Index handling (wrapping, clamping, CMLX_CHECK_INDICES) is described in
 * backend/cpu/gather.h. */
#ifndef CMLX_PRIMITIVES_INDEXING_H
#define CMLX_PRIMITIVES_INDEXING_H

#include "ops/scatter_ops.h"
#include "primitives/primitive.h"

/* The combining modes, in the table's order (ops/scatter_ops.h); NONE is
 * 0, a plain write. */
typedef enum cm_scatter_op {
#define CM_X(CODE, ...) CM_SCATTER_##CODE,
  CM_SCATTER_OPS(CM_X)
#undef CM_X
  CM_SCATTER_NUM_OPS
} cm_scatter_op;
_Static_assert(CM_SCATTER_NONE == 0, "a zeroed Scatter parameter block is a plain write");

/* At most this many index arrays per Gather / Scatter node. */
#define CM_GATHER_MAX_AXES 62

extern const cm_prim cm_prim_gather;
typedef struct cm_gather_params {
  uint8_t naxes;
  uint8_t axes[CM_GATHER_MAX_AXES];
} cm_gather_params;
CM_PARAMS_ACCESSOR(cm_gather_params, cm_gather_params_of)

extern const cm_prim cm_prim_scatter;
/* MLX's Scatter::ReduceType (SliceUpdate's too) as cmlx codes: Max, Min,
 * Sum, Prod, None (indexing_export.c). */
extern const cm_scatter_op cm_export_scatter_ops[5];
typedef struct cm_scatter_params {
  uint8_t op; /* cm_scatter_op */
  uint8_t naxes;
  uint8_t axes[CM_GATHER_MAX_AXES];
} cm_scatter_params;
CM_PARAMS_ACCESSOR(cm_scatter_params, cm_scatter_params_of)

extern const cm_prim cm_prim_gather_axis;
extern const cm_prim cm_prim_scatter_axis;
typedef struct cm_axis_index_params {
  int32_t axis;
  int32_t op; /* ScatterAxis: CM_SCATTER_NONE or CM_SCATTER_SUM */
} cm_axis_index_params;
CM_PARAMS_ACCESSOR(cm_axis_index_params, cm_axis_index_params_of)

extern const cm_prim cm_prim_masked_scatter;
extern const cm_prim cm_prim_masked_gather;
/* batch 1: axis 0 of every input and of the output is a batch axis (what
 * vmap builds, as MLX's MaskedScatter always has): each entry along it is
 * a masked scatter / gather of its own, reading its source from the start.
 * batch 0: the whole arrays, as described above. */
typedef struct cm_masked_params {
  int32_t batch;
} cm_masked_params;
CM_PARAMS_ACCESSOR(cm_masked_params, cm_masked_params_of)

/* The slice sizes of a Gather node / the update window of a Scatter node
 * (pointers into the node's or the updates' shape, a.ndim entries). */
const int32_t *cm_gather_slice_sizes(const cm_array *out, cm_array *const *in, int nin);
const int32_t *cm_scatter_window(cm_array *const *in, int nin);

#endif
