/* The FFT primitive: descriptor and transform rules (MLX's FFT::vjp,
 * jvp and vmap).
 *
 *   fft    vjp: ifft of the cotangent times n    jvp: fft of the tangent
 *   ifft   vjp: fft of the cotangent over n      jvp: ifft of the tangent
 *   rfft   vjp: irfft (to the input's sizes) of the cotangent with the
 *          bins other than DC and Nyquist halved, times n
 *   irfft  vjp: rfft of the cotangent, over n, with the same bins doubled
 * where n is the number of points transformed.  Every rule is built from
 * the FFT ops (backward norm), so higher derivatives work.  The jvp of an
 * irfft keeps the output's length on its last axis (MLX reads it back as
 * 2 * (m - 1), which loses an odd length); vmap likewise takes it from
 * the traced node. */
#include "primitives/fft.h"
#include "primitives/export_desc.h"

#include <stdlib.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/fft.h"

size_t cm_fft_params_size(const cm_params *p) {
  int32_t n = cm_fft_params_of_block(p, cm_prim_fft.params_size)->naxes;
  if (n < 1 || n > CM_MAX_DIMS) return SIZE_MAX;
  return offsetof(cm_fft_params, axes) + sizeof(int32_t) * (size_t)n;
}

/* x times the constant c (a new reference). */
static cm_array *times(cm_array *x, cm_array *c, cm_stream s) {
  cm_array *r = x && c ? cm_multiply(x, c, s) : NULL;
  cm_release(x);
  cm_release(c);
  return r;
}

/* The constant mask over the real axis (shape 1 elsewhere): inner for the
 * bins 0 < i < len - 1 + odd, edge for the others. */
static cm_array *hermitian_mask(int ndim, int axis, int len, bool odd, float inner, float edge) {
  int32_t shape[CM_MAX_DIMS];
  for (int d = 0; d < ndim; d++) shape[d] = d == axis ? len : 1;
  cm_complex64 *v = malloc(sizeof(cm_complex64) * (size_t)(len ? len : 1));
  if (!v) return cm_error(CM_ERR_MEMORY, "[FFT] Out of memory."), NULL;
  for (int i = 0; i < len; i++) v[i] = (cm_complex64){i > 0 && i < len - 1 + odd ? inner : edge, 0};
  cm_array *r = cm_array_from_data(v, ndim, shape, CM_COMPLEX64);
  free(v);
  return r;
}

static double points(const cm_array *x, const cm_fft_params *fp) {
  double n = 1;
  for (int i = 0; i < fp->naxes; i++) n *= x->shape[fp->axes[i]];
  return n;
}

static int fft_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_fft_params *fp = cm_fft_params_of(out);
  const cm_array *x = in[0];
  int k = fp->naxes, last = fp->axes[k - 1];
  const int *axes = fp->axes;
  cm_array *g;
  if (fp->real && fp->inverse) {
    double n = points(cotan, fp);
    cm_array *mask = hermitian_mask(x->ndim, last, x->shape[last], cotan->shape[last] % 2,
                                    (float)(2 / n), (float)(1 / n));
    g = times(cm_fft_nd(cotan, 0, NULL, k, axes, true, false, CM_FFT_NORM_BACKWARD, NULL, s), mask,
              s);
  } else if (fp->real) {
    int32_t sizes[CM_MAX_DIMS];
    for (int i = 0; i < k; i++) sizes[i] = x->shape[axes[i]];
    cm_array *mask =
        hermitian_mask(x->ndim, last, cotan->shape[last], x->shape[last] % 2, 0.5f, 1.0f);
    cm_array *c = times(cm_retain(cotan), mask, s);
    cm_array *t =
        c ? cm_fft_nd(c, k, sizes, k, axes, true, true, CM_FFT_NORM_BACKWARD, NULL, s) : NULL;
    cm_release(c);
    g = times(t, cm_array_scalar_double(points(x, fp), x->dtype), s);
  } else {
    double n = points(x, fp);
    cm_array *t =
        cm_fft_nd(cotan, 0, NULL, k, axes, false, !fp->inverse, CM_FFT_NORM_BACKWARD, NULL, s);
    g = times(t, cm_array_scalar_double(fp->inverse ? 1 / n : n, CM_COMPLEX64), s);
  }
  grads[0] = g;
  return g ? 0 : -1;
}

static int fft_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                   cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  const cm_fft_params *fp = cm_fft_params_of(out);
  int32_t sizes[CM_MAX_DIMS];
  bool keep_n = fp->real && fp->inverse;
  for (int i = 0; keep_n && i < fp->naxes; i++) sizes[i] = out->shape[fp->axes[i]];
  *tangent = cm_fft_nd(tangents[0], keep_n ? fp->naxes : 0, keep_n ? sizes : NULL, fp->naxes,
                       fp->axes, fp->real, fp->inverse, CM_FFT_NORM_BACKWARD, NULL, s);
  return *tangent ? 0 : -1;
}

static int fft_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                    const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin;
  cm_fft_params q;
  memcpy(&q, p, cm_fft_params_size(p));
  cm_array *a = in[0];
  int ax = axes[0];
  for (int i = 0; i < q.naxes; i++)
    if (q.axes[i] >= ax) q.axes[i]++;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  if (q.real) {
    int last = q.axes[q.naxes - 1], orig = last > ax ? last - 1 : last;
    shape[last] = q.inverse ? node->shape[orig] : shape[last] / 2 + 1;
  }
  *out =
      cm_node_new(node->dtype, a->ndim, shape, &cm_prim_fft, &q, cm_fft_params_size(p), &a, 1, s);
  *out_axis = ax;
  return *out ? 0 : -1;
}

const cm_prim cm_prim_fft = {
    .name = "FFT",
    .export = &cm_export_fft,
    CM_PARAMS_OF_VAR(cm_fft_params, axes),
    .params_extent = cm_fft_params_size,
    .vjp = fft_vjp,
    .jvp = fft_jvp,
    .vmap = fft_vmap,
};
