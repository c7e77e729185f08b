/* The reduction primitives.
 *
 * Reduce(op)    sum, prod, max, min, and (all), or (any) over a set of axes
 * ArgReduce(op) argmax, argmin: the row-major index of the first extreme
 *               element within the reduced axes (any number of them: the
 *               public op allows one or all, the max/min jvp uses more)
 * Median        the middle value over a set of axes (input already float)
 * Softmax       softmax over the last axis, fused (input float)
 * LogSumExp     logsumexp over the last axis, fused (input float)
 *
 * All three share one parameter block: the op, the reduced axes as a bit
 * mask (CM_MAX_DIMS is 64) and keepdims.  The output is row-contiguous
 * over the kept axes, so keepdims only changes the shape, not the data. */
#ifndef CMLX_PRIMITIVES_REDUCE_H
#define CMLX_PRIMITIVES_REDUCE_H

#include "ops/reduce.h"
#include "primitives/primitive.h"

typedef struct cm_reduce_params {
  cm_reduce_op op;
  bool keepdims;
  uint64_t axes; /* bit i: axis i of the input is reduced */
} cm_reduce_params;
CM_PARAMS_ACCESSOR(cm_reduce_params, cm_reduce_params_of)

extern const cm_prim cm_prim_reduce;
extern const cm_prim cm_prim_arg_reduce;
extern const cm_prim cm_prim_median;
extern const cm_prim cm_prim_softmax;   /* params: keepdims unused, axes = last */
extern const cm_prim cm_prim_logsumexp; /* params: keepdims, axes = last */

const char *cm_reduce_op_name(cm_reduce_op op); /* "Sum", "ArgMax", ... */
/* The dtype Reduce(op) gives for input dtype t (not for the arg ops). */
cm_dtype cm_reduce_result_type(cm_reduce_op op, cm_dtype t);

#endif
