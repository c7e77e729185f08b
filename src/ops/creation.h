/* Array creation: full, zeros, ones and their _like forms, arange,
 * linspace, eye, identity, tri. */
#ifndef CMLX_OPS_CREATION_H
#define CMLX_OPS_CREATION_H

#include "ops/common.h"

/* full(shape, vals): vals broadcast to shape, converted to dtype. */
cm_array *cm_full(int ndim, const int32_t *shape, cm_array *vals, cm_dtype dtype, cm_stream s);
cm_array *cm_full_double(int ndim, const int32_t *shape, double v, cm_dtype dtype, cm_stream s);
cm_array *cm_zeros(int ndim, const int32_t *shape, cm_dtype dtype, cm_stream s);
cm_array *cm_ones(int ndim, const int32_t *shape, cm_dtype dtype, cm_stream s);
cm_array *cm_zeros_like(cm_array *a, cm_stream s);
cm_array *cm_ones_like(cm_array *a, cm_stream s);
cm_array *cm_full_like(cm_array *a, cm_array *vals, cm_dtype dtype, cm_stream s);
/* An array of a's shape filled with v in dtype (zeros_like / ones_like
 * with a dtype); in a shapeless trace it follows a's shape on replays. */
cm_array *cm_fill_like(cm_array *a, double v, cm_dtype dtype, cm_stream s);
/* arange: MLX's size rule ceil((stop - start) / step); dtype as given. */
cm_array *cm_arange(double start, double stop, double step, cm_dtype dtype, cm_stream s);
cm_array *cm_linspace(double start, double stop, int num, cm_dtype dtype, cm_stream s);
cm_array *cm_eye(int n, int m, int k, cm_dtype dtype, cm_stream s);
cm_array *cm_identity(int n, cm_dtype dtype, cm_stream s);
cm_array *cm_tri(int n, int m, int k, cm_dtype dtype, cm_stream s);

#endif
