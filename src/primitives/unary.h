/* The Unary primitive: one descriptor for every elementwise one-input op,
 * with the op code (and, for the few ops that need them, constants) in the
 * parameter block.  StopGradient is its own primitive: it shares its
 * input's buffer and the transforms treat it as a wall for gradients. */
#ifndef CMLX_PRIMITIVES_UNARY_H
#define CMLX_PRIMITIVES_UNARY_H

#include "ops/unary.h"
#include "primitives/primitive.h"

/* The whole struct is zeroed before filling so that two nodes with the same
 * op and constants compare equal bytewise (compile merges them).
 * Derivative rules the transforms need for the added op codes:
 *   ISFINITE, ROUND_DECIMALS: zero (like Round / the predicates);
 *   DEGREES, RADIANS: cotangent times the same constant;
 *   NAN_TO_NUM: cotangent where the input is finite, zero elsewhere. */
typedef struct cm_unary_params {
  cm_unary_op op;
  /* ROUND_DECIMALS: MLX's float constants 10^d and 1/10^d (rounded to the
   * array's dtype inside the kernel, as MLX's scalar arrays are). */
  float scale, inv_scale;
  /* NAN_TO_NUM: replacement values (defaults already resolved). */
  float nan, posinf, neginf;
  int decimals;
} cm_unary_params;
CM_PARAMS_ACCESSOR(cm_unary_params, cm_unary_params_of)

extern const cm_prim cm_prim_unary;
extern const cm_prim cm_prim_stop_gradient;
const char *cm_unary_op_name(cm_unary_op op); /* "Exp" */

#endif
