/* mlx/c/fft.h: fast Fourier transforms over ops/fft.h.  As in mlx-c, the
 * n-d functions always pass their sizes (n, n_num) and axes: sizes and
 * axes of different lengths are MLX's ValueError. */
#include "ops/fft.h"
#include "capi/capi.h"

_Static_assert((int)MLX_FFT_NORM_BACKWARD == (int)CM_FFT_NORM_BACKWARD &&
                   (int)MLX_FFT_NORM_ORTHO == (int)CM_FFT_NORM_ORTHO &&
                   (int)MLX_FFT_NORM_FORWARD == (int)CM_FFT_NORM_FORWARD,
               "mlx_fft_norm and cm_fft_norm must agree");

static int one_axis(const char *fn, mlx_array *res, const mlx_array a, int n, int axis,
                    mlx_fft_norm norm, bool real, bool inverse, mlx_stream s) {
  if (capi_op(fn, res, s) || capi_need(fn, a)) return 1;
  return capi_set(
      res, cm_fft_1d(capi_arr(a), true, n, axis, real, inverse, (cm_fft_norm)norm, capi_stream(s)));
}

static int many_axes(const char *fn, mlx_array *res, const mlx_array a, const int *n, size_t n_num,
                     const int *axes, size_t axes_num, mlx_fft_norm norm, bool real, bool inverse,
                     mlx_stream s) {
  int nn, na;
  if (capi_op(fn, res, s) || capi_need(fn, a) || capi_list(fn, n, n_num, &nn) ||
      capi_list(fn, axes, axes_num, &na))
    return 1;
  static const int none[1] = {0};
  return capi_set(res, cm_fft_nd(capi_arr(a), nn, n ? (const int32_t *)n : (const int32_t *)none,
                                 na, axes ? axes : none, real, inverse, (cm_fft_norm)norm, NULL,
                                 capi_stream(s)));
}

#define ONE_AXIS(name, real, inverse)                                                       \
  int mlx_fft_##name(mlx_array *res, const mlx_array a, int n, int axis, mlx_fft_norm norm, \
                     const mlx_stream s) {                                                  \
    return one_axis(#name, res, a, n, axis, norm, real, inverse, s);                        \
  }
#define MANY_AXES(name, real, inverse)                                                          \
  int mlx_fft_##name(mlx_array *res, const mlx_array a, const int *n, size_t n_num,             \
                     const int *axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s) { \
    return many_axes(#name, res, a, n, n_num, axes, axes_num, norm, real, inverse, s);          \
  }

ONE_AXIS(fft, false, false)
ONE_AXIS(ifft, false, true)
ONE_AXIS(rfft, true, false)
ONE_AXIS(irfft, true, true)
MANY_AXES(fft2, false, false)
MANY_AXES(ifft2, false, true)
MANY_AXES(rfft2, true, false)
MANY_AXES(irfft2, true, true)
MANY_AXES(fftn, false, false)
MANY_AXES(ifftn, false, true)
MANY_AXES(rfftn, true, false)
MANY_AXES(irfftn, true, true)

int mlx_fft_fftfreq(mlx_array *res, int n, double d, const mlx_stream s) {
  if (capi_op("fftfreq", res, s)) return 1;
  return capi_set(res, cm_fftfreq(n, d, capi_stream(s)));
}

int mlx_fft_rfftfreq(mlx_array *res, int n, double d, const mlx_stream s) {
  if (capi_op("rfftfreq", res, s)) return 1;
  return capi_set(res, cm_rfftfreq(n, d, capi_stream(s)));
}

typedef cm_array *(*shift_fn)(cm_array *, int, const int *, cm_stream);

static int shift(const char *fn, shift_fn f, mlx_array *res, const mlx_array a, const int *axes,
                 size_t axes_num, mlx_stream s) {
  int na;
  if (capi_op(fn, res, s) || capi_need(fn, a) || capi_list(fn, axes, axes_num, &na)) return 1;
  static const int none[1] = {0};
  return capi_set(res, f(capi_arr(a), na, axes ? axes : none, capi_stream(s)));
}

int mlx_fft_fftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                     const mlx_stream s) {
  return shift("fftshift", cm_fftshift, res, a, axes, axes_num, s);
}

int mlx_fft_ifftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                      const mlx_stream s) {
  return shift("ifftshift", cm_ifftshift, res, a, axes, axes_num, s);
}
