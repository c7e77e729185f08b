/* Compiled: one node computing a fused region of elementwise nodes with a
 * generated kernel (transforms/fuse.c builds them inside mx.compile).  Its
 * outputs (one per region value used outside the region) are siblings.
 * It has no transform rules: transforms of a compiled function trace the
 * function itself, so they never meet a Compiled node (as in MLX). */
#ifndef CMLX_PRIMITIVES_COMPILED_H
#define CMLX_PRIMITIVES_COMPILED_H

#include "primitives/primitive.h"

typedef struct cm_fused_kernel cm_fused_kernel;

typedef struct cm_compiled_params {
  const cm_fused_kernel *kernel; /* process-wide, never freed */
  /* MLX's name for the node: "Compiled" then the region's primitives in
   * order ("CompiledBroadcastMultiplyAdd"), cut short when longer */
  char label[160];
  /* A region feeding a reduction (fuse.c): its last output is not the
   * root's values but their reduction, computed in the same pass
   * (backend/cpu/fused_reduce.c).  red_op is CM_REDUCE_* + 1 (0: none);
   * the reduced axes are the trailing ones of full_shape, the root's
   * shape; red_dtype is the root's dtype (the reduction's input). */
  int32_t red_op;
  int32_t red_dtype;
  int32_t full_ndim;
  int32_t reserved;
  int32_t full_shape[CM_MAX_DIMS];
} cm_compiled_params;

extern const cm_prim cm_prim_compiled;

#endif
