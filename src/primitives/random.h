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

/* The unit form (unit = 1, width 4, a float32 output) writes
 * min(float(w) / 2^32, upper) for each word w: MLX's uniform divides the
 * uint32 bits by float32(UINT32_MAX) = 2^32 and clamps them to the
 * largest value below 1 of the result type, two more passes over the
 * data that this form does while the words are in registers (the same
 * bits: the conversion rounds once and the scaling is exact). */
typedef struct cm_random_bits_params {
  int32_t width; /* bytes per output element: 1, 2 or 4 */
  int32_t unit;  /* 0: the raw bits; 1: the unit form */
  float upper;   /* the unit form's clamp */
} cm_random_bits_params;
CM_PARAMS_ACCESSOR(cm_random_bits_params, cm_random_bits_params_of)

extern const cm_prim cm_prim_random_bits;

/* The output dtype: float32 for the unit form, else unsigned of the
 * width (1, 2, 4 bytes). */
static inline cm_dtype cm_random_bits_dtype(const cm_random_bits_params *p) {
  if (p->unit) return CM_FLOAT32;
  return p->width == 1 ? CM_UINT8 : p->width == 2 ? CM_UINT16 : CM_UINT32;
}

#endif
