/* The Binary primitive: one descriptor for every elementwise op of two
 * inputs, with the op code in the parameters.  Inputs reach the kernel with
 * one shape (broadcast views) and one dtype (the op's compute type). */
#ifndef CMLX_PRIMITIVES_BINARY_H
#define CMLX_PRIMITIVES_BINARY_H

#include "ops/binary.h"
#include "primitives/primitive.h"

typedef struct cm_binary_params { cm_binary_op op; } cm_binary_params;
CM_PARAMS_ACCESSOR(cm_binary_params, cm_binary_params_of)
extern const cm_prim cm_prim_binary;
const char *cm_binary_op_name(cm_binary_op op); /* "Add", "FloorDivide", ... as MLX prints */

#endif
