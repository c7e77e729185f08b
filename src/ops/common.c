#include "ops/common.h"

#include <stdlib.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/shape.h"
#include "ops/unary.h"
#include "primitives/layout.h"

int cm_op_stream(cm_stream *s) { return cm_stream_resolve(*s, s); }

int cm_broadcast_shapes(int na, const int32_t *a, int nb, const int32_t *b, int *nout,
                        int32_t *out) {
  int n = na > nb ? na : nb;
  int32_t tmp[CM_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int32_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) tmp[i] = da;
    else if (da == 1) tmp[i] = db;
    else {
      char sa[256], sb[256];
      return cm_error(CM_ERR_VALUE, "[broadcast_shapes] Shapes %s and %s cannot be broadcast.",
                      cm_shape_str(sa, sizeof sa, na, a), cm_shape_str(sb, sizeof sb, nb, b));
    }
  }
  memcpy(out, tmp, sizeof(int32_t) * (size_t)n);
  *nout = n;
  return 0;
}

/* A clean bool (0 or 1) of a raw-bytes bool: its bytes as uint8, != 0. */
static cm_array *clean_bool(cm_array *raw, cm_stream s) {
  cm_array *u = cm_view(raw, CM_UINT8, s), *zero = cm_array_scalar_int(0, CM_UINT8);
  cm_array *r = u && zero ? cm_not_equal(u, zero, s) : NULL;
  cm_release(u);
  cm_release(zero);
  return r;
}

cm_array *cm_op_node(cm_dtype dtype, int ndim, const int32_t *shape, const cm_prim *prim,
                     const void *params, size_t params_size, cm_array *const *inputs, int nin,
                     cm_stream s) {
  if (cm_check_shape(prim->name, ndim, shape)) return NULL;
  bool raw = false;
  for (int i = 0; i < nin && !prim->moves_bytes; i++) raw |= inputs[i]->raw_bytes;
  if (!raw) return cm_node_new(dtype, ndim, shape, prim, params, params_size, inputs, nin, s);
  /* An op that reads values never sees a byte other than 0 or 1 as a bool
   * (undefined in C): such inputs are cleaned first. */
  cm_array **clean = malloc(sizeof(cm_array *) * (size_t)nin);
  if (!clean) return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", prim->name), NULL;
  int made = 0;
  for (; made < nin; made++) {
    clean[made] = inputs[made]->raw_bytes ? clean_bool(inputs[made], s) : cm_retain(inputs[made]);
    if (!clean[made]) break;
  }
  cm_array *r = made == nin
                    ? cm_node_new(dtype, ndim, shape, prim, params, params_size, clean, nin, s)
                    : NULL;
  for (int i = 0; i < made; i++) cm_release(clean[i]);
  free(clean);
  return r;
}

cm_array *cm_broadcast_to(cm_array *a, int ndim, const int32_t *shape, cm_stream s) {
  if (cm_shape_equal(a->ndim, a->shape, ndim, shape)) return cm_retain(a);
  if (cm_op_stream(&s)) return NULL;
  int nout;
  int32_t out[CM_MAX_DIMS];
  if (ndim < a->ndim || cm_broadcast_shapes(a->ndim, a->shape, ndim, shape, &nout, out) ||
      nout != ndim || memcmp(out, shape, sizeof(int32_t) * (size_t)ndim)) {
    char sa[256], sb[256];
    return cm_error(CM_ERR_VALUE,
                    "[broadcast_to] Cannot broadcast array of shape %s into shape %s.",
                    cm_shape_str(sa, sizeof sa, a->ndim, a->shape),
                    cm_shape_str(sb, sizeof sb, ndim, shape)),
           NULL;
  }
  return cm_op_node(a->dtype, ndim, shape, &cm_prim_broadcast, NULL, 0, &a, 1, s);
}

static _Thread_local int dynamic_shapes;
void cm_dynamic_shapes_push(void) { dynamic_shapes++; }
void cm_dynamic_shapes_pop(void) { dynamic_shapes--; }
bool cm_dynamic_shapes(void) { return dynamic_shapes > 0; }

/* Elementwise ops broadcast at most a handful of inputs together. */
#define DYNAMIC_MAX_INPUTS 8

/* The common shape of ins with the last nignore axes of each left out
 * (MLX's BroadcastAxes::output_shape without the ignored axes). */
static int batch_shape(cm_array *const *ins, int n, int nignore, int *ndim, int32_t *shape) {
  *ndim = 0;
  for (int i = 0; i < n; i++) {
    if (ins[i]->ndim < nignore)
      return cm_error(CM_ERR_VALUE, "[broadcast_arrays] Received invalid axes to ignore.");
    if (cm_broadcast_shapes(*ndim, shape, ins[i]->ndim - nignore, ins[i]->shape, ndim, shape))
      return -1;
  }
  return 0;
}

/* The shape input x gets: the common batch shape, then x's ignored axes. */
static int with_own_tail(const cm_array *x, int nb, const int32_t *batch, int nignore,
                         int32_t *shape) {
  if (nb + nignore > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[broadcast] Arrays may have at most %d dimensions.",
                    CM_MAX_DIMS);
  if (nb) memcpy(shape, batch, sizeof *shape * (size_t)nb);
  if (nignore) memcpy(shape + nb, x->shape + x->ndim - nignore, sizeof *shape * (size_t)nignore);
  return nb + nignore;
}

/* The dynamic form of broadcasting ins (cast to dtype when >= 0) against
 * each other, leaving their last nignore axes alone: each output is a
 * Broadcast (BroadcastAxes when nignore > 0) of its input with the other
 * inputs, behind stop_gradient, as extra inputs. */
static int broadcast_dynamic(cm_array *const *ins, int n, int dtype, int nignore, cm_array **outs,
                             cm_stream s) {
  if (n > DYNAMIC_MAX_INPUTS)
    return cm_error(CM_ERR_VALUE, "[broadcast] Too many inputs for a shapeless trace.");
  int nb;
  int32_t batch[CM_MAX_DIMS], shape[CM_MAX_DIMS];
  if (batch_shape(ins, n, nignore, &nb, batch)) return -1;
  cm_array *xs[DYNAMIC_MAX_INPUTS] = {0}, *sg[DYNAMIC_MAX_INPUTS] = {0}, *in[DYNAMIC_MAX_INPUTS];
  cm_broadcast_axes_params bp = {nignore};
  const cm_prim *prim = nignore ? &cm_prim_broadcast_axes : &cm_prim_broadcast;
  int rc = 0, made = 0;
  for (int i = 0; !rc && i < n; i++) {
    xs[i] = dtype >= 0 ? cm_astype(ins[i], (cm_dtype)dtype, s) : cm_retain(ins[i]);
    sg[i] = xs[i] ? cm_stop_gradient(xs[i], s) : NULL;
    if (!sg[i]) rc = -1;
  }
  for (; !rc && made < n; made++) {
    in[0] = xs[made];
    for (int j = 0, k = 1; j < n; j++)
      if (j != made) in[k++] = sg[j];
    int nd = with_own_tail(xs[made], nb, batch, nignore, shape);
    outs[made] = nd < 0 ? NULL
                        : cm_op_node(xs[made]->dtype, nd, shape, prim, nignore ? &bp : NULL,
                                     nignore ? sizeof bp : 0, in, n, s);
    if (!outs[made]) {
      rc = -1;
      break;
    }
    /* its bytes are its input's: the other inputs only shape it */
    outs[made]->raw_bytes = xs[made]->raw_bytes;
  }
  if (rc)
    for (int j = 0; j < made; j++) cm_release(outs[j]);
  for (int j = 0; j < n; j++) cm_release(xs[j]), cm_release(sg[j]);
  return rc;
}

int cm_broadcast_axes(cm_array *const *ins, int n, int nignore, cm_array **outs, cm_stream s) {
  if (cm_op_stream(&s)) return -1;
  if (n > 1 && dynamic_shapes) return broadcast_dynamic(ins, n, -1, nignore, outs, s);
  int nb;
  int32_t batch[CM_MAX_DIMS], shape[CM_MAX_DIMS];
  if (batch_shape(ins, n, nignore, &nb, batch)) return -1;
  for (int i = 0; i < n; i++) {
    int nd = with_own_tail(ins[i], nb, batch, nignore, shape);
    outs[i] = nd < 0 ? NULL : cm_broadcast_to(ins[i], nd, shape, s);
    if (!outs[i]) {
      for (int j = 0; j < i; j++) cm_release(outs[j]);
      return -1;
    }
  }
  return 0;
}

int cm_broadcast_and_cast(cm_array *const *ins, int n, int dtype, cm_array **outs, cm_stream s) {
  int ndim = 0;
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < n; i++)
    if (cm_broadcast_shapes(ndim, shape, ins[i]->ndim, ins[i]->shape, &ndim, shape)) return -1;
  if (n > 1 && dynamic_shapes) return broadcast_dynamic(ins, n, dtype, 0, outs, s);
  for (int i = 0; i < n; i++) {
    /* the common case, already of the dtype and shape: one reference, no
     * temporaries (this runs for every elementwise op) */
    if ((dtype < 0 || ins[i]->dtype == (cm_dtype)dtype) &&
        cm_shape_equal(ins[i]->ndim, ins[i]->shape, ndim, shape)) {
      outs[i] = cm_retain(ins[i]);
      continue;
    }
    cm_array *x = dtype >= 0 ? cm_astype(ins[i], (cm_dtype)dtype, s) : cm_retain(ins[i]);
    cm_array *y = x ? cm_broadcast_to(x, ndim, shape, s) : NULL;
    cm_release(x);
    if (!y) {
      for (int j = 0; j < i; j++) cm_release(outs[j]);
      return -1;
    }
    outs[i] = y;
  }
  return 0;
}

cm_array *cm_astype(cm_array *a, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[astype] Invalid dtype."), NULL;
  if (a->dtype == dtype) return cm_retain(a);
  if (cm_op_stream(&s)) return NULL;
  return cm_op_node(dtype, a->ndim, a->shape, &cm_prim_astype, NULL, 0, &a, 1, s);
}

cm_array *cm_contiguous(cm_array *a, bool allow_col_major, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (cm_is_evaluated(a) && !a->error &&
      (cm_row_contiguous(a) || (allow_col_major && cm_col_contiguous(a))))
    return cm_retain(a);
  return cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_copy, NULL, 0, &a, 1, s);
}

int cm_depends(int nin, cm_array *const *inputs, int ndeps, cm_array *const *deps, cm_stream s,
               cm_array **outs) {
  if (nin < 1) return cm_error(CM_ERR_VALUE, "[depends] At least one input is required.");
  if (cm_op_stream(&s)) return -1;
  int n = nin + ndeps;
  cm_array *stack[16], **all = n <= 16 ? stack : malloc(sizeof(cm_array *) * (size_t)n);
  cm_dtype dstack[16], *dtypes = nin <= 16 ? dstack : malloc(sizeof(cm_dtype) * (size_t)nin);
  int nstack[16], *ndims = nin <= 16 ? nstack : malloc(sizeof(int) * (size_t)nin);
  const int32_t *sstack[16],
      **shapes = nin <= 16 ? sstack : malloc(sizeof(int32_t *) * (size_t)nin);
  int rc = -1;
  if (!all || !dtypes || !ndims || !shapes) {
    cm_error(CM_ERR_MEMORY, "[depends] Out of memory.");
    goto done;
  }
  for (int i = 0; i < nin; i++) {
    all[i] = inputs[i];
    dtypes[i] = inputs[i]->dtype;
    ndims[i] = inputs[i]->ndim;
    shapes[i] = inputs[i]->shape;
  }
  for (int i = 0; i < ndeps; i++) all[nin + i] = deps[i];
  rc = cm_node_new_multi(nin, dtypes, ndims, shapes, &cm_prim_depends, NULL, 0, all, n, s, outs);
done:
  if (all != stack) free(all);
  if (dtypes != dstack) free(dtypes);
  if (ndims != nstack) free(ndims);
  if (shapes != sstack) free(shapes);
  return rc;
}
