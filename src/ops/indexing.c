/* Indexing op constructors: argument checks with MLX's messages, index
 * broadcasting, and the Gather / Scatter / GatherAxis / ScatterAxis /
 * MaskedScatter nodes (primitives/indexing.h).  take and the slice-update
 * reductions are compositions. */
#include "ops/indexing.h"

#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/shape.h"
#include "ops/ternary.h"

int cm_check_index_dtype(const char *op, cm_dtype t) {
  if (!cm_dtype_is_integral(t))
    return cm_error(CM_ERR_VALUE, "[%s] Got indices with invalid dtype. Indices must be integral.",
                    op);
  return 0;
}

static void release_all(cm_array **xs, int n) {
  for (int i = 0; i < n; i++) cm_release(xs[i]);
}

/* The checks gather and scatter share; fills the sorted-check of axes. */
static int check_index_args(const char *op, const cm_array *a, cm_array *const *indices, int nidx,
                            const int *axes, int naxes) {
  if (nidx > a->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Too many index arrays. Got %d index arrays for input with %d dimensions.",
                    op, nidx, a->ndim);
  uint64_t seen = 0;
  for (int i = 0; i < naxes; i++) {
    if (axes[i] < 0 || axes[i] >= a->ndim)
      return cm_error(CM_ERR_VALUE, "[%s] Axes don't match array dimensions.", op);
    if (seen >> axes[i] & 1)
      return cm_error(CM_ERR_VALUE, "[%s] Repeat axes not allowed in %s.", op, op);
    seen |= (uint64_t)1 << axes[i];
  }
  if (nidx != naxes)
    return cm_error(CM_ERR_VALUE, "[%s] Number of index arrays does not match number of axes.", op);
  if (nidx > CM_GATHER_MAX_AXES)
    return cm_error(CM_ERR_VALUE, "[%s] At most %d index arrays are supported.", op,
                    CM_GATHER_MAX_AXES);
  for (int i = 0; i < nidx; i++) {
    if (indices[i]->dtype == CM_BOOL)
      return cm_error(CM_ERR_VALUE, "[%s] Boolean indices not supported.", op);
    if (cm_check_index_dtype(op, indices[i]->dtype)) return -1;
  }
  return 0;
}

/* outs[i] = indices[i] broadcast to their common shape. */
static int broadcast_indices(cm_array *const *indices, int n, cm_array **outs, cm_stream s) {
  return n ? cm_broadcast_and_cast(indices, n, -1, outs, s) : 0;
}

cm_array *cm_gather(cm_array *a, cm_array *const *indices, int nidx, const int *axes, int naxes,
                    const int32_t *slice_sizes, int nsizes, cm_stream s) {
  if (cm_op_stream(&s) || check_index_args("gather", a, indices, nidx, axes, naxes)) return NULL;
  char b1[256], b2[256];
  if (nsizes != a->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[gather] Got slice_sizes with size %d for array with %d dimensions.", nsizes,
                    a->ndim),
           NULL;
  cm_array *ins[CM_GATHER_MAX_AXES + 1];
  if (broadcast_indices(indices, nidx, ins + 1, s)) return NULL;
  int64_t isize = nidx ? ins[1]->size : 1, total = 1;
  for (int i = 0; i < nsizes; i++) total *= slice_sizes[i] > 0 ? slice_sizes[i] : 0;
  int rc = 0;
  if (a->size == 0) {
    if (isize != 0 && total != 0)
      rc = cm_error(CM_ERR_VALUE,
                    "[gather] If the input is empty, either the indices must be empty or "
                    "the total slice size must be 0.");
  } else {
    for (int i = 0; i < a->ndim && !rc; i++)
      if (slice_sizes[i] < 0 || slice_sizes[i] > a->shape[i])
        rc = cm_error(
            CM_ERR_VALUE,
            "[gather] Slice sizes must be in [0, a.shape(i)]. Got %s for array with shape %s.",
            cm_shape_str(b1, sizeof b1, nsizes, slice_sizes),
            cm_shape_str(b2, sizeof b2, a->ndim, a->shape));
  }
  int ondim = (nidx ? ins[1]->ndim : 0) + a->ndim;
  if (!rc && ondim > CM_MAX_DIMS)
    rc = cm_error(CM_ERR_VALUE, "[gather] The output would have more than %d dimensions.",
                  CM_MAX_DIMS);
  cm_array *r = NULL;
  if (!rc) {
    int32_t shape[CM_MAX_DIMS];
    int k = 0;
    for (int d = 0; nidx && d < ins[1]->ndim; d++) shape[k++] = ins[1]->shape[d];
    for (int d = 0; d < a->ndim; d++) shape[k++] = slice_sizes[d];
    cm_gather_params p = {.naxes = (uint8_t)nidx};
    for (int i = 0; i < nidx; i++) p.axes[i] = (uint8_t)axes[i];
    ins[0] = a;
    r = cm_op_node(a->dtype, ondim, shape, &cm_prim_gather, &p, sizeof p, ins, nidx + 1, s);
  }
  release_all(ins + 1, nidx);
  return r;
}

cm_array *cm_scatter(cm_array *a, cm_array *const *indices, int nidx, cm_array *updates,
                     const int *axes, int naxes, cm_scatter_op op, cm_stream s) {
  if (cm_op_stream(&s) || check_index_args("scatter", a, indices, nidx, axes, naxes)) return NULL;
  if ((unsigned)op >= CM_SCATTER_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[scatter] Invalid reduction."), NULL;
  cm_array *ins[CM_GATHER_MAX_AXES + 2];
  if (broadcast_indices(indices, nidx, ins + 1, s)) return NULL;
  int indim = nidx ? ins[1]->ndim : 0;
  const int32_t *ishape = nidx ? ins[1]->shape : NULL;
  char b1[256], b2[256];
  int rc = 0;
  if (updates->ndim != a->ndim + indim)
    rc = cm_error(CM_ERR_VALUE,
                  "[scatter] Updates with %d dimensions does not match the sum of the array "
                  "(%d) and indices (%d) dimensions.",
                  updates->ndim, a->ndim, indim);
  for (int i = 0; !rc && i < indim; i++)
    if (updates->shape[i] != ishape[i])
      rc = cm_error(CM_ERR_VALUE,
                    "[scatter] Update shape %s is not valid for broadcasted index shape %s.",
                    cm_shape_str(b1, sizeof b1, updates->ndim, updates->shape),
                    cm_shape_str(b2, sizeof b2, indim, ishape));
  for (int i = 0; !rc && i < a->ndim; i++)
    if (updates->shape[indim + i] > a->shape[i])
      rc = cm_error(CM_ERR_VALUE,
                    "[scatter] Updates with shape %s are too large for array with shape %s.",
                    cm_shape_str(b1, sizeof b1, updates->ndim, updates->shape),
                    cm_shape_str(b2, sizeof b2, a->ndim, a->shape));
  cm_array *r = NULL, *u = rc ? NULL : cm_astype(updates, a->dtype, s);
  if (u) {
    cm_scatter_params p = {.op = (uint8_t)op, .naxes = (uint8_t)nidx};
    for (int i = 0; i < nidx; i++) p.axes[i] = (uint8_t)axes[i];
    ins[0] = a;
    ins[nidx + 1] = u;
    r = cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_scatter, &p, sizeof p, ins, nidx + 2, s);
  }
  cm_release(u);
  release_all(ins + 1, nidx);
  return r;
}

/* ---- take ---- */

static int take_axis(const char *op, const cm_array *a, int axis, int *out) {
  if (axis < -a->ndim || axis >= a->ndim)
    return cm_error(CM_ERR_INDEX, "[%s] Received invalid axis %d for array with %d dimensions.", op,
                    axis, a->ndim);
  *out = axis < 0 ? axis + a->ndim : axis;
  return 0;
}

cm_array *cm_take(cm_array *a, cm_array *indices, int axis, cm_stream s) {
  if (cm_op_stream(&s) || take_axis("take", a, axis, &axis)) return NULL;
  if (a->shape[axis] == 0 && indices->size != 0)
    return cm_error(CM_ERR_VALUE, "[take] Cannot do a non-empty take from an empty axis."), NULL;
  int32_t sizes[CM_MAX_DIMS];
  memcpy(sizes, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  sizes[axis] = a->shape[axis] ? 1 : 0;
  cm_array *g = cm_gather(a, &indices, 1, &axis, 1, sizes, a->ndim, s);
  if (!g) return NULL;
  int ni = indices->ndim;
  if (g->size == 0) { /* nothing to move: the final shape directly */
    int32_t shape[CM_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < axis; i++) shape[k++] = a->shape[i];
    for (int i = 0; i < ni; i++) shape[k++] = indices->shape[i];
    for (int i = axis + 1; i < a->ndim; i++) shape[k++] = a->shape[i];
    cm_array *r = cm_reshape(g, k, shape, s);
    cm_release(g);
    return r;
  }
  if (axis != 0) { /* move the index axes to where the taken axis was */
    int perm[CM_MAX_DIMS], k = 0;
    for (int i = 0; i < axis; i++) perm[k++] = ni + i;
    for (int i = 0; i < ni; i++) perm[k++] = i;
    for (int i = ni + axis; i < g->ndim; i++) perm[k++] = i;
    cm_array *t = cm_transpose(g, g->ndim, perm, s);
    cm_release(g);
    if (!(g = t)) return NULL;
  }
  int sq = ni + axis;
  cm_array *r = cm_squeeze(g, 1, &sq, s);
  cm_release(g);
  return r;
}

/* The axis-less forms: op over a flattened, along its one axis. */
typedef cm_array *(*take_op)(cm_array *a, cm_array *indices, int axis, cm_stream s);
static cm_array *take_flattened(take_op op, cm_array *a, cm_array *indices, cm_stream s) {
  cm_array *f = cm_flatten(a, 0, -1, s);
  if (!f) return NULL;
  cm_array *r = op(f, indices, 0, s);
  cm_release(f);
  return r;
}

cm_array *cm_take_flat(cm_array *a, cm_array *indices, cm_stream s) {
  return take_flattened(cm_take, a, indices, s);
}

cm_array *cm_take_index(cm_array *a, int64_t index, int axis, cm_stream s) {
  if (cm_op_stream(&s) || take_axis("take", a, axis, &axis)) return NULL;
  if (a->size == 0)
    return cm_error(CM_ERR_VALUE,
                    "[take] Cannot do a non-empty take from an array with zero elements."),
           NULL;
  int64_t n = a->shape[axis], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    return cm_error(CM_ERR_INDEX, "[take] Index %lld is out of bounds for axis %d with size %lld.",
                    (long long)index, axis, (long long)n), NULL;
  int32_t start[CM_MAX_DIMS] = {0}, stop[CM_MAX_DIMS];
  memcpy(stop, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  start[axis] = (int32_t)i;
  stop[axis] = (int32_t)i + 1;
  cm_array *sl = cm_slice(a, a->ndim, start, a->ndim, stop, 0, NULL, s);
  cm_array *r = sl ? cm_squeeze(sl, 1, &axis, s) : NULL;
  cm_release(sl);
  return r;
}

cm_array *cm_take_index_flat(cm_array *a, int64_t index, cm_stream s) {
  cm_array *f = cm_flatten(a, 0, -1, s);
  if (!f) return NULL;
  cm_array *r = cm_take_index(f, index, 0, s);
  cm_release(f);
  return r;
}

/* ---- along an axis ---- */

/* check_dtype false leaves the index dtype to the caller: MLX returns an
 * empty array from put_along_axis before looking at it. */
static int along_axis_checks(const char *op, const cm_array *a, const cm_array *indices, int axis,
                             bool check_dtype, int *out) {
  if (axis < -a->ndim || axis >= a->ndim)
    return cm_error(CM_ERR_INDEX, "[%s] Axis %d is out of bounds for array with %d dimensions.", op,
                    axis, a->ndim);
  if (indices->ndim != a->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Indices of dimension %d does not match array of dimension %d.", op,
                    indices->ndim, a->ndim);
  if (check_dtype && cm_check_index_dtype(op, indices->dtype)) return -1;
  *out = axis < 0 ? axis + a->ndim : axis;
  return 0;
}

/* Broadcast xs[i] against each other on every axis but `axis` (all have
 * the same ndim); outs[i] are new references. */
static int broadcast_except(cm_array *const *xs, int n, int axis, cm_array **outs, cm_stream s) {
  int nd = xs[0]->ndim, k = 0;
  int32_t common[CM_MAX_DIMS], tmp[CM_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int m = 0;
    for (int d = 0; d < nd; d++)
      if (d != axis) tmp[m++] = xs[i]->shape[d];
    if (cm_broadcast_shapes(k, common, m, tmp, &k, common)) return -1;
  }
  for (int i = 0; i < n; i++) {
    int32_t shape[CM_MAX_DIMS];
    for (int d = 0, m = 0; d < nd; d++) shape[d] = d == axis ? xs[i]->shape[d] : common[m++];
    outs[i] = cm_broadcast_to(xs[i], nd, shape, s);
    if (!outs[i]) {
      release_all(outs, i);
      return -1;
    }
  }
  return 0;
}

cm_array *cm_take_along_axis(cm_array *a, cm_array *indices, int axis, cm_stream s) {
  if (cm_op_stream(&s) || along_axis_checks("take_along_axis", a, indices, axis, true, &axis))
    return NULL;
  if (a->shape[axis] == 0 && indices->shape[axis] != 0 && indices->size != 0)
    return cm_error(CM_ERR_VALUE,
                    "[take_along_axis] Cannot do a non-empty take from an empty axis."),
           NULL;
  cm_array *xs[2] = {a, indices}, *b[2];
  if (broadcast_except(xs, 2, axis, b, s)) return NULL;
  cm_axis_index_params p = {.axis = axis};
  cm_array *r =
      cm_op_node(a->dtype, b[1]->ndim, b[1]->shape, &cm_prim_gather_axis, &p, sizeof p, b, 2, s);
  release_all(b, 2);
  return r;
}

cm_array *cm_take_along_axis_flat(cm_array *a, cm_array *indices, cm_stream s) {
  return take_flattened(cm_take_along_axis, a, indices, s);
}

static cm_array *scatter_axis(const char *op, cm_array *a, cm_array *indices, cm_array *values,
                              int axis, cm_scatter_op mode, cm_stream s) {
  if (cm_op_stream(&s) || along_axis_checks(op, a, indices, axis, false, &axis)) return NULL;
  if (a->size == 0) return cm_retain(a);
  if (cm_check_index_dtype(op, indices->dtype)) return NULL;
  cm_array *u = cm_astype(values, a->dtype, s);
  if (!u) return NULL;
  if (u->ndim > indices->ndim) { /* squeeze the update's extra leading axes */
    int ax[CM_MAX_DIMS], n = u->ndim - indices->ndim;
    for (int i = 0; i < n; i++) ax[i] = i;
    cm_array *q = cm_squeeze(u, n, ax, s);
    cm_release(u);
    if (!(u = q)) return NULL;
  }
  cm_array *pair[2] = {indices, u}, *iu[2];
  int rc = cm_broadcast_and_cast(pair, 2, -1, iu, s);
  cm_release(u);
  if (rc) return NULL;
  cm_array *xs[3] = {a, iu[0], iu[1]}, *b[3];
  rc = broadcast_except(xs, 3, axis, b, s);
  release_all(iu, 2);
  if (rc) return NULL;
  cm_axis_index_params p = {.axis = axis, .op = mode};
  cm_array *r =
      cm_op_node(a->dtype, b[0]->ndim, b[0]->shape, &cm_prim_scatter_axis, &p, sizeof p, b, 3, s);
  release_all(b, 3);
  return r;
}

cm_array *cm_put_along_axis(cm_array *a, cm_array *indices, cm_array *values, int axis,
                            cm_stream s) {
  return scatter_axis("put_along_axis", a, indices, values, axis, CM_SCATTER_NONE, s);
}

cm_array *cm_scatter_add_axis(cm_array *a, cm_array *indices, cm_array *values, int axis,
                              cm_stream s) {
  return scatter_axis("scatter_add_axis", a, indices, values, axis, CM_SCATTER_SUM, s);
}

cm_array *cm_put_along_axis_flat(cm_array *a, cm_array *indices, cm_array *values, cm_stream s) {
  cm_array *f = cm_flatten(a, 0, -1, s);
  cm_array *p = f ? cm_put_along_axis(f, indices, values, 0, s) : NULL;
  cm_array *r = p ? cm_reshape(p, a->ndim, a->shape, s) : NULL;
  cm_release(f);
  cm_release(p);
  return r;
}

/* ---- masked_scatter ---- */

cm_array *cm_masked_scatter(cm_array *a, cm_array *mask, cm_array *value, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (mask->dtype != CM_BOOL)
    return cm_error(CM_ERR_VALUE, "[masked_scatter] The mask has to be boolean."), NULL;
  if (mask->ndim > a->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[masked_scatter] The mask cannot have more dimensions than the target."),
           NULL;
  int k = a->ndim - mask->ndim; /* the axes the mask leaves whole */
  if (value->ndim > k + 1)
    return cm_error(CM_ERR_VALUE,
                    "[masked_scatter] Value array shape must be broadcastable with the last %d "
                    "dimensions of the input.",
                    k),
           NULL;
  if (mask->ndim && memcmp(mask->shape, a->shape, sizeof(int32_t) * (size_t)mask->ndim)) {
    char b1[256], b2[256];
    return cm_error(CM_ERR_VALUE,
                    "[masked_scatter] The boolean mask should have the same shape as the "
                    "beginning of the indexed array but the mask has shape %s and the array "
                    "has shape %s",
                    cm_shape_str(b1, sizeof b1, mask->ndim, mask->shape),
                    cm_shape_str(b2, sizeof b2, a->ndim, a->shape)),
           NULL;
  }
  if (k + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[masked_scatter] Too many dimensions."), NULL;
  /* the mask over all of a */
  int32_t shape[CM_MAX_DIMS];
  for (int d = 0; d < a->ndim; d++) shape[d] = d < mask->ndim ? mask->shape[d] : 1;
  cm_array *mr = cm_reshape(mask, a->ndim, shape, s);
  cm_array *mb = mr ? cm_broadcast_to(mr, a->ndim, a->shape, s) : NULL;
  cm_release(mr);
  cm_array *v = mb ? cm_astype(value, a->dtype, s) : NULL, *vb = NULL;
  if (v) {
    const int32_t *T = a->shape + mask->ndim;
    if (v->ndim < k + 1) {
      /* One window for every mask entry (MLX broadcasts the value to
       * (mask.size, window)): the same as where(mask, value, a), which
       * needs no count and no copy of the repeated window. */
      int32_t vs[CM_MAX_DIMS], ts[CM_MAX_DIMS], bs[CM_MAX_DIMS];
      int pad = k + 1 - v->ndim, nb;
      for (int d = 0; d < k + 1; d++) vs[d] = d < pad ? 1 : v->shape[d - pad];
      ts[0] = (int32_t)(mask->size > INT32_MAX ? INT32_MAX : mask->size);
      memcpy(ts + 1, T, sizeof(int32_t) * (size_t)k);
      cm_array *r = NULL;
      if (cm_broadcast_shapes(k + 1, vs, k + 1, ts, &nb, bs) == 0) {
        int32_t full[CM_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) full[d] = d < mask->ndim ? 1 : vs[1 + d - mask->ndim];
        cm_array *vr =
            memcmp(bs, ts, sizeof(int32_t) * (size_t)(k + 1))
                ? (cm_error(CM_ERR_VALUE, "[masked_scatter] Cannot broadcast the value to the "
                                          "masked windows."),
                   NULL)
                : cm_reshape(v, a->ndim, full, s);
        r = vr ? cm_where(mb, vr, a, s) : NULL;
        cm_release(vr);
      }
      cm_release(mb);
      cm_release(v);
      return r;
    } else { /* a stack of windows */
      shape[0] = v->shape[0];
      memcpy(shape + 1, T, sizeof(int32_t) * (size_t)k);
      int32_t bs[CM_MAX_DIMS];
      int nb; /* MLX's message when the windows do not broadcast */
      vb = cm_broadcast_shapes(v->ndim, v->shape, k + 1, shape, &nb, bs)
               ? NULL
               : cm_broadcast_to(v, k + 1, shape, s);
    }
  }
  cm_array *r = NULL;
  if (vb) {
    cm_array *ins[3] = {a, mb, vb};
    cm_masked_params mp = {.batch = 0};
    r = cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_masked_scatter, &mp, sizeof mp, ins, 3, s);
  }
  cm_release(mb);
  cm_release(v);
  cm_release(vb);
  return r;
}

/* ---- slice updates that combine ---- */

cm_array *cm_slice_update_reduce(cm_array *src, cm_array *update, int nstart, const int32_t *start,
                                 int nstop, const int32_t *stop, int nstrides,
                                 const int32_t *strides, cm_scatter_op op, cm_stream s) {
  if (op == CM_SCATTER_NONE)
    return cm_slice_update(src, update, nstart, start, nstop, stop, nstrides, strides, s);
  cm_array *w = cm_slice(src, nstart, start, nstop, stop, nstrides, strides, s);
  cm_array *u = w ? cm_astype(update, src->dtype, s) : NULL, *c = NULL;
  if (u) {
    /* the window combined with the update by the op's combine column */
#define COMBINE_CASE(CODE, combine) \
  case CM_SCATTER_##CODE: c = cm_binary(CM_BINARY_##combine, w, u, s); break;
#define CM_X(CODE, name, Name, combine, ...) \
  CM_SCATTER_IF_COMBINES_##combine(COMBINE_CASE(CODE, combine))
    switch (op) {
      CM_SCATTER_OPS(CM_X)
#undef CM_X
#undef COMBINE_CASE
    default: cm_error(CM_ERR_VALUE, "[slice_update] Invalid reduction."); break;
    }
  }
  cm_array *r =
      c ? cm_slice_update(src, c, nstart, start, nstop, stop, nstrides, strides, s) : NULL;
  cm_release(w);
  cm_release(u);
  cm_release(c);
  return r;
}
