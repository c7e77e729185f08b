/* Ops MLX adds for the Python array API standard, each composed from other
 * ops as MLX composes it: trunc, flip, matrix_transpose, vecdot, minmax.
 * (The API's other names are aliases the front doors bind: acos for
 * arccos, pow for power, ...) */
#ifndef CMLX_OPS_ARRAY_API_H
#define CMLX_OPS_ARRAY_API_H

#include "ops/reduce.h"

/* Rounding towards zero: where(a < 0, ceil(a), floor(a)); integers and
 * bool come back as they are; complex is MLX's ValueError. */
cm_array *cm_trunc(cm_array *a, cm_stream s);
/* Reverse the order along each of the axes (all axes when naxes < 0):
 * a view through a slice with step -1. */
cm_array *cm_flip(cm_array *a, int naxes, const int *axes, cm_stream s);
/* Swap the last two axes (at least two dimensions). */
cm_array *cm_matrix_transpose(cm_array *a, cm_stream s);
/* sum(conj(a) * b) over axis, which must name the same axis of both (MLX
 * does not line up arrays of different ranks). */
cm_array *cm_vecdot(cm_array *a, cm_array *b, int axis, cm_stream s);
/* min and max over the same axes, both new references. */
int cm_minmax(cm_array *a, cm_axes axes, bool keepdims, cm_array **min, cm_array **max,
              cm_stream s);

#endif
