/* RandomBits: counter-based random bits from Threefry-2x32 keys, MLX's
 * generator.  Its one input is the keys, uint32 of shape (..., 2) (one key
 * per leading index; the op builds it from a single (2,) key, vmap from a
 * batch of them); the output's leading axes are the keys' and each key
 * fills its own contiguous run of the output's bytes (out.size / num_keys
 * elements of `width` bytes).  The bit stream is MLX's, bit for bit: see
 * backend/cpu/random.c for how counters map to output words.
 *
 * No derivative (keys are integers, never on a differentiation path); the
 * vmap rule gives every key of a batch its own independent stream, as
 * MLX's RandomBits::vmap does. */
#ifndef CMLX_PRIMITIVES_RANDOM_H
#define CMLX_PRIMITIVES_RANDOM_H

#include "primitives/primitive.h"

typedef struct cm_random_bits_params {
  int32_t width; /* bytes per output element: 1, 2 or 4 */
} cm_random_bits_params;

extern const cm_prim cm_prim_random_bits;

/* The unsigned dtype of a width (1, 2, 4 bytes). */
static inline cm_dtype cm_random_bits_dtype(int width) {
  return width == 1 ? CM_UINT8 : width == 2 ? CM_UINT16 : CM_UINT32;
}

#endif
