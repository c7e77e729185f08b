/* Elementwise unary ops.  Most are one primitive (Unary) with an op code;
 * a few are compositions (positive, degrees, nan_to_num, ...), built from
 * other ops as the implementation sees fit.  Result dtypes follow MLX:
 * transcendental ops on integers/bool give float32, predicates give bool. */
#ifndef CMLX_OPS_UNARY_H
#define CMLX_OPS_UNARY_H

#include "ops/common.h"
#include "ops/unary_ops.h"

/* The op codes, in the table's order (ops/unary_ops.h). */
typedef enum cm_unary_op {
#define CM_X(CODE, ...) CM_UNARY_##CODE,
  CM_UNARY_OPS(CM_X)
#undef CM_X
  CM_UNARY_NUM_OPS
} cm_unary_op;

/* Generic entry: checks the dtype, casts as MLX does, builds the node. */
cm_array *cm_unary(cm_unary_op op, cm_array *a, cm_stream s);

/* cm_abs, cm_negative, ...: the rows whose ctor column is NAMED. */
#define CM_UNARY_DECLARE_NAMED(name) cm_array *cm_##name(cm_array *a, cm_stream s);
#define CM_UNARY_DECLARE_OWN(name)
#define CM_X(CODE, name, Name, out, checks, grad, ctor, ...) CM_UNARY_DECLARE_##ctor(name)
CM_UNARY_OPS(CM_X)
#undef CM_X

/* The OWN rows. */
cm_array *cm_round(cm_array *a, int decimals, cm_stream s);
/* nan_to_num: posinf/neginf default to the dtype's max/lowest when absent. */
cm_array *cm_nan_to_num(cm_array *a, float nan, bool has_posinf, float posinf, bool has_neginf,
                        float neginf, cm_stream s);

/* Not op codes: positive is the input itself; stop_gradient is identity in
 * value and blocks gradients (a StopGradient primitive). */
cm_array *cm_positive(cm_array *a, cm_stream s);
cm_array *cm_stop_gradient(cm_array *a, cm_stream s);
/* cm_astype is declared in ops/common.h. */

#endif
