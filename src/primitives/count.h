/* NumberOfElements (input: a, read for its shape only): a 0-d array of
 * dtype holding the number of elements of a over the axes in the mask, or
 * its reciprocal.  A shapeless trace builds it for mean and var (MLX's
 * number_of_elements), so that a replay counts the new shape rather than
 * reusing the traced count.  vmap shifts the axes past the batch axis; it
 * sits behind stop_gradient, so it has no derivatives. */
#ifndef CMLX_PRIMITIVES_COUNT_H
#define CMLX_PRIMITIVES_COUNT_H

#include "primitives/primitive.h"

typedef struct cm_count_params {
  uint64_t axes; /* bit i: axis i of a is counted */
  int32_t inverted;
  int32_t dtype;
} cm_count_params;
CM_PARAMS_ACCESSOR(cm_count_params, cm_count_params_of)

extern const cm_prim cm_prim_number_of_elements;

#endif
