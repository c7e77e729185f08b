/* Load: an array read from a file when it is evaluated (MLX's Load).  It
 * takes no inputs; its parameters hold a counted reader (io/stream.h), the
 * byte offset of the array's data and whether to swap each element's byte
 * order (a big-endian .npy).  A read that fails (a truncated file) is the
 * node's RuntimeError, raised where the array is evaluated. */
#ifndef CMLX_PRIMITIVES_LOAD_H
#define CMLX_PRIMITIVES_LOAD_H

#include "io/stream.h"
#include "primitives/primitive.h"

typedef struct cm_load_params {
  cm_reader *reader; /* one reference, released with the graph */
  uint64_t offset;
  uint64_t swap; /* 0 or 1 (a whole word: the block has no padding) */
} cm_load_params;
CM_PARAMS_ACCESSOR(cm_load_params, cm_load_params_of)

extern const cm_prim cm_prim_load;

#endif
