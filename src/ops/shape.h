/* Shape and view operations: reshaping, axis order, broadcasting, slicing,
 * joining and splitting, padding, and the ops built on them (diag, trace,
 * tril/triu, kron, diff, outer, inner, meshgrid, windows).
 *
 * Reshape of row-contiguous (or otherwise compatible) data, transpose,
 * slicing (negative steps included), broadcasting, squeeze/expand_dims,
 * as_strided and diagonal are views: the result shares the input's buffer.
 * concatenate, pad, tile, repeat, roll and slice_update write new arrays.
 *
 * Conventions: inputs are borrowed, results are new references (NULL with
 * the error set).  A result may be the input itself (a new reference)
 * when the op changes nothing, as in MLX.  Shapes and index lists are
 * passed count first, as in the rest of the core.  Ops with several
 * results either fill a caller array of known length (broadcast_arrays,
 * meshgrid) or return a malloc'd list of new references in *outs / *nout,
 * freed with cm_array_list_free (transforms/autodiff.h) or by releasing
 * each entry and free()ing the list.
 *
 * mlx-c mapping (mlx_X -> cm_X unless listed):
 *   mlx_expand_dims(a, axis)            cm_expand_dims(a, 1, &axis)
 *   mlx_expand_dims_axes(a, ax, n)      cm_expand_dims(a, n, ax)
 *   mlx_squeeze(a)                      cm_squeeze_all(a)
 *   mlx_squeeze_axis / _axes            cm_squeeze(a, 1, &axis) / (a, n, ax)
 *   mlx_transpose(a) / _axes(a, ax, n)  cm_transpose(a, 0, NULL) / (a, n, ax)
 *   mlx_broadcast_arrays(vec)           cm_broadcast_arrays(ins, n, outs)
 *   mlx_concatenate(vec)                cm_concatenate_flat(arrays, n)
 *   mlx_concatenate_axis(vec, axis)     cm_concatenate(arrays, n, axis)
 *   mlx_stack(vec) / _axis              cm_stack(arrays, n, 0) / (.., axis)
 *   mlx_split(a, num, axis)             cm_split(a, num, axis, ...)
 *   mlx_split_sections(a, idx, n, ax)   cm_split_indices(a, n, idx, ax, ...)
 *   mlx_repeat(a, r) / _axis            cm_repeat_flat(a, r) / cm_repeat(a, r, axis)
 *   mlx_roll(a, sh, n)                  cm_roll(a, n, sh, 0, NULL)
 *   mlx_roll_axis(a, sh, n, axis)       cm_roll_axis(a, n, sh, axis)
 *   mlx_roll_axes(a, sh, n, ax, na)     cm_roll(a, n, sh, na, ax)
 *   mlx_slice_dynamic                   cm_slice_dynamic
 *   mlx_slice_update_dynamic            cm_slice_update_dynamic
 *   mlx_slice_update_add/max/min/prod   cm_slice_update_reduce (ops/indexing.h)
 *   mlx_pad(a, ax, n, lo, nl, hi, nh, v, mode)   cm_pad(a, n, ax, nl, lo, nh, hi, v, mode)
 *   mlx_pad_symmetric(a, w, v, mode)    cm_pad_symmetric(a, w, v, mode)
 *   mlx_trace(a, off, a1, a2, dtype)    cm_trace(a, off, a1, a2, dtype)
 *   mlx_meshgrid(vec, sparse, indexing) cm_meshgrid(arrays, n, sparse, indexing, outs)
 *   mlx_atleast_1d/2d/3d, mlx_flatten, mlx_unflatten, mlx_reshape,
 *   mlx_swapaxes, mlx_moveaxis, mlx_as_strided, mlx_view, mlx_slice,
 *   mlx_slice_update, mlx_tile, mlx_diag, mlx_diagonal, mlx_tril, mlx_triu,
 *   mlx_kron, mlx_outer, mlx_inner, mlx_bartlett, mlx_blackman,
 *   mlx_hamming, mlx_hanning: same name, arguments count-first.
 * Python-only: unstack, diff, broadcast_shapes (cm_broadcast_shapes in
 * ops/common.h). */
#ifndef CMLX_OPS_SHAPE_H
#define CMLX_OPS_SHAPE_H

#include <stdbool.h>

#include "ops/common.h"

/* Normalise a possibly negative axis into [0, ndim); IndexError "[op] Axis
 * 3 is out of bounds for array with 2 dimensions." otherwise. */
int cm_normalize_axis(const char *op, int axis, int ndim, int *out);

/* ---- reshaping ---- */
/* One entry may be -1 (inferred). */
cm_array *cm_reshape(cm_array *a, int ndim, const int32_t *shape, cm_stream s);
/* The shape that reshaping size elements to shape (one entry may be -1)
 * gives, in out; 0, or -1 with MLX's ValueError. */
int cm_reshape_infer(int64_t size, int ndim, const int32_t *shape, int32_t *out);
/* Merge axes start..end (negative counts from the end; clamped as MLX). */
cm_array *cm_flatten(cm_array *a, int start_axis, int end_axis, cm_stream s);
/* Split axis into shape (one entry may be -1). */
cm_array *cm_unflatten(cm_array *a, int axis, int ndim, const int32_t *shape, cm_stream s);
cm_array *cm_squeeze(cm_array *a, int naxes, const int *axes, cm_stream s);
cm_array *cm_squeeze_all(cm_array *a, cm_stream s); /* every size-1 axis */
/* Axes index the output (so -1 appends). */
cm_array *cm_expand_dims(cm_array *a, int naxes, const int *axes, cm_stream s);
cm_array *cm_atleast_1d(cm_array *a, cm_stream s);
cm_array *cm_atleast_2d(cm_array *a, cm_stream s);
cm_array *cm_atleast_3d(cm_array *a, cm_stream s);

/* ---- axis order ---- */
/* axes == NULL (naxes ignored): reverse the axes. */
cm_array *cm_transpose(cm_array *a, int naxes, const int *axes, cm_stream s);
cm_array *cm_permute_dims(cm_array *a, int naxes, const int *axes, cm_stream s);
cm_array *cm_swapaxes(cm_array *a, int axis1, int axis2, cm_stream s);
cm_array *cm_moveaxis(cm_array *a, int source, int destination, cm_stream s);

/* ---- broadcasting ---- */
/* outs[i] (n entries) = ins[i] broadcast to the common shape. */
int cm_broadcast_arrays(cm_array *const *ins, int n, cm_array **outs, cm_stream s);

/* ---- views ---- */
/* shape/strides over a's elements in row-major order, starting at element
 * offset.  A view that would read outside a is a ValueError (MLX reads
 * whatever memory is there). */
cm_array *cm_as_strided(cm_array *a, int ndim, const int32_t *shape, int nstrides,
                        const int64_t *strides, int64_t offset, cm_stream s);
/* Reinterpret the bytes as dtype; the last axis scales by the size ratio. */
cm_array *cm_view(cm_array *a, cm_dtype dtype, cm_stream s);
cm_array *cm_diagonal(cm_array *a, int offset, int axis1, int axis2, cm_stream s);
/* 1-d: a square matrix with a on diagonal k; 2-d: diagonal k. */
cm_array *cm_diag(cm_array *a, int k, cm_stream s);

/* ---- slicing ---- */
/* NumPy slicing a[start:stop:step] per axis (negative indices count from
 * the end, out-of-range ones clamp); every list has ndim entries, except
 * that nstrides == 0 means step 1 everywhere. */
cm_array *cm_slice(cm_array *a, int nstart, const int32_t *start, int nstop, const int32_t *stop,
                   int nstrides, const int32_t *strides, cm_stream s);
/* a window of shape slice_size (ndim entries) starting, on axes[i], at
 * start[i] (an integer array read at eval time; out-of-range starts are
 * clamped so the window fits). */
cm_array *cm_slice_dynamic(cm_array *a, cm_array *start, int naxes, const int *axes, int nsize,
                           const int32_t *slice_size, cm_stream s);
/* src with the window a[start:stop:step] replaced by update (cast to
 * src's dtype, broadcast to the window). */
cm_array *cm_slice_update(cm_array *src, cm_array *update, int nstart, const int32_t *start,
                          int nstop, const int32_t *stop, int nstrides, const int32_t *strides,
                          cm_stream s);
cm_array *cm_slice_update_dynamic(cm_array *src, cm_array *update, cm_array *start, int naxes,
                                  const int *axes, cm_stream s);

/* ---- joining and splitting ---- */
/* Inputs are promoted to a common dtype. */
cm_array *cm_concatenate(cm_array *const *arrays, int n, int axis, cm_stream s);
cm_array *cm_concatenate_flat(cm_array *const *arrays, int n, cm_stream s); /* axis=None */
cm_array *cm_stack(cm_array *const *arrays, int n, int axis, cm_stream s);
int cm_unstack(cm_array *a, int axis, cm_array ***outs, int *nout, cm_stream s);
/* num_splits equal parts (views). */
int cm_split(cm_array *a, int num_splits, int axis, cm_array ***outs, int *nout, cm_stream s);
/* Parts between the given indices (n + 1 views, NumPy's rules). */
int cm_split_indices(cm_array *a, int n, const int32_t *indices, int axis, cm_array ***outs,
                     int *nout, cm_stream s);
/* reps shorter than ndim are padded with leading 1s, and vice versa. */
cm_array *cm_tile(cm_array *a, int nreps, const int32_t *reps, cm_stream s);
cm_array *cm_repeat(cm_array *a, int repeats, int axis, cm_stream s);
cm_array *cm_repeat_flat(cm_array *a, int repeats, cm_stream s); /* axis=None */
/* Pad axes[i] by low[i] before and high[i] after.  mode: "constant"
 * (pad_value, a scalar; NULL means 0), "edge", "reflect", "symmetric". */
cm_array *cm_pad(cm_array *a, int naxes, const int *axes, int nlow, const int32_t *low, int nhigh,
                 const int32_t *high, cm_array *pad_value, const char *mode, cm_stream s);
/* The same width before and after on every axis. */
cm_array *cm_pad_symmetric(cm_array *a, int pad_width, cm_array *pad_value, const char *mode,
                           cm_stream s);
/* axes == NULL: roll the flattened array by the sum of the shifts.  Else
 * shift[i] rolls axes[i] (extra shifts are ignored, as in MLX). */
cm_array *cm_roll(cm_array *a, int nshift, const int32_t *shift, int naxes, const int *axes,
                  cm_stream s);
/* Roll one axis by the sum of the shifts. */
cm_array *cm_roll_axis(cm_array *a, int nshift, const int32_t *shift, int axis, cm_stream s);
/* outs[i] (n entries); indexing "xy" (NULL) or "ij". */
int cm_meshgrid(cm_array *const *arrays, int n, bool sparse, const char *indexing,
                cm_array **outs, cm_stream s);

/* ---- arithmetic on shapes ---- */
cm_array *cm_tril(cm_array *x, int k, cm_stream s);
cm_array *cm_triu(cm_array *x, int k, cm_stream s);
cm_array *cm_kron(cm_array *a, cm_array *b, cm_stream s);
/* n-th discrete difference along axis (bool: not_equal). */
cm_array *cm_diff(cm_array *a, int n, int axis, cm_stream s);
cm_array *cm_outer(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_inner(cm_array *a, cm_array *b, cm_stream s);
/* Sum of diagonal `offset`, cast to dtype first (-1: a's dtype); the sum's
 * own promotion applies (int8 -> int32, ...). */
cm_array *cm_trace(cm_array *a, int offset, int axis1, int axis2, int dtype, cm_stream s);

/* ---- window functions (float32, length max(m, 0)) ---- */
cm_array *cm_bartlett(int m, cm_stream s);
cm_array *cm_blackman(int m, cm_stream s);
cm_array *cm_hamming(int m, cm_stream s);
cm_array *cm_hanning(int m, cm_stream s);

#endif
