/* FFT op constructors (see ops/fft.h): argument checks with MLX's
 * messages, the crop / zero-pad to the requested sizes, the dtype casts,
 * the FFT node and the norm's scale. */
#include "ops/fft.h"

#include <math.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/shape.h"
#include "primitives/fft.h"

int cm_fft_norm_parse(const char *name, const char *str, cm_fft_norm *out) {
  static const char *const names[] = {"backward", "ortho", "forward"};
  for (int i = 0; i < 3; i++)
    if (str && strcmp(str, names[i]) == 0) {
      *out = (cm_fft_norm)i;
      return 0;
    }
  return cm_error(CM_ERR_VALUE,
                  "[%s] Invalid norm. Expected one of {'backward', 'ortho', 'forward'}.", name);
}

/* MLX's fft_scale_factor. */
static int scale_factor(int nn, const int32_t *n, cm_fft_norm norm, bool inverse, double *out) {
  double count = 1;
  for (int i = 0; i < nn; i++) count *= n[i];
  switch (norm) {
  case CM_FFT_NORM_BACKWARD: *out = 1; return 0;
  case CM_FFT_NORM_ORTHO: *out = inverse ? sqrt(count) : 1 / sqrt(count); return 0;
  case CM_FFT_NORM_FORWARD: *out = inverse ? count : 1 / count; return 0;
  }
  return cm_error(CM_ERR_VALUE, "[fftn] Invalid FFT normalization mode.");
}

/* a cropped (where shape is smaller) and zero-padded (where larger) to
 * shape, at the end of each axis. */
static cm_array *fit_to(cm_array *a, const int32_t *shape, cm_stream s) {
  int nd = a->ndim, npad = 0;
  int32_t stop[CM_MAX_DIMS], zero[CM_MAX_DIMS], lo[CM_MAX_DIMS], hi[CM_MAX_DIMS];
  int axes[CM_MAX_DIMS];
  bool crop = false;
  for (int d = 0; d < nd; d++) {
    zero[d] = 0;
    stop[d] = shape[d] < a->shape[d] ? shape[d] : a->shape[d];
    crop |= stop[d] < a->shape[d];
    if (shape[d] > a->shape[d]) {
      axes[npad] = d;
      lo[npad] = 0;
      hi[npad++] = shape[d] - a->shape[d];
    }
  }
  cm_array *x = crop ? cm_slice(a, nd, zero, nd, stop, 0, NULL, s) : cm_retain(a);
  if (!x || !npad) return x;
  cm_array *r = cm_pad(x, npad, axes, npad, lo, npad, hi, NULL, "constant", s);
  cm_release(x);
  return r;
}

/* MLX's fft_impl with the sizes and normalised axes known. */
static cm_array *fft_node(cm_array *a, int k, const int32_t *n, const int *axes, bool real,
                          bool inverse, cm_fft_norm norm, cm_stream s) {
  double scale = 1;
  if (scale_factor(k, n, norm, inverse, &scale)) return NULL;
  int nd = a->ndim;
  int32_t in_shape[CM_MAX_DIMS], out_shape[CM_MAX_DIMS];
  memcpy(in_shape, a->shape, sizeof(int32_t) * (size_t)nd);
  for (int i = 0; i < k; i++) in_shape[axes[i]] = n[i];
  int last = axes[k - 1];
  if (real && inverse) in_shape[last] = n[k - 1] / 2 + 1;
  memcpy(out_shape, in_shape, sizeof(int32_t) * (size_t)nd);
  if (real) out_shape[last] = inverse ? n[k - 1] : in_shape[last] / 2 + 1;
  cm_dtype in_type = real && !inverse ? CM_FLOAT32 : CM_COMPLEX64;
  cm_dtype out_type = real && inverse ? CM_FLOAT32 : CM_COMPLEX64;

  cm_array *fitted = fit_to(a, in_shape, s);
  cm_array *x = fitted ? cm_astype(fitted, in_type, s) : NULL;
  cm_release(fitted);
  if (!x) return NULL;
  cm_fft_params p;
  memset(&p, 0, sizeof p);
  p.naxes = k;
  p.inverse = inverse;
  p.real = real;
  memcpy(p.axes, axes, sizeof(int) * (size_t)k);
  cm_array *out = cm_op_node(out_type, nd, out_shape, &cm_prim_fft, &p,
                             cm_fft_params_size((const cm_params *)&p), &x, 1, s);
  cm_release(x);
  if (!out || scale == 1.0) return out;
  cm_array *c = cm_array_scalar_double(scale, out_type);
  cm_array *r = c ? cm_multiply(out, c, s) : NULL;
  cm_release(c);
  cm_release(out);
  return r;
}

cm_array *cm_fft_nd(cm_array *a, int nn, const int32_t *n, int naxes, const int *axes, bool real,
                    bool inverse, cm_fft_norm norm, const char *name, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[fftn] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  int all[CM_MAX_DIMS];
  int32_t sizes[CM_MAX_DIMS];
  char buf[256];
  if (!axes) {
    if (n)
      return cm_error(CM_ERR_VALUE, "[%s] `axes` should not be `None` if `s` is not `None`.",
                      name ? name : "fftn"),
             NULL;
    for (int d = 0; d < a->ndim; d++) all[d] = d;
    axes = all;
    naxes = a->ndim;
  }
  if (naxes < 0 || naxes > CM_MAX_DIMS || (n && (nn < 0 || nn > CM_MAX_DIMS)))
    return cm_error(CM_ERR_VALUE, "[fftn] Too many axes (%d).", n ? nn : naxes), NULL;
  if (!n) {
    /* the sizes read off the shape: an axis out of range is MLX's IndexError */
    for (int i = 0; i < naxes; i++) {
      int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
      if (ax < 0 || ax >= a->ndim)
        return cm_error(CM_ERR_INDEX, "[fftn] Invalid axis %d for array with %d dimensions.",
                        axes[i], a->ndim),
               NULL;
      sizes[i] = a->shape[ax];
    }
    if (real && inverse && naxes > 0) sizes[naxes - 1] = (sizes[naxes - 1] - 1) * 2;
    n = sizes;
    nn = naxes;
  }
  if (a->ndim < 1)
    return cm_error(CM_ERR_VALUE, "[fftn] Requires array with at least one dimension."), NULL;
  if (nn != naxes)
    return cm_error(CM_ERR_VALUE, "[fftn] Shape and axes have different sizes."), NULL;
  if (naxes == 0) return cm_retain(a);
  int valid[CM_MAX_DIMS];
  uint64_t seen = 0;
  bool bad = false, dup = false;
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
    if (ax < 0 || ax >= a->ndim) {
      bad = true;
      continue;
    }
    dup |= (seen >> ax) & 1;
    seen |= (uint64_t)1 << ax;
    valid[i] = ax;
  }
  if (dup) {
    int32_t shown[CM_MAX_DIMS];
    for (int i = 0; i < naxes; i++) shown[i] = axes[i];
    return cm_error(CM_ERR_VALUE, "[fftn] Duplicated axis received %s",
                    cm_shape_str(buf, sizeof buf, naxes, shown)),
           NULL;
  }
  if (bad)
    return cm_error(CM_ERR_INDEX, "[fftn] Invalid axis received for array with %d dimensions.",
                    a->ndim),
           NULL;
  for (int i = 0; i < nn; i++)
    if (n[i] <= 0)
      return cm_error(CM_ERR_VALUE, "[fftn] Invalid FFT output size requested %s",
                      cm_shape_str(buf, sizeof buf, nn, n)),
             NULL;
  return fft_node(a, naxes, n, valid, real, inverse, norm, s);
}

cm_array *cm_fft_1d(cm_array *a, bool has_n, int n, int axis, bool real, bool inverse,
                    cm_fft_norm norm, cm_stream s) {
  int32_t nv = n;
  return cm_fft_nd(a, has_n ? 1 : 0, has_n ? &nv : NULL, 1, &axis, real, inverse, norm, NULL, s);
}

/* ---- frequencies and shifts ---------------------------------------------- */

static int freq_check(const char *name, int n, double d) {
  if (n <= 0) return cm_error(CM_ERR_VALUE, "[%s] `n` must be greater than 0.", name);
  if (d == 0.0) return cm_error(CM_ERR_VALUE, "[%s] `d` must be non-zero.", name);
  return 0;
}

/* freqs * float32(1 / (n d)), as MLX scales them. */
static cm_array *scaled(cm_array *freqs, int n, double d, cm_stream s) {
  cm_array *c = freqs ? cm_array_scalar_double((float)(1.0 / ((double)n * d)), CM_FLOAT32) : NULL;
  cm_array *r = c ? cm_multiply(freqs, c, s) : NULL;
  cm_release(c);
  cm_release(freqs);
  return r;
}

cm_array *cm_fftfreq(int n, double d, cm_stream s) {
  if (freq_check("fftfreq", n, d) || cm_op_stream(&s)) return NULL;
  cm_array *parts[2] = {cm_arange(0, (n + 1) / 2, 1, CM_FLOAT32, s),
                        cm_arange(-(n / 2), 0, 1, CM_FLOAT32, s)};
  cm_array *freqs = parts[0] && parts[1] ? cm_concatenate(parts, 2, 0, s) : NULL;
  cm_release(parts[0]);
  cm_release(parts[1]);
  return scaled(freqs, n, d, s);
}

cm_array *cm_rfftfreq(int n, double d, cm_stream s) {
  if (freq_check("rfftfreq", n, d) || cm_op_stream(&s)) return NULL;
  return scaled(cm_arange(0, n / 2 + 1, 1, CM_FLOAT32, s), n, d, s);
}

static cm_array *shift(const char *name, cm_array *a, int naxes, const int *axes, bool inverse,
                       cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  int all[CM_MAX_DIMS];
  if (!axes) {
    for (int d = 0; d < a->ndim; d++) all[d] = d;
    axes = all;
    naxes = a->ndim;
  }
  if (naxes <= 0) return cm_retain(a);
  if (naxes > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[%s] Too many axes.", name), NULL;
  int32_t shifts[CM_MAX_DIMS];
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
    if (ax < 0 || ax >= a->ndim)
      return cm_error(CM_ERR_VALUE, "[%s] Invalid axis %d for array with %d dimensions.", name,
                      axes[i], a->ndim),
             NULL;
    shifts[i] = inverse ? -(a->shape[ax] / 2) : a->shape[ax] / 2;
  }
  return cm_roll(a, naxes, shifts, naxes, axes, s);
}

cm_array *cm_fftshift(cm_array *a, int naxes, const int *axes, cm_stream s) {
  return shift("fftshift", a, naxes, axes, false, s);
}

cm_array *cm_ifftshift(cm_array *a, int naxes, const int *axes, cm_stream s) {
  return shift("ifftshift", a, naxes, axes, true, s);
}
