/* Reshaping, axis order, broadcasting, strided views and slicing.  These
 * build view primitives (primitives/shape.h); messages follow MLX 0.32 as
 * seen from Python. */
#include "ops/shape.h"

#include <string.h>

#include "primitives/shape.h"

int cm_normalize_axis(const char *op, int axis, int ndim, int *out) {
  if (axis < -ndim || axis >= ndim)
    return cm_error(CM_ERR_INDEX, "[%s] Axis %d is out of bounds for array with %d dimensions.", op,
                    axis, ndim);
  *out = axis < 0 ? axis + ndim : axis;
  return 0;
}

/* A reshape-family node, or a itself when the shape does not change. */
static cm_array *reshape_node(cm_array *a, const cm_prim *prim, const void *params, size_t psize,
                              int ndim, const int32_t *shape, cm_stream s) {
  if (cm_shape_equal(a->ndim, a->shape, ndim, shape)) return cm_retain(a);
  return cm_op_node(a->dtype, ndim, shape, prim, params, psize, &a, 1, s);
}

/* ---- reshaping ---- */

int cm_reshape_infer(int64_t size, int ndim, const int32_t *shape, int32_t *out) {
  if (ndim < 0 || ndim > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[reshape] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
  int infer = -1;
  int64_t known = 1;
  bool bad = false; /* a negative size other than -1, or an overflow */
  for (int i = 0; i < ndim; i++) {
    out[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0)
        return cm_error(CM_ERR_VALUE, "[reshape] Reshape can only infer one dimension.");
      infer = i;
    } else if (shape[i] < 0 || __builtin_mul_overflow(known, (int64_t)shape[i], &known)) {
      bad = true;
    }
  }
  if (infer >= 0 && !bad) {
    if (known == 0)
      return cm_error(CM_ERR_VALUE, "[reshape] Cannot infer the shape of an empty array");
    int64_t d = size / known;
    if (known * d == size && cm_shape_dim("reshape", d, &out[infer])) return -1;
    out[infer] = d > INT32_MAX ? INT32_MAX : (int32_t)d;
    known *= out[infer];
  }
  if (bad || known != size) {
    char buf[256];
    return cm_error(CM_ERR_VALUE, "[reshape] Cannot reshape array of size %lld into shape %s.",
                    (long long)size, cm_shape_str(buf, sizeof buf, ndim, out));
  }
  return 0;
}

cm_array *cm_reshape(cm_array *a, int ndim, const int32_t *shape, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int32_t out[CM_MAX_DIMS];
  if (cm_reshape_infer(a->size, ndim, shape, out)) return NULL;
  /* the node keeps the requested shape (-1 included), so that a shapeless
   * replay infers it again; such a node is kept even when it changes
   * nothing at the traced shape */
  cm_reshape_params p;
  p.ndim = ndim;
  if (ndim) memcpy(p.shape, shape, sizeof(int32_t) * (size_t)ndim);
  size_t psize = cm_reshape_params_size((const cm_params *)&p);
  if (cm_dynamic_shapes() && !cm_shape_equal(a->ndim, a->shape, ndim, shape))
    return cm_op_node(a->dtype, ndim, out, &cm_prim_reshape, &p, psize, &a, 1, s);
  return reshape_node(a, &cm_prim_reshape, &p, psize, ndim, out, s);
}

cm_array *cm_flatten(cm_array *a, int start_axis, int end_axis, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int ndim = a->ndim;
  int start = start_axis + (start_axis < 0 ? ndim : 0);
  int end = end_axis + (end_axis < 0 ? ndim : 0);
  if (start < 0) start = 0;
  if (end > ndim - 1) end = ndim - 1;
  if (ndim == 0) {
    int32_t one = 1;
    return cm_reshape(a, 1, &one, s);
  }
  if (end < start)
    return cm_error(CM_ERR_VALUE, "[flatten] start_axis must be less than or equal to end_axis"),
           NULL;
  if (start == end) return cm_retain(a);
  int32_t shape[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < start; i++) shape[n++] = a->shape[i];
  int64_t merged = 1;
  for (int i = start; i <= end; i++) merged *= a->shape[i];
  if (cm_shape_dim("flatten", merged, &shape[n++])) return NULL;
  for (int i = end + 1; i < ndim; i++) shape[n++] = a->shape[i];
  cm_flatten_params p = {start, end};
  return cm_op_node(a->dtype, n, shape, &cm_prim_flatten, &p, sizeof p, &a, 1, s);
}

cm_array *cm_unflatten(cm_array *a, int axis, int ndim, const int32_t *shape, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (ndim <= 0)
    return cm_error(CM_ERR_VALUE, "[unflatten] Shape to unflatten to cannot be empty."), NULL;
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return cm_error(CM_ERR_INDEX, "[unflatten] Invalid axes %d for array with %d dimensions.", ax,
                    a->ndim),
           NULL;
  if (a->ndim - 1 + ndim > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[unflatten] Arrays may have at most %d dimensions.",
                    CM_MAX_DIMS),
           NULL;
  int32_t sub[CM_MAX_DIMS];
  int infer = -1;
  int64_t known = 1;
  bool bad = false;
  for (int i = 0; i < ndim; i++) {
    sub[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0)
        return cm_error(CM_ERR_VALUE, "[Unflatten] Can only infer one dimension."), NULL;
      infer = i;
    } else if (shape[i] < 0 || __builtin_mul_overflow(known, (int64_t)shape[i], &known)) {
      bad = true;
    }
  }
  if (infer >= 0 && !bad) {
    /* MLX divides by zero here; an empty known part cannot be inferred */
    if (known == 0)
      return cm_error(CM_ERR_VALUE, "[Unflatten] Cannot infer the shape of an empty array"), NULL;
    sub[infer] = (int32_t)(a->shape[ax] / known);
    known *= sub[infer];
  }
  if (bad || known != a->shape[ax]) {
    char buf[256];
    return cm_error(CM_ERR_VALUE,
                    "[Unflatten] Cannot unflatten axis %d with size %d into shape %s.",
                    axis, a->shape[ax], cm_shape_str(buf, sizeof buf, ndim, sub)),
           NULL;
  }
  if (ndim == 1) return cm_retain(a);
  int32_t out[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < ax; i++) out[n++] = a->shape[i];
  for (int i = 0; i < ndim; i++) out[n++] = sub[i];
  for (int i = ax + 1; i < a->ndim; i++) out[n++] = a->shape[i];
  cm_unflatten_params p = {ax};
  return cm_op_node(a->dtype, n, out, &cm_prim_unflatten, &p, sizeof p, &a, 1, s);
}

/* Squeeze the axes in mask (already checked to have size 1). */
static cm_array *squeeze_mask(cm_array *a, uint64_t mask, cm_stream s) {
  if (!mask) return cm_retain(a);
  int32_t shape[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim; i++)
    if (!(mask >> i & 1)) shape[n++] = a->shape[i];
  cm_axes_mask_params p = {mask};
  return cm_op_node(a->dtype, n, shape, &cm_prim_squeeze, &p, sizeof p, &a, 1, s);
}

cm_array *cm_squeeze(cm_array *a, int naxes, const int *axes, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  uint64_t mask = 0;
  for (int i = 0; i < naxes; i++) {
    int ax = 0;
    if (cm_normalize_axis("squeeze", axes[i], a->ndim, &ax)) return NULL;
    if (mask >> ax & 1) return cm_error(CM_ERR_VALUE, "[squeeze] Received duplicate axes."), NULL;
    mask |= (uint64_t)1 << ax;
  }
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
    if (a->shape[ax] != 1)
      return cm_error(CM_ERR_VALUE,
                      "[squeeze] Cannot squeeze axis %d with size %d which is not equal to 1.",
                      axes[i], a->shape[ax]),
             NULL;
  }
  return squeeze_mask(a, mask, s);
}

cm_array *cm_squeeze_all(cm_array *a, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  uint64_t mask = 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] == 1) mask |= (uint64_t)1 << i;
  return squeeze_mask(a, mask, s);
}

cm_array *cm_expand_dims(cm_array *a, int naxes, const int *axes, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (naxes <= 0) return cm_retain(a);
  int out_ndim = a->ndim + naxes;
  if (out_ndim > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[expand_dims] Arrays may have at most %d dimensions.",
                    CM_MAX_DIMS),
           NULL;
  /* duplicates first, as given and then normalised, as MLX checks them */
  for (int i = 0; i < naxes; i++)
    for (int j = 0; j < i; j++) {
      int x = axes[i] < 0 ? axes[i] + out_ndim : axes[i];
      int y = axes[j] < 0 ? axes[j] + out_ndim : axes[j];
      if (axes[i] == axes[j] || x == y)
        return cm_error(CM_ERR_VALUE, "[expand_dims] Received duplicate axes."), NULL;
    }
  uint64_t mask = 0;
  for (int i = 0; i < naxes; i++) {
    int ax = 0;
    if (cm_normalize_axis("expand_dims", axes[i], out_ndim, &ax)) return NULL;
    mask |= (uint64_t)1 << ax;
  }
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0, j = 0; i < out_ndim; i++) shape[i] = (mask >> i & 1) ? 1 : a->shape[j++];
  cm_axes_mask_params p = {mask};
  return cm_op_node(a->dtype, out_ndim, shape, &cm_prim_expand_dims, &p, sizeof p, &a, 1, s);
}

cm_array *cm_atleast_1d(cm_array *a, cm_stream s) {
  if (a->ndim >= 1) return cm_retain(a);
  int32_t shape[1] = {1};
  return cm_reshape(a, 1, shape, s);
}

cm_array *cm_atleast_2d(cm_array *a, cm_stream s) {
  if (a->ndim >= 2) return cm_retain(a);
  int32_t shape[2] = {1, a->ndim ? a->shape[0] : 1};
  return cm_reshape(a, 2, shape, s);
}

cm_array *cm_atleast_3d(cm_array *a, cm_stream s) {
  if (a->ndim >= 3) return cm_retain(a);
  int32_t shape[3] = {1, 1, 1};
  if (a->ndim == 1) shape[1] = a->shape[0];
  if (a->ndim == 2) shape[0] = a->shape[0], shape[1] = a->shape[1];
  return cm_reshape(a, 3, shape, s);
}

/* ---- axis order ---- */

cm_array *cm_transpose(cm_array *a, int naxes, const int *axes, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int nd = a->ndim;
  int perm[CM_MAX_DIMS];
  if (!axes) {
    naxes = nd;
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  } else {
    if (naxes != nd)
      return cm_error(CM_ERR_VALUE, "[transpose] Received %d axes for array with %d dimensions.",
                      naxes, nd),
             NULL;
    for (int i = 0; i < nd; i++) perm[i] = axes[i] < 0 ? axes[i] + nd : axes[i];
  }
  uint64_t seen = 0;
  bool identity = true;
  for (int i = 0; i < nd; i++) {
    if (perm[i] < 0 || perm[i] >= nd)
      return cm_error(CM_ERR_INDEX, "[transpose] Invalid axis (%d) for array with %d dimensions.",
                      perm[i], nd),
             NULL;
    if (seen >> perm[i] & 1)
      return cm_error(CM_ERR_VALUE, "[transpose] Repeat axes not allowed."), NULL;
    seen |= (uint64_t)1 << perm[i];
    identity &= perm[i] == i;
  }
  if (identity) return cm_retain(a);
  cm_transpose_params p;
  memset(&p, 0, sizeof p);
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    p.perm[i] = (uint8_t)perm[i];
    shape[i] = a->shape[perm[i]];
  }
  return cm_op_node(a->dtype, nd, shape, &cm_prim_transpose, &p, sizeof p, &a, 1, s);
}

cm_array *cm_permute_dims(cm_array *a, int naxes, const int *axes, cm_stream s) {
  return cm_transpose(a, naxes, axes, s);
}

/* MLX's swapaxes/moveaxis message: "Invalid axis 3 for array with 2
 * dimensions." (IndexError). */
static int check_axis(const char *op, int axis, int ndim, int *out) {
  if (axis < -ndim || axis >= ndim)
    return cm_error(CM_ERR_INDEX, "[%s] Invalid axis %d for array with %d dimensions.", op, axis,
                    ndim);
  *out = axis < 0 ? axis + ndim : axis;
  return 0;
}

cm_array *cm_swapaxes(cm_array *a, int axis1, int axis2, cm_stream s) {
  int a1 = 0, a2 = 0;
  if (check_axis("swapaxes", axis1, a->ndim, &a1) || check_axis("swapaxes", axis2, a->ndim, &a2))
    return NULL;
  int perm[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) perm[i] = i;
  perm[a1] = a2;
  perm[a2] = a1;
  return cm_transpose(a, a->ndim, perm, s);
}

cm_array *cm_moveaxis(cm_array *a, int source, int destination, cm_stream s) {
  int src = 0, dst = 0;
  if (check_axis("moveaxis", source, a->ndim, &src) ||
      check_axis("moveaxis", destination, a->ndim, &dst))
    return NULL;
  if (src == dst) return cm_retain(a);
  int perm[CM_MAX_DIMS], n = 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != src) perm[n++] = i;
  memmove(perm + dst + 1, perm + dst, sizeof(int) * (size_t)(n - dst));
  perm[dst] = src;
  return cm_transpose(a, a->ndim, perm, s);
}

/* ---- broadcasting ---- */

int cm_broadcast_arrays(cm_array *const *ins, int n, cm_array **outs, cm_stream s) {
  if (cm_op_stream(&s)) return -1;
  int ndim = 0;
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < n; i++)
    if (cm_broadcast_shapes(ndim, shape, ins[i]->ndim, ins[i]->shape, &ndim, shape)) return -1;
  for (int i = 0; i < n; i++) {
    outs[i] = cm_broadcast_to(ins[i], ndim, shape, s);
    if (!outs[i]) {
      for (int j = 0; j < i; j++) cm_release(outs[j]);
      return -1;
    }
  }
  return 0;
}

/* ---- views ---- */

cm_array *cm_as_strided(cm_array *a, int ndim, const int32_t *shape, int nstrides,
                        const int64_t *strides, int64_t offset, cm_stream s) {
  if (cm_op_stream(&s) || cm_check_shape("as_strided", ndim, shape)) return NULL;
  if (nstrides != ndim)
    return cm_error(CM_ERR_VALUE, "[as_strided] Received %d strides for a shape of %d dimensions.",
                    nstrides, ndim),
           NULL;
  /* Every element read must lie inside a (MLX does not check). */
  if (cm_shape_size(ndim, shape) > 0) {
    int64_t lo = offset, hi = offset, ext;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
      overflow |= __builtin_mul_overflow(strides[i], (int64_t)(shape[i] - 1), &ext);
      overflow |= ext > 0 ? __builtin_add_overflow(hi, ext, &hi)
                          : __builtin_add_overflow(lo, ext, &lo);
    }
    if (overflow || lo < 0 || hi >= a->size)
      return cm_error(CM_ERR_VALUE,
                      "[as_strided] The view would read outside the array's %lld elements.",
                      (long long)a->size),
             NULL;
  }
  cm_array *flat = cm_flatten(a, 0, -1, s);
  if (!flat) return NULL;
  cm_as_strided_params p = {.offset = offset, .ndim = ndim};
  if (ndim) memcpy(p.strides, strides, sizeof(int64_t) * (size_t)ndim);
  cm_array *r = cm_op_node(a->dtype, ndim, shape, &cm_prim_as_strided, &p,
                           cm_as_strided_params_size((const cm_params *)&p), &flat, 1, s);
  cm_release(flat);
  return r;
}

cm_array *cm_view(cm_array *a, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[view] Invalid dtype."), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (a->dtype == dtype) return cm_retain(a);
  size_t ib = cm_dtype_size(a->dtype), ob = cm_dtype_size(dtype);
  int32_t shape[CM_MAX_DIMS];
  if (a->ndim) memcpy(shape, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  if (a->ndim == 0 && ib != ob)
    return cm_error(CM_ERR_VALUE, "[view] Changing the type of a scalar is only allowed for types "
                                  "with the same size."),
           NULL;
  if (ib < ob) {
    int32_t r = (int32_t)(ob / ib);
    if (shape[a->ndim - 1] % r)
      return cm_error(CM_ERR_VALUE, "[view] When viewing as a larger dtype, the size in bytes of "
                                    "the last axis must be a multiple of the requested type size."),
             NULL;
    shape[a->ndim - 1] /= r;
  } else if (ib > ob) {
    int64_t d = (int64_t)shape[a->ndim - 1] * (int64_t)(ib / ob);
    if (d > INT32_MAX)
      return cm_error(CM_ERR_VALUE, "[view] The last axis would be too long."), NULL;
    shape[a->ndim - 1] = (int32_t)d;
  }
  cm_view_params p = {dtype};
  return cm_op_node(dtype, a->ndim, shape, &cm_prim_view, &p, sizeof p, &a, 1, s);
}

/* ---- slicing ---- */

/* One axis of a static slice, normalised as MLX does (NumPy's rules). */
typedef struct axis_slice { int32_t start, step, len; } axis_slice;

/* Normalise start/stop/step per axis into out[] (0, or -1 on error). */
static int normalize_slice(const char *op, const cm_array *a, int nstart, const int32_t *start,
                           int nstop, const int32_t *stop, int nstrides, const int32_t *strides,
                           axis_slice *out, bool *has_neg) {
  if (nstart != a->ndim || nstop != a->ndim || (nstrides != a->ndim && nstrides != 0))
    return cm_error(CM_ERR_VALUE,
                    "[%s] Invalid number of indices or strides for array with dimension %d.", op,
                    a->ndim);
  *has_neg = false;
  for (int i = 0; i < a->ndim; i++) {
    int64_t n = a->shape[i], st = start[i], ed = stop[i], step = nstrides ? strides[i] : 1, len;
    if (step == 0) return cm_error(CM_ERR_VALUE, "[%s] Slice step cannot be zero.", op);
    if (st < 0) st += n;
    if (ed < 0) ed += n;
    if (step < 0) {
      *has_neg = true;
      st = st < n - 1 ? st : n - 1;
      ed = ed > -1 ? ed : -1;
      if (ed > st) ed = st;
      len = (st - ed + (-step) - 1) / (-step);
    } else {
      st = st < 0 ? 0 : st > n ? n : st;
      ed = ed < 0 ? 0 : ed > n ? n : ed;
      if (ed < st) ed = st;
      len = (ed - st + step - 1) / step;
    }
    if (len <= 1) step = 1; /* the step of a single element is irrelevant */
    if (len == 0) st = 0;   /* nor is the start of an empty window */
    out[i] = (axis_slice){(int32_t)st, (int32_t)step, (int32_t)len};
  }
  return 0;
}

/* Parameter block of window sl over base: the axes whose window is not
 * the whole axis; the window shape goes to shape. */
static void slice_params(const cm_array *base, const axis_slice *sl, cm_slice_params *p,
                         int32_t *shape) {
  p->n = 0;
  memcpy(shape, base->shape, sizeof(int32_t) * (size_t)base->ndim);
  for (int axis = 0; axis < base->ndim; axis++) {
    const axis_slice *x = &sl[axis];
    shape[axis] = x->len;
    if (x->start == 0 && x->step == 1 && x->len == base->shape[axis]) continue;
    p->ax[p->n++] = (cm_slice_axis){axis, x->start, x->step, x->len};
  }
}

static size_t slice_size(const cm_slice_params *p) {
  return cm_slice_params_size((const cm_params *)p);
}

/* a[sl]: one Slice node (none when the window is all of a). */
static cm_array *slice_apply(cm_array *a, const axis_slice *sl, cm_stream s) {
  cm_slice_params p;
  int32_t shape[CM_MAX_DIMS];
  slice_params(a, sl, &p, shape);
  if (!p.n && cm_shape_equal(a->ndim, a->shape, a->ndim, shape)) return cm_retain(a);
  return cm_op_node(a->dtype, a->ndim, shape, &cm_prim_slice, &p, slice_size(&p), &a, 1, s);
}

cm_array *cm_slice(cm_array *a, int nstart, const int32_t *start, int nstop, const int32_t *stop,
                   int nstrides, const int32_t *strides, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  axis_slice sl[CM_MAX_DIMS];
  bool neg;
  if (normalize_slice("slice", a, nstart, start, nstop, stop, nstrides, strides, sl, &neg))
    return NULL;
  return slice_apply(a, sl, s);
}

/* src with window sl replaced by upd, whose shape is the window's: one
 * SliceUpdate node. */
static cm_array *slice_update_apply(cm_array *src, cm_array *upd, const axis_slice *sl,
                                    cm_stream s) {
  cm_slice_params p;
  int32_t shape[CM_MAX_DIMS];
  slice_params(src, sl, &p, shape);
  cm_array *ins[2] = {src, upd};
  return cm_op_node(src->dtype, src->ndim, src->shape, &cm_prim_slice_update, &p, slice_size(&p),
                    ins, 2, s);
}

cm_array *cm_slice_update(cm_array *src, cm_array *update, int nstart, const int32_t *start,
                          int nstop, const int32_t *stop, int nstrides, const int32_t *strides,
                          cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  axis_slice sl[CM_MAX_DIMS];
  bool neg;
  if (normalize_slice("slice_update", src, nstart, start, nstop, stop, nstrides, strides, sl, &neg))
    return NULL;
  int32_t wshape[CM_MAX_DIMS];
  for (int i = 0; i < src->ndim; i++) wshape[i] = sl[i].len;
  cm_array *c = cm_astype(update, src->dtype, s);
  cm_array *upd = c ? cm_broadcast_to(c, src->ndim, wshape, s) : NULL;
  cm_release(c);
  if (!upd) return NULL;
  /* the window is all of src: the result is the update */
  if (!neg && cm_shape_equal(src->ndim, src->shape, src->ndim, wshape)) return upd;
  cm_array *r = slice_update_apply(src, upd, sl, s);
  cm_release(upd);
  return r;
}

/* MLX's checks on a dynamic slice's start array and axes. */
static int check_dynamic(const char *op, const cm_array *a, const cm_array *start, int naxes,
                         const int *axes, cm_dynamic_slice_params *p) {
  if (start->size > a->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Invalid number of starting positions for array with dimension %d.", op,
                    a->ndim);
  if (start->ndim > 1)
    return cm_error(CM_ERR_VALUE, "[%s] array of starting indices must be zero or one "
                                  "dimensional but has dimension %d.", op, start->ndim);
  if (start->size != naxes)
    return cm_error(CM_ERR_VALUE, "[%s] Number of starting indices %lld does not match number of "
                                  "axes %d.", op, (long long)start->size, naxes);
  if (!cm_dtype_is_integral(start->dtype))
    return cm_error(CM_ERR_VALUE, "[%s] Start indices must be integers, got type %s.", op,
                    cm_dtype_name(start->dtype));
  memset(p, 0, sizeof *p);
  uint64_t seen = 0;
  for (int i = 0; i < naxes; i++) {
    int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
    if (ax < 0 || ax >= a->ndim)
      return cm_error(CM_ERR_INDEX, "[%s] Invalid axis %d for array with dimension %d.", op,
                      axes[i], a->ndim);
    if (seen >> ax & 1) return cm_error(CM_ERR_VALUE, "[%s] Repeat axes not allowed.", op);
    seen |= (uint64_t)1 << ax;
    p->axes[i] = (uint8_t)ax;
  }
  return 0;
}

cm_array *cm_slice_dynamic(cm_array *a, cm_array *start, int naxes, const int *axes, int nsize,
                           const int32_t *slice_size, cm_stream s) {
  cm_dynamic_slice_params p;
  if (cm_op_stream(&s) || check_dynamic("slice", a, start, naxes, axes, &p)) return NULL;
  if (nsize != a->ndim)
    return cm_error(CM_ERR_VALUE, "[slice] Invalid slice size for array with %d dimensions.",
                    a->ndim),
           NULL;
  if (cm_check_shape("slice", nsize, slice_size)) return NULL;
  for (int i = 0; i < a->ndim; i++)
    if (slice_size[i] > a->shape[i]) {
      char b1[256], b2[256];
      return cm_error(CM_ERR_VALUE, "[slice] Invalid slice size %s for array with shape %s.",
                      cm_shape_str(b1, sizeof b1, nsize, slice_size),
                      cm_shape_str(b2, sizeof b2, a->ndim, a->shape)),
             NULL;
    }
  cm_array *ins[2] = {a, start};
  return cm_op_node(a->dtype, nsize, slice_size, &cm_prim_dynamic_slice, &p, sizeof p, ins, 2, s);
}

cm_array *cm_slice_update_dynamic(cm_array *src, cm_array *update, cm_array *start, int naxes,
                                  const int *axes, cm_stream s) {
  cm_dynamic_slice_params p;
  if (cm_op_stream(&s) || check_dynamic("slice_update", src, start, naxes, axes, &p)) return NULL;
  if (update->ndim > src->ndim)
    return cm_error(CM_ERR_VALUE, "[slice_update] The update (%d dimensions) has more dimensions "
                                  "than the source (%d).", update->ndim, src->ndim),
           NULL;
  /* MLX's window: the update's shape, with src's leading axes in front;
   * axes that get a start and that the update lacks have length 1. */
  int lead = src->ndim - update->ndim;
  int32_t wshape[CM_MAX_DIMS];
  for (int d = 0; d < src->ndim; d++) {
    wshape[d] = d < lead ? src->shape[d] : update->shape[d - lead];
    if (d >= lead && wshape[d] > src->shape[d]) wshape[d] = src->shape[d];
  }
  for (int i = 0; i < naxes; i++)
    if (p.axes[i] < lead) wshape[p.axes[i]] = 1;
  cm_array *c = cm_astype(update, src->dtype, s);
  cm_array *upd = c ? cm_broadcast_to(c, src->ndim, wshape, s) : NULL;
  cm_release(c);
  if (!upd) return NULL;
  cm_array *ins[3] = {src, upd, start};
  cm_array *r = cm_op_node(src->dtype, src->ndim, src->shape, &cm_prim_dynamic_slice_update, &p,
                           sizeof p, ins, 3, s);
  cm_release(upd);
  return r;
}
