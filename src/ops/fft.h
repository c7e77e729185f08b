/* mx.fft: discrete Fourier transforms (MLX 0.32's mlx/fft.cpp).
 *
 * Every transform is one FFT node (primitives/fft.h) on an input cropped
 * or zero-padded to the requested sizes, then scaled for the norm:
 *   complex transforms (fft, ifft, fftn, ...)  any dtype -> complex64
 *   rfft*   the input as float32 (complex: its real part) -> complex64,
 *           the last axis n/2 + 1 long
 *   irfft*  complex64 -> float32, the last axis n long (input cropped or
 *           padded to n/2 + 1); by default n = 2 * (m - 1)
 * norm: backward (the inverse divides by n), ortho (both by sqrt(n)),
 * forward (the forward divides by n); the scale is a float32 or complex64
 * scalar multiply, as in MLX.
 *
 * Errors (MLX 0.32.4's, ValueError unless said): "[fftn] Requires array
 * with at least one dimension.", "[fftn] Shape and axes have different
 * sizes.", "[fftn] Duplicated axis received (0,0)", "[fftn] Invalid FFT
 * output size requested (0,4)"; IndexError "[fftn] Invalid axis received
 * for array with 2 dimensions." (with sizes given), and IndexError for an
 * axis out of range where the size is read from the shape (MLX's message
 * there is "SmallVector out of range."). */
#ifndef CMLX_OPS_FFT_H
#define CMLX_OPS_FFT_H

#include <stdbool.h>

#include "ops/common.h"

/* The same values as mlx-c's mlx_fft_norm. */
typedef enum cm_fft_norm {
  CM_FFT_NORM_BACKWARD = 0,
  CM_FFT_NORM_ORTHO = 1,
  CM_FFT_NORM_FORWARD = 2,
} cm_fft_norm;

/* "backward", "ortho" or "forward"; else MLX's ValueError "[name] Invalid
 * norm. Expected one of {'backward', 'ortho', 'forward'}." */
int cm_fft_norm_parse(const char *name, const char *str, cm_fft_norm *out);

/* The n-d transform of a over axes (naxes entries; axes NULL: every axis,
 * which needs n NULL) with sizes n (nn entries; NULL: a's sizes, for
 * irfft the last 2 * (m - 1)).  name names the function in the message
 * for n without axes ("fft2", ...). */
cm_array *cm_fft_nd(cm_array *a, int nn, const int32_t *n, int naxes, const int *axes, bool real,
                    bool inverse, cm_fft_norm norm, const char *name, cm_stream s);
/* One axis; has_n false: a's size there (irfft: 2 * (m - 1)). */
cm_array *cm_fft_1d(cm_array *a, bool has_n, int n, int axis, bool real, bool inverse,
                    cm_fft_norm norm, cm_stream s);

/* The sample frequencies (float32): fftfreq n values, rfftfreq n/2 + 1;
 * n > 0 and d != 0 (ValueError "[fftfreq] `n` must be greater than 0."). */
cm_array *cm_fftfreq(int n, double d, cm_stream s);
cm_array *cm_rfftfreq(int n, double d, cm_stream s);

/* a rolled by size/2 (ifftshift: back by size/2) on axes (NULL: every
 * axis; an empty list or a 0-d array: a itself).  A bad axis is MLX's
 * newer ValueError "[fftshift] Invalid axis 2 for array with 2
 * dimensions." (MLX 0.32.4 raises it as an IndexError). */
/* stft / istft (ops/fft_stft.c, MLX 0.32.4's mx.fft.stft / istft): hop,
 * win_length, n_fft (istft) and length (istft) < 0 are None (MLX's
 * defaults: n_fft / 4, n_fft, inferred from the frequencies, untrimmed);
 * window NULL is ones of win_length; onesided < 0 is None (stft: true
 * unless x is complex64; istft: true).  pad_mode is mx.pad's. */
cm_array *cm_stft(cm_array *x, int n_fft, int hop, int win_length, cm_array *window, bool center,
                  const char *pad_mode, cm_fft_norm norm, int onesided, cm_stream s);
cm_array *cm_istft(cm_array *z, int n_fft, int hop, int win_length, cm_array *window, bool center,
                   cm_fft_norm norm, int onesided, int length, cm_stream s);

cm_array *cm_fftshift(cm_array *a, int naxes, const int *axes, cm_stream s);
cm_array *cm_ifftshift(cm_array *a, int naxes, const int *axes, cm_stream s);

#endif
