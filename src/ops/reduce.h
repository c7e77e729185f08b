/* Reductions: sum, prod, max, min, all, any, argmax, argmin, and the
 * compositions built on them (mean, var, std, logsumexp, softmax,
 * count_nonzero, median, isclose, allclose, array_equal).
 *
 * Which axes to reduce is one value, a cm_axes, so every op has one
 * signature that serves all three mlx-c forms directly:
 *
 *   mlx_sum(res, a, keepdims, s)              cm_sum(a, CM_AXES_ALL, keepdims, s)
 *   mlx_sum_axis(res, a, axis, keepdims, s)   cm_sum(a, CM_AXIS(axis), keepdims, s)
 *   mlx_sum_axes(res, a, ax, n, keepdims, s)  cm_sum(a, cm_axes_list(ax, n), keepdims, s)
 *
 * Axes may be negative (counted from the end) and in any order; a list
 * naming one axis twice is a ValueError ("Duplicate axes detected in
 * reduction."), an axis out of range an IndexError ("Invalid axis 3 for
 * array with 2 dimensions.").  An empty list reduces nothing: sum, prod,
 * max and min then return a itself (same dtype, as MLX does), all/any a
 * cast to bool.  keepdims leaves each reduced axis in place with size 1.
 *
 * Result dtypes (MLX 0.32):
 *   sum, prod     bool, int8, int16, int32 -> int32; uint8, uint16, uint32
 *                 -> uint32; 64-bit ints, floats and complex64 keep theirs
 *                 (integer sums wrap around on overflow)
 *   max, min      the input dtype; NaN wins (complex: NaN in either part
 *                 gives NaN+0j); an empty reduced axis is a ValueError
 *   all, any      bool (NaN counts as true); empty: true / false
 *   argmax/argmin uint32, the first occurrence (a NaN counts as the max and
 *                 as the min, the first NaN wins)
 *   mean, var, std, logsumexp, median, softmax  integers and bool -> float32,
 *                 inexact dtypes keep theirs (var/std of complex64 -> float32)
 *   count_nonzero int32
 * Floating sums accumulate in float32 (halves) or their own type, blockwise
 * with a fixed split, so a result is the same whatever the thread count.
 *
 * Where MLX 0.32's own behaviour is an accident of its code path, cmlx
 * picks the consistent rule: complex max/min with a NaN give NaN+0j and
 * argmax/argmin stop at the first complex NaN (MLX's answer depends on
 * where the NaN sits); logsumexp over several axes computes in the float
 * type (MLX subtracts in unsigned integers and overflows to inf); median
 * over an empty axis list returns the input as float (MLX raises a
 * [flatten] error); argmax of a 0-d array with keepdims works. */
#ifndef CMLX_OPS_REDUCE_H
#define CMLX_OPS_REDUCE_H

#include <stdbool.h>

#include "ops/common.h"
#include "ops/reduce_ops.h"

/* The axes to reduce: every axis (all), or the n axes listed. */
typedef struct cm_axes {
  const int *axes; /* borrowed; may be NULL when n == 0 */
  int n;
  bool all; /* reduce every axis; axes and n are ignored */
} cm_axes;

#define CM_AXES_ALL ((cm_axes){NULL, 0, true})
/* One axis (the compound literal lives as long as the enclosing block). */
#define CM_AXIS(axis) ((cm_axes){(const int[1]){(axis)}, 1, false})
static inline cm_axes cm_axes_list(const int *axes, int n) { return (cm_axes){axes, n, false}; }

/* The op codes, in the table's order (ops/reduce_ops.h). */
typedef enum cm_reduce_op {
#define CM_X(CODE, ...) CM_REDUCE_##CODE,
  CM_REDUCE_OPS(CM_X)
#undef CM_X
  CM_REDUCE_NUM_OPS
} cm_reduce_op;

/* Generic entry for the primitive reductions. */
cm_array *cm_reduce(cm_reduce_op op, cm_array *a, cm_axes axes, bool keepdims, cm_stream s);

/* cm_sum, cm_prod, cm_max, cm_min, cm_all, cm_any, cm_argmax, cm_argmin.
 * argmax/argmin take every axis (the index into the flattened array) or
 * exactly one axis, as MLX does; more is a ValueError.  Zero-size input is
 * a ValueError. */
#define CM_X(CODE, name, ...) \
  cm_array *cm_##name(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);
CM_REDUCE_OPS(CM_X)
#undef CM_X

/* mean = sum * (1/n) in the float result type (n = 0 gives NaN). */
cm_array *cm_mean(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);
/* var = sum(|a - mean|^2) / max(n - ddof, 0); std = sqrt(var). */
cm_array *cm_var(cm_array *a, cm_axes axes, bool keepdims, int ddof, cm_stream s);
cm_array *cm_std(cm_array *a, cm_axes axes, bool keepdims, int ddof, cm_stream s);
/* log(sum(exp(a))) computed stably; +-inf maxima pass through; zero-size
 * input is a ValueError. */
cm_array *cm_logsumexp(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);
/* exp(a - max) / sum(exp(a - max)) over the axes; precise computes half
 * types in float32. */
cm_array *cm_softmax(cm_array *a, cm_axes axes, bool precise, cm_stream s);
cm_array *cm_count_nonzero(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);
/* The middle value (mean of the two middle values for an even count) of
 * the elements along the axes; NaN if any is NaN. */
cm_array *cm_median(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);

/* |a - b| <= atol + rtol * |b| elementwise (broadcast), with equal
 * infinities close and, when equal_nan, NaN close to NaN. */
cm_array *cm_isclose(cm_array *a, cm_array *b, double rtol, double atol, bool equal_nan,
                     cm_stream s);
/* all(isclose(...)): a 0-d bool array. */
cm_array *cm_allclose(cm_array *a, cm_array *b, double rtol, double atol, bool equal_nan,
                      cm_stream s);
/* Same shape and equal values (compared in the promoted dtype): a 0-d
 * bool; false, not an error, when the shapes differ. */
cm_array *cm_array_equal(cm_array *a, cm_array *b, bool equal_nan, cm_stream s);

/* ---- for compositions and transform rules ---- */
/* Resolve axes into a bit mask (bit i: axis i is reduced).  errop NULL
 * gives the generic messages; otherwise "[errop] axis 3 is out of bounds
 * for array with 2 dimensions." as mean/median report it. */
int cm_axes_mask(const char *errop, int ndim, cm_axes axes, uint64_t *mask);
/* cm_reduce with the axes already resolved. */
cm_array *cm_reduce_mask(cm_reduce_op op, cm_array *a, uint64_t mask, bool keepdims,
                         cm_stream s);
/* The shape a reduction over mask leaves; returns its ndim. */
int cm_reduced_shape(const cm_array *a, uint64_t mask, bool keepdims, int32_t *shape);
/* Number of elements a reduction over mask combines per output. */
int64_t cm_reduced_count(const cm_array *a, uint64_t mask);
/* The fused last-axis forms (a floating, not complex): softmax over the
 * last axis, and logsumexp over it (keepdims as usual). */
cm_array *cm_softmax_last(cm_array *a, cm_stream s);
cm_array *cm_logsumexp_last(cm_array *a, bool keepdims, cm_stream s);
/* cm_median with the axes already resolved (no axes: a as float). */
cm_array *cm_median_mask(cm_array *a, uint64_t mask, bool keepdims, cm_stream s);

#endif
