/* The FFT primitive: MLX's FFT(axes, inverse, real).  One input (float32
 * for a forward real transform, complex64 otherwise) already cropped or
 * padded by the op constructor; the output is complex64, or float32 for
 * an inverse real transform, whose last transformed axis has the length
 * the caller asked for (the input has length/2 + 1 there).  Unnormalised:
 * the op constructor scales.
 *
 * Rules (MLX's, primitives/fft.c): jvp is the same transform of the
 * tangent; vjp is the adjoint transform, with the Hermitian mask of the
 * real transforms; vmap shifts the axes past the batch axis. */
#ifndef CMLX_PRIMITIVES_FFT_H
#define CMLX_PRIMITIVES_FFT_H

#include "primitives/primitive.h"

/* A variable-length block: the header and naxes entries of axes
 * (cm_fft_params_size bytes), in the order given (the real transform's
 * axis last).  Zeroed before filling. */
typedef struct cm_fft_params {
  int32_t naxes;
  uint8_t inverse, real, reserved[2];
  int32_t axes[CM_MAX_DIMS]; /* normalised, distinct */
} cm_fft_params;
CM_PARAMS_ACCESSOR_VAR(cm_fft_params, cm_fft_params_of, axes)
size_t cm_fft_params_size(const cm_params *p);

extern const cm_prim cm_prim_fft;

#endif
