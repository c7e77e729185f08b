/* C API: mlx/c/fft.h and mlx_hadamard_transform.  Expected values are
 * hand-computed (the DFT of small vectors) or MLX 0.32.4's printed
 * results for the same calls. */
#include "capi_test.h"

static mlx_stream S;

static mlx_array vec(const float *v, int n) { return mlx_array_new_data(v, &n, 1, MLX_FLOAT32); }

static void test_one_axis(void) {
  const float x[] = {1, 2, 3, 4};
  mlx_array a = vec(x, 4), r = mlx_array_new();
  EXPECT(mlx_fft_fft(&r_, a, 4, 0, MLX_FFT_NORM_BACKWARD, S),
         "array([10+0j, -2+2j, -2+0j, -2-2j], dtype=complex64)");
  EXPECT(mlx_fft_fft(&r_, a, 2, -1, MLX_FFT_NORM_BACKWARD, S),
         "array([3+0j, -1+0j], dtype=complex64)");
  EXPECT(mlx_fft_rfft(&r_, a, 4, 0, MLX_FFT_NORM_FORWARD, S),
         "array([2.5+0j, -0.5+0.5j, -0.5+0j], dtype=complex64)");
  EXPECT(mlx_fft_ifft(&r_, a, 4, 0, MLX_FFT_NORM_BACKWARD, S),
         "array([2.5+0j, -0.5-0.5j, -0.5+0j, -0.5+0.5j], dtype=complex64)");
  /* irfft of [10, -2+2j, -2] is the signal back */
  CHECK(mlx_fft_rfft(&r, a, 4, 0, MLX_FFT_NORM_BACKWARD, S) == 0);
  EXPECT(mlx_fft_irfft(&r_, r, 4, 0, MLX_FFT_NORM_BACKWARD, S),
         "array([1, 2, 3, 4], dtype=float32)");
  CHECK_FAILS(mlx_fft_fft(&r, a, 0, 0, MLX_FFT_NORM_BACKWARD, S),
              "[fftn] Invalid FFT output size requested (0)");
  CHECK_FAILS(mlx_fft_fft(&r, a, 4, 3, MLX_FFT_NORM_BACKWARD, S),
              "[fftn] Invalid axis received for array with 1 dimensions.");
  CHECK_FAILS(mlx_fft_fft(&r, a, 4, 0, (mlx_fft_norm)7, S), "Invalid FFT normalization mode");
  CHECK_FAILS(mlx_fft_fft(&r, mlx_array_new(), 4, 0, MLX_FFT_NORM_BACKWARD, S),
              "expected a non-empty mlx_array");
  mlx_array_free(r);
  mlx_array_free(a);
}

static void test_many_axes(void) {
  const float x[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array a = mlx_array_new_data(x, shape, 2, MLX_FLOAT32), r = mlx_array_new();
  const int n[] = {2, 2}, axes[] = {0, 1}, one[] = {1};
  EXPECT(mlx_fft_fft2(&r_, a, n, 2, axes, 2, MLX_FFT_NORM_BACKWARD, S),
         "array([[12+0j, -2+0j],\n       [-6+0j, 0+0j]], dtype=complex64)");
  EXPECT(mlx_fft_rfftn(&r_, a, n + 1, 1, one, 1, MLX_FFT_NORM_BACKWARD, S),
         "array([[3+0j, -1+0j],\n       [9+0j, -1+0j]], dtype=complex64)");
  EXPECT(mlx_fft_fftn(&r_, a, NULL, 0, NULL, 0, MLX_FFT_NORM_BACKWARD, S),
         "array([[1, 2, 3],\n       [4, 5, 6]], dtype=float32)");
  CHECK_FAILS(mlx_fft_fftn(&r, a, NULL, 0, axes, 2, MLX_FFT_NORM_BACKWARD, S),
              "[fftn] Shape and axes have different sizes.");
  const int dup[] = {1, 1};
  CHECK_FAILS(mlx_fft_ifft2(&r, a, n, 2, dup, 2, MLX_FFT_NORM_BACKWARD, S),
              "[fftn] Duplicated axis received (1,1)");
  CHECK_FAILS(mlx_fft_irfft2(&r, a, NULL, 2, axes, 2, MLX_FFT_NORM_BACKWARD, S),
              "A list argument is NULL");
  mlx_array_free(r);
  mlx_array_free(a);
}

static void test_freq_shift(void) {
  mlx_array r = mlx_array_new();
  EXPECT(mlx_fft_fftfreq(&r_, 5, 0.25, S), "array([0, 0.8, 1.6, -1.6, -0.8], dtype=float32)");
  EXPECT(mlx_fft_rfftfreq(&r_, 4, 1.0, S), "array([0, 0.25, 0.5], dtype=float32)");
  CHECK_FAILS(mlx_fft_fftfreq(&r, 0, 1.0, S), "[fftfreq] `n` must be greater than 0.");
  CHECK_FAILS(mlx_fft_rfftfreq(&r, 3, 0.0, S), "[rfftfreq] `d` must be non-zero.");
  const float x[] = {0, 1, 2, 3, 4};
  mlx_array a = vec(x, 5);
  const int ax[] = {0}, bad[] = {1};
  EXPECT(mlx_fft_fftshift(&r_, a, ax, 1, S), "array([3, 4, 0, 1, 2], dtype=float32)");
  EXPECT(mlx_fft_ifftshift(&r_, a, ax, 1, S), "array([2, 3, 4, 0, 1], dtype=float32)");
  EXPECT(mlx_fft_fftshift(&r_, a, NULL, 0, S), "array([0, 1, 2, 3, 4], dtype=float32)");
  CHECK_FAILS(mlx_fft_fftshift(&r, a, bad, 1, S),
              "[fftshift] Invalid axis 1 for array with 1 dimensions.");
  mlx_array_free(a);
  mlx_array_free(r);
}

static void test_hadamard(void) {
  const float x[] = {1, 2, 3, 4};
  mlx_array a = vec(x, 4), r = mlx_array_new();
  mlx_optional_float none = {0, false}, unit = {1.0f, true};
  EXPECT(mlx_hadamard_transform(&r_, a, none, S), "array([5, -1, -2, 0], dtype=float32)");
  EXPECT(mlx_hadamard_transform(&r_, a, unit, S), "array([10, -2, -4, 0], dtype=float32)");
  const float y[] = {1, 2, 3};
  mlx_array b = vec(y, 3);
  CHECK_FAILS(mlx_hadamard_transform(&r, b, none, S),
              "[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).");
  mlx_array_free(b);
  mlx_array_free(a);
  mlx_array_free(r);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_one_axis();
  test_many_axes();
  test_freq_shift();
  test_hadamard();
  mlx_stream_free(S);
  return t_finish();
}
