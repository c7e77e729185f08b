/* Primitives that make arrays from nothing: Arange, Linspace, Eye, Tri.
 * They take no inputs; their parameters fully describe the output. */
#ifndef CMLX_PRIMITIVES_CREATION_H
#define CMLX_PRIMITIVES_CREATION_H

#include "primitives/primitive.h"

/* Arange: element i is start + i * step in the output dtype.  The kernel
 * derives the dtype's own start/step (MLX: T(start), T(start + step) -
 * T(start)); integer outputs are computed in 64-bit integers so large int64
 * ranges stay exact. */
typedef struct cm_arange_params {
  double start;
  double step;
} cm_arange_params;
CM_PARAMS_ACCESSOR(cm_arange_params, cm_arange_params_of)

/* Linspace: num evenly spaced values, start and stop included exactly. */
typedef struct cm_linspace_params {
  double start;
  double stop;
} cm_linspace_params;

/* Eye (ones where col - row == k) and Tri (ones where col - row <= k) over a
 * 2-D output. */
typedef struct cm_band_params {
  int k;
} cm_band_params;

extern const cm_prim cm_prim_arange;
extern const cm_prim cm_prim_linspace;
extern const cm_prim cm_prim_eye;
extern const cm_prim cm_prim_tri;

#endif
