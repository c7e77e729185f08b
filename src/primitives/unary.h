#ifndef CMLX_PRIMITIVES_UNARY_H
#define CMLX_PRIMITIVES_UNARY_H

#include "ops/unary.h"
#include "primitives/primitive.h"

typedef struct cm_unary_params { cm_unary_op op; } cm_unary_params;
extern const cm_prim cm_prim_unary;
const char *cm_unary_op_name(cm_unary_op op); /* "Exp" */

#endif
