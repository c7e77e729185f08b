/* cmlx.core.fft: MLX's mx.fft (python/src/fft.cpp in MLX) over
 * src/ops/fft.h.
 *
 * A row's name says which transform it is: a leading "i" is an inverse,
 * "rfft" a real one.  As in MLX's bindings: fft2 and friends default to
 * axes [-2, -1] (axes=None: every axis), the n-d ones to None; sizes
 * without axes are a ValueError naming the function; norm is a str. */
#include <string.h>

#include "argparse.h"
#include "init.h"
#include "ops/fft.h"
#include "ops_lists.h"

static void kind_of(const pycm_op *op, bool *real, bool *inverse) {
  *inverse = op->name[0] == 'i';
  *real = strstr(op->name, "rfft") != NULL;
}

/* The norm argument; 1 with a Python error set. */
static int norm_arg(const pycm_op *op, const pa_call *c, const pa_value *v, cm_fft_norm *out) {
  const char *str;
  int r = pa_str_arg(v, "backward", &str);
  if (r > 0) pa_value_type_error(op, c);
  if (r) return 1;
  if (cm_fft_norm_parse(op->name, str, out)) {
    pycm_raise();
    return 1;
  }
  return 0;
}

/* name(a, n=None, axis=-1, norm='backward', stream=None) */
static PyObject *impl_fft1(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  bool real, inverse;
  cm_fft_norm norm;
  kind_of(op, &real, &inverse);
  if (norm_arg(op, c, &v[3], &norm)) return NULL;
  return pycm_wrap(cm_fft_1d(v[0].arr, !v[1].none, (int)v[1].i, (int)v[2].i, real, inverse, norm,
                             pa_stream(op, c)));
}

/* name(a, s=None, axes=..., norm='backward', stream=None); the 2-d forms
 * default to axes [-2, -1]. */
static PyObject *impl_fftn(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  bool real, inverse;
  cm_fft_norm norm;
  kind_of(op, &real, &inverse);
  if (norm_arg(op, c, &v[3], &norm)) return NULL;
  static const int last_two[2] = {-2, -1};
  bool two = op->name[strlen(op->name) - 1] == '2';
  const int *axes = (const int *)v[2].shape;
  int naxes = v[2].ndim;
  if (!v[2].given && two) {
    axes = last_two;
    naxes = 2;
  } else if (v[2].none) {
    axes = NULL;
  }
  return pycm_wrap(cm_fft_nd(v[0].arr, v[1].ndim, v[1].none ? NULL : v[1].shape, naxes, axes, real,
                             inverse, norm, op->name, pa_stream(op, c)));
}

/* fftfreq / rfftfreq(n, d=1.0, stream=None) */
static PyObject *impl_freq(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *(*fn)(int, double, cm_stream) = op->name[0] == 'r' ? cm_rfftfreq : cm_fftfreq;
  return pycm_wrap(fn((int)v[0].i, v[1].f, pa_stream(op, c)));
}

/* fftshift / ifftshift(a, axes=None, stream=None) */
static PyObject *impl_shift(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *(*fn)(cm_array *, int, const int *, cm_stream) =
      op->name[0] == 'i' ? cm_ifftshift : cm_fftshift;
  return pycm_wrap(
      fn(v[0].arr, v[1].ndim, v[1].none ? NULL : (const int *)v[1].shape, pa_stream(op, c)));
}

static int opt_int(const pa_value *v) { return v->none ? -1 : (int)v->i; }

/* stft(x, n_fft=2048, hop_length=None, win_length=None, window=None,
 * center=True, pad_mode='reflect', norm='backward', onesided=None, stream) */
static PyObject *impl_stft(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  const char *mode;
  cm_fft_norm norm;
  int r = pa_str_arg(&v[6], "reflect", &mode);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  if (norm_arg(op, c, &v[7], &norm)) return NULL;
  return pycm_wrap(cm_stft(v[0].arr, (int)v[1].i, opt_int(&v[2]), opt_int(&v[3]),
                           v[4].none ? NULL : v[4].arr, v[5].b, mode, norm,
                           v[8].none ? -1 : v[8].b, pa_stream(op, c)));
}

/* istft(stft_matrix, n_fft=None, hop_length=None, win_length=None,
 * window=None, center=True, norm='backward', onesided=None, length=None,
 * stream) */
static PyObject *impl_istft(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_fft_norm norm;
  if (norm_arg(op, c, &v[6], &norm)) return NULL;
  return pycm_wrap(cm_istft(v[0].arr, opt_int(&v[1]), opt_int(&v[2]), opt_int(&v[3]),
                            v[4].none ? NULL : v[4].arr, v[5].b, norm, v[7].none ? -1 : v[7].b,
                            opt_int(&v[8]), pa_stream(op, c)));
}

/* MLX's displayed signatures (its docstrings' first lines), word for word. */
#define ARR "a: mlx.core.array"
#define SIG_STREAM                                                            \
  "stream: mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | " \
  "mlx.core.DeviceType | None = None) -> mlx.core.array"
#define SIG_NORM "norm: str = 'backward', " SIG_STREAM
#define NORM_STREAM "norm: object | None = None, stream: Stream = None"
#define NORM_OPT "norm: object | None = None, onesided: bool | None = None"
#define SIZES_SPEC "a: array, s: shapeseq | None = None, axes: shapeseq | None = None, "
#define FFT1(name)                                                                \
  PYCM_CALL(name, "a: array, n: int | None = None, axis: int = -1, " NORM_STREAM, \
            "(" ARR ", n: int | None = None, axis: int = -1, " SIG_NORM, impl_fft1)
#define FFT2(name)                                                        \
  PYCM_CALL(name, SIZES_SPEC NORM_STREAM,                                 \
            "(" ARR ", s: tuple[int, ...] | None = None, axes: "          \
            "collections.abc.Sequence[int] | None = [-2, -1], " SIG_NORM, \
            impl_fftn)
#define FFTN(name)                                                    \
  PYCM_CALL(name, SIZES_SPEC NORM_STREAM,                             \
            "(" ARR ", s: tuple[int, ...] | None = None, axes: "      \
            "collections.abc.Sequence[int] | None = None, " SIG_NORM, \
            impl_fftn)
#define FREQ(name)                                                 \
  PYCM_CALL(name, "n: int, d: float = 1.0, stream: Stream = None", \
            "(n: int, d: float = 1.0, " SIG_STREAM, impl_freq)
#define SHIFT(name)                                                                           \
  PYCM_CALL(name, "a: array, axes: axes | None = None, stream: Stream = None",                \
            "(" ARR ", axes: int | collections.abc.Sequence[int] | None = None, " SIG_STREAM, \
            impl_shift)

static pycm_op fft_ops[] = {
    FFT1("fft"),     FFT1("ifft"),     FFT2("fft2"),      FFT2("ifft2"),
    FFTN("fftn"),    FFTN("ifftn"),    FFT1("rfft"),      FFT1("irfft"),
    FFT2("rfft2"),   FFT2("irfft2"),   FFTN("rfftn"),     FFTN("irfftn"),
    FREQ("fftfreq"), FREQ("rfftfreq"), SHIFT("fftshift"), SHIFT("ifftshift"),
    PYCM_CALL("stft",
              "x: array, n_fft: int = 2048, hop_length: int | None = None, win_length: int | None "
              "= None, window: array | None = None, center: bool = True, pad_mode: object | None "
              "= None, " NORM_OPT ", stream: Stream = None",
              "(x: mlx.core.array, n_fft: int = 2048, hop_length: int | None = None, win_length: "
              "int | None = None, window: mlx.core.array | None = None, center: bool = True, "
              "pad_mode: str = 'reflect', norm: str = 'backward', onesided: bool | None = None, "
              SIG_STREAM,
              impl_stft),
    PYCM_CALL("istft",
              "stft_matrix: array, n_fft: int | None = None, hop_length: int | None = None, "
              "win_length: int | None = None, window: array | None = None, center: bool = True, "
              NORM_OPT ", length: int | None = None, stream: Stream = None",
              "(stft_matrix: mlx.core.array, n_fft: int | None = None, hop_length: int | None = "
              "None, win_length: int | None = None, window: mlx.core.array | None = None, center: "
              "bool = True, norm: str = 'backward', onesided: bool | None = None, length: int | "
              "None = None, " SIG_STREAM,
              impl_istft),
};
#define N_FFT_OPS ((int)(sizeof fft_ops / sizeof fft_ops[0]))

int pycm_init_fft(PyObject *m) {
  PyObject *f = pycm_add_submodule(m, "fft", "mlx.core.fft: Fast Fourier Transforms.");
  return !f || pa_add_functions(f, fft_ops, N_FFT_OPS) ? -1 : 0;
}
