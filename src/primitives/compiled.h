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
} cm_compiled_params;

extern const cm_prim cm_prim_compiled;

#endif
