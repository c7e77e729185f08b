/* .mlxfn states of the shape and layout primitives (shape.c, layout.c,
 * count.c; the contract is export_desc.h).  MLX's states name absolute
 * windows and axis lists where cmlx's blocks keep masks and normalised
 * windows: the savers translate, the loaders rebuild through the op
 * constructors, which check what a file says.
 *
 * MLX's Split has no cmlx primitive (cmlx splits into slices): Slice's
 * desc reads it. */
#include <stdlib.h>
#include <string.h>

#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "primitives/count.h"
#include "primitives/export_desc.h"
#include "primitives/indexing.h"
#include "primitives/layout.h"
#include "primitives/rules_util.h"
#include "primitives/shape.h"

/* ---- Reshape and its named forms ---- */

static int save_reshape(const cm_array *a, xw *w, xsave *sv) {
  /* the shape asked for, -1 included, as MLX's shape_ */
  const cm_reshape_params *r = cm_reshape_params_of(a);
  return xw_ints(w, r->ndim, r->shape), sv->name = "Reshape", 0;
}
CM_XLOAD(load_reshape) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_reshape(in[0], n, sh, s), o, outs);
}
const cm_export_desc cm_export_reshape = {.save = save_reshape,
                                          CM_EXPORT_NAMES({"Reshape", load_reshape, 0})};

static int make_flatten(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                        cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_flatten(in[0], v[0].i, v[1].i, s), o, outs);
}
const cm_export_desc cm_export_flatten = {
    .name = "Flatten",
    CM_EXPORT_FIELDS(cm_flatten_params, CM_XF(CM_XF_I32, cm_flatten_params, start_axis),
                     CM_XF(CM_XF_I32, cm_flatten_params, end_axis)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_flatten};

static int save_unflatten(const cm_array *a, xw *w, xsave *sv) {
  int ax = cm_unflatten_params_of(a)->axis, k = a->ndim - a->in[0]->ndim + 1;
  xw_i32(w, ax);
  xw_ints(w, k, a->shape + ax);
  return sv->name = "Unflatten", 0;
}
CM_XLOAD(load_unflatten) {
  int32_t ax = xr_i32(r), sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_unflatten(in[0], ax, n, sh, s), o, outs);
}
const cm_export_desc cm_export_unflatten = {.save = save_unflatten,
                                            CM_EXPORT_NAMES({"Unflatten", load_unflatten, 0})};

/* Squeeze (code 0), ExpandDims (1) and Transpose (2): a list of axes. */
CM_XLOAD(load_axes) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  const int *v = (const int *)ax;
  return cm_xload_one(code == 0   ? cm_squeeze(in[0], n, v, s)
                      : code == 1 ? cm_expand_dims(in[0], n, v, s)
                                  : cm_transpose(in[0], n, v, s),
                      o, outs);
}
static int save_squeeze(const cm_array *a, xw *w, xsave *sv) {
  int32_t v[CM_MAX_DIMS];
  int n = cm_export_mask_axes(cm_axes_mask_params_of(a)->mask, a->in[0]->ndim, v);
  return xw_ints(w, n, v), sv->name = "Squeeze", 0;
}
static int save_expand_dims(const cm_array *a, xw *w, xsave *sv) {
  int32_t v[CM_MAX_DIMS];
  int n = cm_export_mask_axes(cm_axes_mask_params_of(a)->mask, a->ndim, v);
  return xw_ints(w, n, v), sv->name = "ExpandDims", 0;
}
static int save_transpose(const cm_array *a, xw *w, xsave *sv) {
  int32_t v[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) v[i] = cm_transpose_params_of(a)->perm[i];
  return xw_ints(w, a->ndim, v), sv->name = "Transpose", 0;
}
const cm_export_desc cm_export_squeeze = {.save = save_squeeze,
                                          CM_EXPORT_NAMES({"Squeeze", load_axes, 0})};
const cm_export_desc cm_export_expand_dims = {.save = save_expand_dims,
                                              CM_EXPORT_NAMES({"ExpandDims", load_axes, 1})};
const cm_export_desc cm_export_transpose = {.save = save_transpose,
                                            CM_EXPORT_NAMES({"Transpose", load_axes, 2})};

/* ---- windows: Slice, SliceUpdate, Pad, Split ---- */

/* q's window of an array of big's shape as MLX's absolute start, end and
 * strides. */
static void window_of(const cm_slice_params *q, const cm_array *big, int32_t *st, int32_t *en,
                      int32_t *sd) {
  for (int i = 0; i < big->ndim; i++) st[i] = 0, en[i] = big->shape[i], sd[i] = 1;
  for (int k = 0; k < q->n; k++) {
    const cm_slice_axis *x = &q->ax[k];
    st[x->axis] = x->start, sd[x->axis] = x->step, en[x->axis] = x->start + x->step * x->len;
  }
}

static int save_slice(const cm_array *a, xw *w, xsave *sv) {
  const cm_array *in = a->in[0];
  int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  window_of(cm_slice_params_of(a), in, st, en, sd);
  xw_ints(w, in->ndim, st), xw_ints(w, in->ndim, en), xw_ints(w, in->ndim, sd);
  return sv->name = "Slice", 0;
}
static int save_slice_update(const cm_array *a, xw *w, xsave *sv) {
  const cm_array *big = a->in[0];
  int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  window_of(cm_slice_params_of(a), big, st, en, sd);
  xw_i32(w, 4); /* MLX's SliceUpdate::None: a plain write */
  xw_ints(w, big->ndim, st), xw_ints(w, big->ndim, en), xw_ints(w, big->ndim, sd);
  return sv->name = "SliceUpdate", 0;
}
/* Pad's block is a window of its output. */
static int save_pad(const cm_array *a, xw *w, xsave *sv) {
  int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS], v[CM_MAX_DIMS], lo[CM_MAX_DIMS],
      hi[CM_MAX_DIMS];
  window_of(cm_slice_params_of(a), a, st, en, sd);
  for (int i = 0; i < a->ndim; i++) {
    if (sd[i] != 1) return cm_export_unsupported(a);
    v[i] = i, lo[i] = st[i], hi[i] = a->shape[i] - en[i];
  }
  xw_ints(w, a->ndim, v), xw_ints(w, a->ndim, lo), xw_ints(w, a->ndim, hi);
  return sv->name = "Pad", 0;
}

/* MLX's absolute slice ends as the op reads them (see load_slice). */
static int slice_args(const cm_array *a, int n, int32_t *st, int32_t *en, const int32_t *sd) {
  if (n != a->ndim)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a slice of another rank.");
  for (int i = 0; i < n; i++) {
    int32_t d = a->shape[i];
    if (sd[i] == 0 || st[i] < 0 || (d > 0 && st[i] >= d && sd[i] < 0))
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad slice.");
    int64_t e = (int64_t)en[i] - d; /* in 64 bits: a file's end can be near INT32_MIN */
    if (en[i] < 0) en[i] = e < INT32_MIN + 1 ? INT32_MIN + 1 : (int32_t)e;
  }
  return 0;
}
CM_XLOAD(load_slice) {
  int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  int n1 = xr_ints(r, st, CM_MAX_DIMS), n2 = xr_ints(r, en, CM_MAX_DIMS);
  int n3 = xr_ints(r, sd, CM_MAX_DIMS);
  if (n1 != n2 || n1 != n3) xr_bad(r, "Slice vectors of different lengths");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (slice_args(in[0], n1, st, en, sd)) return -1;
  return cm_xload_one(cm_slice(in[0], n1, st, n1, en, n1, sd, s), o, outs);
}
CM_XLOAD(load_slice_update) {
  int32_t k = xr_i32(r), st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  int n1 = xr_ints(r, st, CM_MAX_DIMS), n2 = xr_ints(r, en, CM_MAX_DIMS);
  int n3 = xr_ints(r, sd, CM_MAX_DIMS);
  if (n1 != n2 || n1 != n3) xr_bad(r, "SliceUpdate vectors of different lengths");
  if (k < 0 || k >= CM_XCOUNT(cm_export_scatter_ops)) xr_bad(r, "an invalid SliceUpdate reduction");
  CM_XMEASURE;
  CM_XINPUTS(2, 2);
  if (slice_args(in[0], n1, st, en, sd)) return -1;
  if (cm_export_scatter_ops[k] == CM_SCATTER_NONE)
    return cm_xload_one(cm_slice_update(in[0], in[1], n1, st, n1, en, n1, sd, s), o, outs);
  return cm_xload_one(
      cm_slice_update_reduce(in[0], in[1], n1, st, n1, en, n1, sd, cm_export_scatter_ops[k], s), o,
      outs);
}
CM_XLOAD(load_pad) {
  int32_t ax[CM_MAX_DIMS], lo[CM_MAX_DIMS], hi[CM_MAX_DIMS];
  int n1 = xr_ints(r, ax, CM_MAX_DIMS), n2 = xr_ints(r, lo, CM_MAX_DIMS);
  int n3 = xr_ints(r, hi, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(2, 2);
  return cm_xload_one(cm_pad(in[0], n1, (const int *)ax, n2, lo, n3, hi, in[1], "constant", s), o,
                      outs);
}
CM_XLOAD(load_split) {
  int32_t idx[CM_MAX_DIMS * 4];
  int n = xr_ints(r, idx, CM_MAX_DIMS * 4);
  int32_t ax = xr_i32(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  cm_array **parts = NULL;
  int np = 0;
  if (cm_split_indices(in[0], n, idx, ax, &parts, &np, s)) return -1;
  if (np != o->n) {
    cm_array_list_free(parts, np);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Split outputs.");
  }
  for (int i = 0; i < np; i++) outs[i] = parts[i];
  free(parts);
  return 0;
}
const cm_export_desc cm_export_slice = {
    .save = save_slice, CM_EXPORT_NAMES({"Slice", load_slice, 0}, {"Split", load_split, 0})};
const cm_export_desc cm_export_slice_update = {
    .save = save_slice_update, CM_EXPORT_NAMES({"SliceUpdate", load_slice_update, 0})};
const cm_export_desc cm_export_pad = {.save = save_pad, CM_EXPORT_NAMES({"Pad", load_pad, 0})};

/* ---- DynamicSlice, DynamicSliceUpdate ---- */

/* The axes start's entries apply to (start is input 1, or 2 for the
 * update); the slice's sizes follow for DynamicSlice. */
static void put_dynamic_axes(const cm_array *a, const cm_array *start, xw *w) {
  int32_t v[CM_MAX_DIMS] = {0};
  int n = (int)start->size;
  for (int i = 0; i < n && i < CM_MAX_DIMS; i++) v[i] = cm_dynamic_slice_params_of(a)->axes[i];
  xw_ints(w, n, v);
}
static int save_dynamic_slice(const cm_array *a, xw *w, xsave *sv) {
  put_dynamic_axes(a, a->in[1], w);
  xw_ints(w, a->ndim, a->shape);
  return sv->name = "DynamicSlice", 0;
}
static int save_dynamic_slice_update(const cm_array *a, xw *w, xsave *sv) {
  put_dynamic_axes(a, a->in[2], w);
  return sv->name = "DynamicSliceUpdate", 0;
}
/* DynamicSlice (code 0): the axes and the slice's sizes;
 * DynamicSliceUpdate (1): the axes. */
CM_XLOAD(load_dynamic_slice) {
  int32_t ax[CM_MAX_DIMS], sz[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS), m = code ? 0 : xr_ints(r, sz, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(code ? 3 : 2, code ? 3 : 2);
  const int *v = (const int *)ax;
  return cm_xload_one(code ? cm_slice_update_dynamic(in[0], in[1], in[2], n, v, s)
                           : cm_slice_dynamic(in[0], in[1], n, v, m, sz, s),
                      o, outs);
}
const cm_export_desc cm_export_dynamic_slice = {
    .save = save_dynamic_slice, CM_EXPORT_NAMES({"DynamicSlice", load_dynamic_slice, 0})};
const cm_export_desc cm_export_dynamic_slice_update = {
    .save = save_dynamic_slice_update,
    CM_EXPORT_NAMES({"DynamicSliceUpdate", load_dynamic_slice, 1})};

/* ---- AsStrided, View, Diagonal, Concatenate ---- */

static int save_as_strided(const cm_array *a, xw *w, xsave *sv) {
  const cm_as_strided_params *q = cm_as_strided_params_of(a);
  xw_ints(w, a->ndim, a->shape), xw_i64s(w, q->ndim, q->strides);
  xw_u64(w, (uint64_t)q->offset);
  return sv->name = "AsStrided", 0;
}
CM_XLOAD(load_as_strided) {
  int32_t sh[CM_MAX_DIMS];
  int64_t st[CM_MAX_DIMS];
  int n = xr_shape(r, sh), m = xr_i64s(r, st, CM_MAX_DIMS);
  uint64_t off = xr_u64(r);
  if (n != m) xr_bad(r, "AsStrided vectors of different lengths");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  /* MLX does not check the window: the file must keep it inside the input */
  int64_t last = 0;
  bool empty = false, bad = off > (uint64_t)INT64_MAX;
  for (int i = 0; i < n; i++) {
    empty = empty || sh[i] == 0;
    if (st[i] < 0 || (sh[i] && st[i] > INT64_MAX / sh[i])) bad = true;
    else last += (int64_t)(sh[i] ? sh[i] - 1 : 0) * st[i];
  }
  if (bad || (!empty && (int64_t)off + last >= in[0]->size))
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: AsStrided reads outside "
                                  "its input.");
  return cm_xload_one(cm_as_strided(in[0], n, sh, n, st, (int64_t)off, s), o, outs);
}
const cm_export_desc cm_export_as_strided = {.save = save_as_strided,
                                             CM_EXPORT_NAMES({"AsStrided", load_as_strided, 0})};

static int make_view(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                     cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_view(in[0], v[0].t, s), o, outs);
}
const cm_export_desc cm_export_view = {.name = "View",
                                       .fields =
                                           (const cm_export_field[]){CM_XF_NODE(CM_XF_OUT_TYPE)},
                                       .nfields = 1,
                                       .nin_lo = 1,
                                       .nin_hi = 1,
                                       .make = make_view};

/* Read only: export_lower.c writes MLX's Gather composition. */
static int make_diagonal(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                         cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_diagonal(in[0], v[0].i, v[1].i, v[2].i, s), o, outs);
}
/* MLX's diagonal: a Gather at two aranges of indices, squeezed, the
 * diagonal's axis moved last. */
static cm_array *lower_diagonal(const cm_array *a) {
  if (a->nin != 1) return NULL;
  const cm_diagonal_params *d = cm_diagonal_params_of(a);
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  int n = a->shape[a->ndim - 1], ax[2] = {d->axis1, d->axis2};
  int64_t o1 = d->offset < 0 ? -(int64_t)d->offset : 0, o2 = d->offset > 0 ? d->offset : 0;
  int32_t sizes[CM_MAX_DIMS];
  memcpy(sizes, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  sizes[ax[0]] = sizes[ax[1]] = 1;
  cm_rt t = {0};
  cm_array *idx[2] = {RT(&t, cm_arange((double)o1, (double)(o1 + n), 1, CM_INT32, s)),
                      RT(&t, cm_arange((double)o2, (double)(o2 + n), 1, CM_INT32, s))};
  cm_array *g = t.fail ? NULL : RT(&t, cm_gather(x, idx, 2, ax, 2, sizes, x->ndim, s));
  int sq[2] = {ax[0] + 1, ax[1] + 1};
  cm_array *q = t.fail ? NULL : RT(&t, cm_squeeze(g, 2, sq, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_moveaxis(q, 0, -1, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

const cm_export_desc cm_export_diagonal = {
    .name = "CmlxDiagonal",
    .lower = lower_diagonal,
    CM_EXPORT_FIELDS(cm_diagonal_params, CM_XF(CM_XF_I32, cm_diagonal_params, offset),
                     CM_XF(CM_XF_I32, cm_diagonal_params, axis1),
                     CM_XF(CM_XF_I32, cm_diagonal_params, axis2)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_diagonal};

static int make_concatenate(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                            cm_array **outs, cm_stream s) {
  return cm_xload_one(cm_concatenate(in, nin, v[0].i, s), o, outs);
}
const cm_export_desc cm_export_concatenate = {
    .name = "Concatenate",
    CM_EXPORT_FIELDS(cm_concatenate_params, CM_XF(CM_XF_I32, cm_concatenate_params, axis)),
    .nin_lo = 1,
    .nin_hi = 1 << 20,
    .make = make_concatenate};

/* ---- layout.c: Broadcast, BroadcastAxes, AsType, Copy, Full, Depends ---- */

static int save_broadcast(const cm_array *a, xw *w, xsave *sv) {
  return xw_ints(w, a->ndim, a->shape), sv->name = "Broadcast", 0;
}
/* The common shape of every input (a shapeless broadcast: MLX's and
 * cmlx's Broadcast then has the arrays that give the shape as inputs). */
static int common_shape(cm_array *const *in, int nin, int *nd, int32_t *sh) {
  *nd = in[0]->ndim;
  memcpy(sh, in[0]->shape, sizeof *sh * (size_t)*nd);
  for (int i = 1; i < nin; i++)
    if (cm_broadcast_shapes(*nd, sh, in[i]->ndim, in[i]->shape, nd, sh)) return -1;
  return 0;
}
CM_XLOAD(load_broadcast) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(1, 1 << 20);
  if (nin > 1 && common_shape(in, nin, &n, sh)) return -1;
  return cm_xload_one(cm_broadcast_to(in[0], n, sh, s), o, outs);
}
const cm_export_desc cm_export_broadcast = {.save = save_broadcast,
                                            CM_EXPORT_NAMES({"Broadcast", load_broadcast, 0})};

/* MLX's ignore_axes: the last nignore, from the end. */
static int save_broadcast_axes(const cm_array *a, xw *w, xsave *sv) {
  int32_t v[CM_MAX_DIMS];
  int k = cm_broadcast_axes_params_of(a)->nignore;
  for (int i = 0; i < k; i++) v[i] = i - k;
  return xw_ints(w, k, v), sv->name = "BroadcastAxes", 0;
}
/* MLX's BroadcastAxes::output_shape: the inputs' shapes without the
 * ignored axes (negative, from the end, increasing) broadcast together,
 * then input 0's extents put back at those axes. */
static int broadcast_axes_shape(cm_array *const *in, int nin, const int32_t *ign, int n, int *nd,
                                int32_t *sh) {
  for (int j = 0; j < n; j++)
    if (ign[j] >= 0 || (j && ign[j] <= ign[j - 1]))
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: bad BroadcastAxes axes.");
  *nd = 0;
  for (int i = 0; i < nin; i++) {
    if (in[i]->ndim < n || -ign[0] > in[i]->ndim)
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: bad BroadcastAxes axes.");
    int32_t kept[CM_MAX_DIMS];
    int nk = 0;
    for (int d = 0; d < in[i]->ndim; d++) {
      bool skip = false;
      for (int j = 0; j < n && !skip; j++) skip = d == in[i]->ndim + ign[j];
      if (!skip) kept[nk++] = in[i]->shape[d];
    }
    if (cm_broadcast_shapes(*nd, sh, nk, kept, nd, sh)) return -1;
  }
  int dims = n + *nd;
  if (dims > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[import_function] Too many dimensions.");
  for (int j = 0; j < n; j++) { /* insert input 0's extent at dims + ign[j] */
    int at = dims + ign[j];
    if (at < 0 || at > *nd) return cm_error(CM_ERR_VALUE, "[import_function] Bad axes.");
    memmove(sh + at + 1, sh + at, sizeof *sh * (size_t)(*nd - at));
    sh[at] = in[0]->shape[in[0]->ndim + ign[j]];
    (*nd)++;
  }
  return 0;
}
CM_XLOAD(load_broadcast_axes) {
  int32_t ign[CM_MAX_DIMS], sh[CM_MAX_DIMS];
  int n = xr_ints(r, ign, CM_MAX_DIMS), nd;
  CM_XMEASURE;
  CM_XINPUTS(2, 1 << 20);
  if (broadcast_axes_shape(in, nin, ign, n, &nd, sh)) return -1;
  return cm_xload_one(cm_broadcast_to(in[0], nd, sh, s), o, outs);
}
const cm_export_desc cm_export_broadcast_axes = {
    .save = save_broadcast_axes, CM_EXPORT_NAMES({"BroadcastAxes", load_broadcast_axes, 0})};

static int make_astype(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_astype(in[0], v[0].t, s), o, outs);
}
const cm_export_desc cm_export_astype = {.name = "AsType",
                                         .fields =
                                             (const cm_export_field[]){CM_XF_NODE(CM_XF_OUT_TYPE)},
                                         .nfields = 1,
                                         .nin_lo = 1,
                                         .nin_hi = 1,
                                         .make = make_astype};

static int make_copy(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                     cm_stream s) {
  (void)v, (void)nin;
  return cm_xload_one(
      cm_op_node(in[0]->dtype, in[0]->ndim, in[0]->shape, &cm_prim_copy, NULL, 0, in, 1, s), o,
      outs);
}
const cm_export_desc cm_export_copy = {.name = "Copy", .nin_lo = 1, .nin_hi = 1, .make = make_copy};

static int make_full(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                     cm_stream s) {
  (void)v, (void)nin;
  if (o->n != 1) return cm_xload_one(NULL, o, outs);
  /* the traced shape, unless the input no longer fits it: a shapeless
   * replay, where Full's input has the output's shape (MLX's Full) */
  int nd = o->ndims[0];
  const int32_t *sh = o->shapes[0];
  int nb;
  int32_t b[CM_MAX_DIMS];
  if (cm_broadcast_shapes(in[0]->ndim, in[0]->shape, nd, sh, &nb, b) ||
      !cm_shape_equal(nb, b, nd, sh)) {
    cm_error_clear();
    nd = in[0]->ndim, sh = in[0]->shape;
  }
  return cm_xload_one(cm_full(nd, sh, in[0], o->dtypes[0], s), o, outs);
}
const cm_export_desc cm_export_full = {.name = "Full", .nin_lo = 1, .nin_hi = 1, .make = make_full};

/* MLX has no Identity (the transforms put it on traced inputs): its input. */
static cm_array *lower_identity(const cm_array *a) {
  return a->nin == 1 ? cm_retain(a->in[0]) : NULL;
}
const cm_export_desc cm_export_identity = {.lower = lower_identity};

/* No state; the outputs first among the inputs (MLX's Depends). */
static int make_depends(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                        cm_array **outs, cm_stream s) {
  (void)v;
  cm_array *got[64] = {NULL};
  if (o->n < 1 || o->n > nin || o->n > 64) return cm_xload_bad("Depends' outputs");
  if (cm_depends(o->n, in, nin - o->n, in + o->n, s, got)) return -1;
  return cm_xload_results(got, o->n, o, outs);
}
const cm_export_desc cm_export_depends = {
    .name = "Depends", .nin_lo = 0, .nin_hi = 1 << 20, .make = make_depends};

/* ---- count.c: NumberOfElements ---- */

static int save_number_of_elements(const cm_array *a, xw *w, xsave *sv) {
  const cm_count_params *c = cm_count_params_of(a);
  int32_t v[CM_MAX_DIMS];
  int n = cm_export_mask_axes(c->axes, a->in[0]->ndim, v);
  xw_ints(w, n, v), xw_bool(w, c->inverted), xw_dtype(w, (cm_dtype)c->dtype);
  return sv->name = "NumberOfElements", 0;
}
CM_XLOAD(load_number_of_elements) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  bool inv = xr_bool(r);
  cm_dtype t = xr_dtype(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  double count = 1;
  if (cm_xload_check_axes(n, ax, in[0]->ndim)) return -1;
  for (int i = 0; i < n; i++) count *= in[0]->shape[ax[i]];
  (void)s;
  return cm_xload_one(cm_array_scalar_double(inv ? 1.0 / count : count, t), o, outs);
}
const cm_export_desc cm_export_number_of_elements = {
    .save = save_number_of_elements,
    CM_EXPORT_NAMES({"NumberOfElements", load_number_of_elements, 0})};
