/* Indexing ops: take, take_along_axis, put_along_axis, gather, scatter
 * (none/add/prod/max/min), masked_scatter, and slice updates that
 * combine (slice_update_add/prod/max/min).  Semantics are MLX 0.32's.
 *
 * Indices may have any integer dtype (bool and inexact ones are refused);
 * a negative index counts from the end once (-n is the first element).
 * Out-of-range indices are not an error by default (MLX does no check):
 * reads clamp the index into range, writes drop the update; with
 * CMLX_CHECK_INDICES=1 in the environment the kernels raise IndexError
 * instead, which comes out of eval.  Static (Python int / C int) indices
 * are checked when the op is built.
 *
 * Repeated indices in a scatter apply in row-major order of the index
 * positions: "none" keeps the last write, the reductions accumulate.
 *
 * mlx-c mapping:
 *   mlx_take(a, idx)                   cm_take_flat(a, idx)
 *   mlx_take_axis(a, idx, axis)        cm_take(a, idx, axis)
 *   mlx_take_along_axis(a, idx, axis)  cm_take_along_axis
 *   mlx_put_along_axis                 cm_put_along_axis
 *   mlx_scatter_add_axis               cm_scatter_add_axis
 *   mlx_gather(a, vec, axes, n, sizes, m)  cm_gather(a, idx, n, axes, n, sizes, m)
 *   mlx_gather_single(a, idx, axis, ...)   cm_gather(a, &idx, 1, &axis, 1, ...)
 *   mlx_scatter[_add|_prod|_max|_min][_single]  cm_scatter(..., op)
 *   mlx_masked_scatter                 cm_masked_scatter
 *   mlx_slice_update_add/prod/max/min  cm_slice_update_reduce(..., op) */
#ifndef CMLX_OPS_INDEXING_H
#define CMLX_OPS_INDEXING_H

#include <stdint.h>

#include "ops/common.h"
#include "primitives/indexing.h"

/* out[i, s] = a[s, shifted by idx_j[i] along axes[j]]: shape I + slice_sizes
 * (I: the indices broadcast together; slice_sizes has a.ndim entries). */
cm_array *cm_gather(cm_array *a, cm_array *const *indices, int nidx, const int *axes, int naxes,
                    const int32_t *slice_sizes, int nsizes, cm_stream s);
/* a with the windows at the indexed positions combined with updates
 * (shape I + window, window <= a.shape; cast to a's dtype) by op. */
cm_array *cm_scatter(cm_array *a, cm_array *const *indices, int nidx, cm_array *updates,
                     const int *axes, int naxes, cm_scatter_op op, cm_stream s);

/* take along axis: a.shape[:axis] + indices.shape + a.shape[axis+1:]. */
cm_array *cm_take(cm_array *a, cm_array *indices, int axis, cm_stream s);
/* axis=None: take from the flattened array. */
cm_array *cm_take_flat(cm_array *a, cm_array *indices, cm_stream s);
/* A static index (negative counts from the end; out of range is an
 * IndexError): a view, a without the axis. */
cm_array *cm_take_index(cm_array *a, int64_t index, int axis, cm_stream s);
cm_array *cm_take_index_flat(cm_array *a, int64_t index, cm_stream s);

/* indices has a's ndim; a and indices broadcast except along axis. */
cm_array *cm_take_along_axis(cm_array *a, cm_array *indices, int axis, cm_stream s);
/* axis=None: along the flattened array (indices must be 1-d). */
cm_array *cm_take_along_axis_flat(cm_array *a, cm_array *indices, cm_stream s);
cm_array *cm_put_along_axis(cm_array *a, cm_array *indices, cm_array *values, int axis,
                            cm_stream s);
/* axis=None: along the flattened array, reshaped back to a's shape. */
cm_array *cm_put_along_axis_flat(cm_array *a, cm_array *indices, cm_array *values, cm_stream s);
cm_array *cm_scatter_add_axis(cm_array *a, cm_array *indices, cm_array *values, int axis,
                              cm_stream s);

/* mask (bool) covers a's leading axes exactly (0-d: every element); the
 * True entries, in row-major order, take value's elements in row-major
 * order.  value (cast to a's dtype) is broadcast as MLX does: with fewer
 * than (a.ndim - mask.ndim + 1) axes it is one window repeated for every
 * mask entry; with exactly that many, a stack of windows.  Too few
 * elements for the True entries is a ValueError at eval time. */
cm_array *cm_masked_scatter(cm_array *a, cm_array *mask, cm_array *value, cm_stream s);

/* slice_update whose window is combined with the update by op
 * (CM_SCATTER_NONE is cm_slice_update itself). */
cm_array *cm_slice_update_reduce(cm_array *src, cm_array *update, int nstart, const int32_t *start,
                                 int nstop, const int32_t *stop, int nstrides,
                                 const int32_t *strides, cm_scatter_op op, cm_stream s);

/* ValueError unless t is an integer dtype (bool and inexact are not):
 * "[op] Got indices with invalid dtype. Indices must be integral." */
int cm_check_index_dtype(const char *op, cm_dtype t);

#endif
