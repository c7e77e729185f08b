/* .mlxfn states of the indexing primitives (indexing.c; the contract is
 * export_desc.h): Gather, Scatter, GatherAxis, ScatterAxis and
 * MaskedScatter, whose MLX form has a leading batch axis that a plain
 * cmlx node has not (the writer's batch bridge adds and drops it). */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "primitives/export_desc.h"
#include "primitives/indexing.h"

/* MLX's Scatter::ReduceType (SliceUpdate's too): Max, Min, Sum, Prod, None. */
const cm_scatter_op cm_export_scatter_ops[5] = {CM_SCATTER_MAX, CM_SCATTER_MIN, CM_SCATTER_SUM,
                                                CM_SCATTER_PROD, CM_SCATTER_NONE};

static int save_gather(const cm_array *a, xw *w, xsave *sv) {
  const cm_gather_params *g = cm_gather_params_of(a);
  int32_t v[CM_GATHER_MAX_AXES];
  for (int i = 0; i < g->naxes; i++) v[i] = g->axes[i];
  xw_ints(w, g->naxes, v);
  xw_ints(w, a->in[0]->ndim, cm_gather_slice_sizes(a, a->in, a->nin));
  return sv->name = "Gather", 0;
}
CM_XLOAD(load_gather) {
  int32_t ax[CM_MAX_DIMS], sz[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS), m = xr_ints(r, sz, CM_MAX_DIMS);
  CM_XMEASURE;
  CM_XINPUTS(1, 1 << 20);
  if (n != nin - 1)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Gather's axes and indices.");
  return cm_xload_one(cm_gather(in[0], in + 1, nin - 1, (const int *)ax, n, sz, m, s), o, outs);
}
const cm_export_desc cm_export_gather = {.save = save_gather,
                                         CM_EXPORT_NAMES({"Gather", load_gather, 0})};

/* MLX prints the scatters as "Scatter Sum", "ScatterAxis", ... */
static const char *scatter_display(const char *family, int op, char *buf, size_t size) {
  static const char *const words[] = {"", " Sum", " Prod", " Max", " Min"};
  snprintf(buf, size, "%s%s", family, op >= 0 && op < CM_XCOUNT(words) ? words[op] : "");
  return buf;
}
static const char *display_scatter(const cm_array *a, char *buf, size_t size) {
  return scatter_display(a->prim->name, cm_scatter_params_of(a)->op, buf, size);
}
static const char *display_scatter_axis(const cm_array *a, char *buf, size_t size) {
  return scatter_display(a->prim->name, cm_axis_index_params_of(a)->op, buf, size);
}

static int save_scatter(const cm_array *a, xw *w, xsave *sv) {
  const cm_scatter_params *g = cm_scatter_params_of(a);
  int32_t v[CM_GATHER_MAX_AXES];
  for (int i = 0; i < g->naxes; i++) v[i] = g->axes[i];
  xw_i32(w, CM_XINDEX_OF(cm_export_scatter_ops, g->op));
  xw_ints(w, g->naxes, v);
  return sv->name = "Scatter", 0;
}
CM_XLOAD(load_scatter) {
  int32_t k = xr_i32(r), ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  if (k < 0 || k >= CM_XCOUNT(cm_export_scatter_ops)) xr_bad(r, "an invalid scatter");
  CM_XMEASURE;
  CM_XINPUTS(2, 1 << 20);
  if (n != nin - 2)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Scatter's axes and indices.");
  return cm_xload_one(cm_scatter(in[0], in + 1, nin - 2, in[nin - 1], (const int *)ax, n,
                                 cm_export_scatter_ops[k], s),
                      o, outs);
}
const cm_export_desc cm_export_scatter = {.save = save_scatter,
                                          .display = display_scatter,
                                          CM_EXPORT_NAMES({"Scatter", load_scatter, 0})};

static int make_gather_axis(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                            cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_take_along_axis(in[0], in[1], v[0].i, s), o, outs);
}
const cm_export_desc cm_export_gather_axis = {
    .name = "GatherAxis",
    CM_EXPORT_FIELDS(cm_axis_index_params, CM_XF(CM_XF_I32, cm_axis_index_params, axis)),
    .nin_lo = 2,
    .nin_hi = 2,
    .make = make_gather_axis};

/* MLX's ScatterAxis::ReduceType: Sum, None. */
static int save_scatter_axis(const cm_array *a, xw *w, xsave *sv) {
  const cm_axis_index_params *g = cm_axis_index_params_of(a);
  xw_i32(w, g->op == CM_SCATTER_SUM ? 0 : 1), xw_i32(w, g->axis);
  return sv->name = "ScatterAxis", 0;
}
CM_XLOAD(load_scatter_axis) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  if (k < 0 || k > 1) xr_bad(r, "an invalid ScatterAxis");
  CM_XMEASURE;
  CM_XINPUTS(3, 3);
  return cm_xload_one(k == 0 ? cm_scatter_add_axis(in[0], in[1], in[2], ax, s)
                             : cm_put_along_axis(in[0], in[1], in[2], ax, s),
                      o, outs);
}
const cm_export_desc cm_export_scatter_axis = {
    .save = save_scatter_axis,
    .display = display_scatter_axis,
    CM_EXPORT_NAMES({"ScatterAxis", load_scatter_axis, 0})};

static int save_masked_scatter(const cm_array *a, xw *w, xsave *sv) {
  (void)w;
  if (cm_masked_params_of(a)->batch) return sv->name = "MaskedScatter", 0;
  if (a->nin > 7 || a->ndim >= CM_MAX_DIMS) return cm_export_unsupported(a);
  sv->batch = true, sv->mlx_ndim = a->ndim + 1, sv->mlx_shape[0] = 1;
  memcpy(sv->mlx_shape + 1, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  return sv->name = "MaskedScatter", 0;
}
CM_XLOAD(load_masked_scatter) {
  CM_XMEASURE;
  CM_XINPUTS(3, 3);
  /* MLX's form: a leading batch axis on all three, the mask of a's shape */
  const cm_array *a = in[0], *m = in[1], *v = in[2];
  if (m->dtype != CM_BOOL || !cm_same_shape(a, m) || a->ndim < 1 || v->ndim < 1 ||
      v->shape[0] != a->shape[0] || v->dtype != a->dtype)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad MaskedScatter.");
  cm_masked_params mp = {.batch = 1};
  return cm_xload_one(
      cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_masked_scatter, &mp, sizeof mp, in, 3, s), o,
      outs);
}
const cm_export_desc cm_export_masked_scatter = {
    .save = save_masked_scatter, CM_EXPORT_NAMES({"MaskedScatter", load_masked_scatter, 0})};
