/* The Select primitive (where): out = cond ? x : y, elementwise.  Inputs
 * reach the kernel broadcast to one shape, cond as bool and x, y in the
 * output dtype. */
#ifndef CMLX_PRIMITIVES_TERNARY_H
#define CMLX_PRIMITIVES_TERNARY_H

#include "ops/ternary.h"
#include "primitives/primitive.h"

extern const cm_prim cm_prim_select;

#endif
