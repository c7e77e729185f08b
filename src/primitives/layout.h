/* Primitives that move data without arithmetic: Broadcast (a view), AsType
 * and Copy (a materialising, converting copy), Full (fill a new array from
 * a broadcast value). */
#ifndef CMLX_PRIMITIVES_LAYOUT_H
#define CMLX_PRIMITIVES_LAYOUT_H

#include "primitives/primitive.h"

extern const cm_prim cm_prim_broadcast;
/* BroadcastAxes (inputs: x, then the arrays it is broadcast against,
 * behind stop_gradient; what a shapeless trace builds for matmul's batch
 * axes): x broadcast against the others on every axis but the last
 * nignore, which keep x's sizes. */
extern const cm_prim cm_prim_broadcast_axes;
typedef struct cm_broadcast_axes_params {
  int32_t nignore;
} cm_broadcast_axes_params;
CM_PARAMS_ACCESSOR(cm_broadcast_axes_params, cm_broadcast_axes_params_of)
extern const cm_prim cm_prim_astype;
extern const cm_prim cm_prim_copy;
extern const cm_prim cm_prim_full;
/* Identity shares its input's data; the transforms use it to mark the
 * inputs of a traced function. */
extern const cm_prim cm_prim_identity;

/* Depends: outputs share the first inputs' data; the rest are inputs only
 * so that they are computed first. */
extern const cm_prim cm_prim_depends;

#endif
