/* mlx/c/fft.h: fast Fourier transforms.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_fft_fft(mlx_array *res, const mlx_array a, int n, int axis, mlx_fft_norm norm,
                const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_fft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                 size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_fftfreq(mlx_array* res, int n, double d, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_fftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                 size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_fftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                     const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_ifft(mlx_array *res, const mlx_array a, int n, int axis, mlx_fft_norm norm,
                 const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_ifft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                  size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_ifftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                  size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_ifftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                      const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_irfft(mlx_array *res, const mlx_array a, int n, int axis, mlx_fft_norm norm,
                  const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_irfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                   size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_irfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                   size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_rfft(mlx_array *res, const mlx_array a, int n, int axis, mlx_fft_norm norm,
                 const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_rfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                  size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_rfftfreq(mlx_array* res, int n, double d, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_fft_rfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes,
                  size_t axes_num, mlx_fft_norm norm, const mlx_stream s) {
  return capi_not_impl(__func__);
}
