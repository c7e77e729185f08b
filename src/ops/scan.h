/* Cumulative scans: cumsum, cumprod, cummax, cummin, logcumsumexp.
 *
 * out[i] combines the elements up to i along the axis (reverse: from the
 * end down to i); inclusive=false leaves element i itself out, so the
 * first output is the op's identity (0, 1, the type's lowest / highest
 * value -- -inf / +inf for floats, -inf-infj / inf+infj for complex64 --
 * and -inf for logcumsumexp).
 *
 * Result dtypes (MLX 0.32):
 *   cumsum        bool -> int32; every other dtype keeps its own (int8 and
 *                 uint8 sums wrap around, as MLX's do)
 *   cumprod, cummax, cummin   the input's dtype (bool: and / or / and)
 *   logcumsumexp  integers and bool -> float32; inexact dtypes keep theirs
 * float16 and bfloat16 round to their type after every step, as MLX does.
 * cummax/cummin propagate NaN for real floats; complex64 compares
 * lexicographically (MLX's rule, under which a NaN does not stick).
 *
 * Axes: negative counts from the end; out of range is an IndexError
 * "[cumsum] Axis 2 is out of bounds for array with 2 dimensions.".  The
 * _flat variants are MLX's axis=None (flatten first; 0-d gives shape
 * (1,)).  mlx-c's mlx_cumsum(a, axis, reverse, inclusive) is cm_cumsum.
 * Python's dtype= argument of cumsum/cumprod is astype before the scan. */
#ifndef CMLX_OPS_SCAN_H
#define CMLX_OPS_SCAN_H

#include <stdbool.h>

#include "ops/common.h"
#include "ops/scan_ops.h"

/* The public op codes, in the table's order (ops/scan_ops.h). */
typedef enum cm_scan_op {
#define CM_X(CODE, ...) CM_SCAN_##CODE,
  CM_SCAN_OPS(CM_X)
#undef CM_X
  CM_SCAN_NUM_PUBLIC_OPS
} cm_scan_op;

cm_array *cm_scan(cm_scan_op op, cm_array *a, int axis, bool reverse, bool inclusive,
                  cm_stream s);

/* cm_cumsum, ..., and their axis=None forms cm_cumsum_flat, ... */
#define CM_X(CODE, name, ...)                                                                 \
  cm_array *cm_##name(cm_array *a, int axis, bool reverse, bool inclusive, cm_stream s); \
  cm_array *cm_##name##_flat(cm_array *a, bool reverse, bool inclusive, cm_stream s);
CM_SCAN_OPS(CM_X)
#undef CM_X

#endif
