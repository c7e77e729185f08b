/* The SVD primitive (MLX's SVD with compute_uv): one input, three
 * outputs U, S, Vt.  Only evaluation so far; its derivative and batching
 * rules come with the linalg family. */
#ifndef CMLX_PRIMITIVES_LINALG_H
#define CMLX_PRIMITIVES_LINALG_H

#include "primitives/primitive.h"

extern const cm_prim cm_prim_svd;

#endif
