/* Indexing primitives: descriptors, printed names and the derivative
 * rules (MLX's, built from the indexing ops themselves):
 *   Gather:  vjp = scatter_add of the cotangent into zeros; jvp = gather.
 *   Scatter: none: d/da = cotangent with the written windows zeroed,
 *            d/dupdates = gather of the cotangent; sum: d/da = cotangent;
 *            max/min: the cotangent flows where the result equals the
 *            operand.  jvp for none and sum (linear in both inputs).
 *   GatherAxis / ScatterAxis: the same along one axis.
 *   MaskedScatter: d/da = cotangent off the mask, d/dsrc = the
 *            cotangent's masked entries in order (MaskedGather); vmap
 *            gives one batched node (each entry reads its own source).
 * Indices (and masks) are locally constant: as in MLX, asking for their
 * derivative is a ValueError that says to stop the gradient there. */
#include "primitives/indexing.h"
#include "primitives/export_desc.h"

#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/shape.h"
#include "ops/ternary.h"
#include "primitives/rules_util.h"

const int32_t *cm_gather_slice_sizes(const cm_array *out, cm_array *const *in, int nin) {
  return out->shape + (nin > 1 ? in[1]->ndim : 0);
}

const int32_t *cm_scatter_window(cm_array *const *in, int nin) {
  const cm_array *upd = in[nin - 1];
  return upd->shape + (upd->ndim - in[0]->ndim);
}

/* ---- small helpers ---- */

/* MLX's error when a derivative is asked for indices or a mask: the
 * caller should have cut the gradient with stop_gradient. */
static int index_grad_error(const char *op, const char *kind, const char *what) {
  return cm_error(CM_ERR_VALUE,
                  "[%s] Cannot calculate %s with respect to %s. Use stop_gradient on %s to stop "
                  "gradients from being computed.",
                  op, kind, what, what);
}

/* A jvp whose inputs first..last carry indices: an error if any of them
 * has a tangent (MLX's argnums then name them). */
static int check_index_tangents(const char *op, cm_array *const *tangents, int first, int last,
                                const char *what) {
  for (int i = first; i <= last; i++)
    if (tangents[i]) return index_grad_error(op, "JVP", what);
  return 0;
}

static int set(cm_array **slot, cm_array *v) {
  *slot = v;
  return v ? 0 : -1;
}

static void unpack_axes(const uint8_t *in, int n, int *out) {
  for (int i = 0; i < n; i++) out[i] = in[i];
}

/* A node of prim over ins with the shape/dtype given. */
static cm_array *node(const cm_prim *prim, const void *p, size_t psize, cm_dtype t, int ndim,
                      const int32_t *shape, cm_array *const *ins, int nin, cm_stream s) {
  return cm_op_node(t, ndim, shape, prim, p, psize, ins, nin, s);
}

/* x, or zeros shaped like ref (x NULL). */
static cm_array *or_zeros(cm_array *x, cm_array *ref, cm_stream s) {
  return x ? cm_retain(x) : cm_zeros(ref->ndim, ref->shape, ref->dtype, s);
}

/* The JVP of a gather family primitive, linear in its operand in[0]: the same
 * primitive over the operand's tangent, the indices (or mask) held. */
static int gather_like_jvp(const cm_prim *prim, const void *p, size_t psize, cm_array *out,
                           cm_array *const *in, int nin, cm_array *const *tangents,
                           cm_array **tangent, cm_stream s) {
  if (!tangents[0]) return set(tangent, cm_zeros(out->ndim, out->shape, out->dtype, s));
  cm_array *ins[CM_GATHER_MAX_AXES + 2];
  for (int i = 0; i < nin; i++) ins[i] = in[i];
  ins[0] = tangents[0];
  return set(tangent, node(prim, p, psize, tangents[0]->dtype, out->ndim, out->shape, ins, nin, s));
}

/* The JVP of an assigning or summing scatter family primitive, linear in the
 * operand in[0] and the updates in[nin - 1] together: the same primitive
 * over their tangents (zeros for one without), the indices (or mask) held. */
static int scatter_like_jvp(const cm_prim *prim, const void *p, size_t psize, cm_array *out,
                            cm_array *const *in, int nin, cm_array *const *tangents,
                            cm_array **tangent, cm_stream s) {
  cm_array *ins[CM_GATHER_MAX_AXES + 2];
  for (int i = 0; i < nin; i++) ins[i] = in[i];
  ins[0] = or_zeros(tangents[0], in[0], s);
  ins[nin - 1] = ins[0] ? or_zeros(tangents[nin - 1], in[nin - 1], s) : NULL;
  cm_array *r =
      ins[nin - 1] ? node(prim, p, psize, out->dtype, out->ndim, out->shape, ins, nin, s) : NULL;
  cm_release(ins[0]);
  cm_release(ins[nin - 1]);
  return set(tangent, r);
}

/* ---- batching helpers ---- */

/* The batch size: the extent of the first batched input's batch axis. */
static int32_t batch_size(cm_array *const *in, int nin, const int *axes) {
  for (int i = 0; i < nin; i++)
    if (axes[i] >= 0) return in[i]->shape[axes[i]];
  return 1;
}

/* x with its batch axis (ax; -1: none, a size-1 axis is added) moved to
 * the front and, after it, size-1 axes added so that it has nd axes per
 * example (indices broadcast from the right, so the batch axes of index
 * arrays of different ranks must line up before they broadcast). */
static cm_array *batch_front(cm_rt *t, cm_array *x, int ax, int nd, cm_stream s) {
  int pe = x->ndim - (ax >= 0);
  cm_array *f = ax >= 0 ? RT(t, cm_moveaxis(x, ax, 0, s)) : NULL;
  if (ax < 0) {
    int z = 0;
    f = RT(t, cm_expand_dims(x, 1, &z, s));
  }
  if (pe >= nd) return f;
  int add[CM_MAX_DIMS];
  for (int i = 0; i < nd - pe; i++) add[i] = 1 + i;
  return RT(t, cm_expand_dims(f, nd - pe, add, s));
}

/* arange(b) shaped (b, 1, ..., 1) with nd axes: the index that pairs each
 * batch entry of the operand with the same entry of the indices. */
static cm_array *batch_iota(cm_rt *t, int32_t b, int nd, cm_stream s) {
  int32_t shp[CM_MAX_DIMS];
  shp[0] = b;
  for (int i = 1; i < nd; i++) shp[i] = 1;
  cm_array *r = RT(t, cm_arange(0, b, 1, CM_INT32, s));
  return RT(t, cm_reshape(r, nd, shp, s));
}

/* ---- Gather ---- */

static int gather_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                      cm_stream s) {
  (void)p;
  const cm_gather_params *gp = cm_gather_params_of(out);
  int axes[CM_MAX_DIMS];
  unpack_axes(gp->axes, gp->naxes, axes);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++)
    if (argnums[i] != 0) return index_grad_error("gather", "VJP", "indices");
  for (int i = 0; i < nargs; i++) {
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *g =
        z ? cm_scatter(z, in + 1, nin - 1, cotan, axes, gp->naxes, CM_SCATTER_SUM, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int gather_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (check_index_tangents("gather", tangents, 1, nin - 1, "indices")) return -1;
  return gather_like_jvp(&cm_prim_gather, p, sizeof(cm_gather_params), out, in, nin, tangents,
                         tangent, s);
}

/* Batching (as MLX): a batched operand alone adds its batch axis to the
 * slice (the result's batch axis follows the index axes); batched indices
 * alone get their batch axis in front; both batched add an arange index
 * over the operand's batch axis with a slice of 1 there, squeezed after. */
static int gather_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                       const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  const cm_gather_params *gp = cm_gather_params_of(node);
  int nidx = nin - 1, k = gp->naxes;
  int a_nd = in[0]->ndim - (axes[0] >= 0);
  int i_nd = node->ndim - a_nd;
  const int32_t *sizes = node->shape + i_nd;
  int32_t b = batch_size(in, nin, axes);
  bool idx_b = false;
  for (int i = 1; i < nin; i++) idx_b |= axes[i] >= 0;
  cm_rt t = {.n = 0};
  cm_array *a = axes[0] >= 0 ? RT(&t, cm_moveaxis(in[0], axes[0], 0, s)) : in[0];
  cm_array *idx[CM_GATHER_MAX_AXES + 1];
  int ax[CM_GATHER_MAX_AXES + 1];
  int32_t sz[CM_MAX_DIMS + 1];
  cm_array *r = NULL;
  if (!idx_b) {
    for (int j = 0; j < nidx; j++) idx[j] = in[1 + j];
    for (int j = 0; j < k; j++) ax[j] = gp->axes[j] + 1;
    sz[0] = b;
    for (int d = 0; d < a_nd; d++) sz[d + 1] = sizes[d];
    r = RT(&t, cm_gather(a, idx, nidx, ax, k, sz, a_nd + 1, s));
    *out_axis = i_nd;
  } else if (axes[0] < 0) {
    for (int j = 0; j < nidx; j++) idx[j] = batch_front(&t, in[1 + j], axes[1 + j], i_nd, s);
    for (int j = 0; j < k; j++) ax[j] = gp->axes[j];
    r = RT(&t, cm_gather(a, idx, nidx, ax, k, sizes, a_nd, s));
    *out_axis = 0;
  } else {
    if (k + 1 > CM_GATHER_MAX_AXES)
      return cm_error(CM_ERR_VALUE, "[vmap] Too many index arrays for Gather.");
    for (int j = 0; j < nidx; j++) idx[j] = batch_front(&t, in[1 + j], axes[1 + j], i_nd, s);
    idx[nidx] = batch_iota(&t, b, i_nd + 1, s);
    for (int j = 0; j < k; j++) ax[j] = gp->axes[j] + 1;
    ax[k] = 0;
    sz[0] = 1;
    for (int d = 0; d < a_nd; d++) sz[d + 1] = sizes[d];
    cm_array *g = RT(&t, cm_gather(a, idx, nidx + 1, ax, k + 1, sz, a_nd + 1, s));
    int sq = i_nd + 1;
    r = RT(&t, cm_squeeze(g, 1, &sq, s));
    *out_axis = 0;
  }
  return cm_rt_done(&t, r, out);
}

/* Shapeless compile (MLX's output_shapes): the indices' shape, then the
 * traced slice sizes (the node's trailing axes); GatherAxis: the indices'
 * shape. */
static int gather_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        int *ndim, int32_t *shape) {
  (void)p;
  int ni = nin > 1 ? in[1]->ndim : 0, ns = node->in[0]->ndim;
  if (ni + ns > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[gather] The output would have more than %d dimensions.",
                    CM_MAX_DIMS);
  for (int i = 1; i < nin; i++)
    if (!cm_same_shape(in[i], in[1]))
      return cm_error(CM_ERR_VALUE, "[gather] The index arrays must have one shape.");
  if (ni) memcpy(shape, in[1]->shape, sizeof *shape * (size_t)ni);
  memcpy(shape + ni, cm_gather_slice_sizes(node, node->in, node->nin), sizeof *shape * (size_t)ns);
  *ndim = ni + ns;
  return 0;
}

static int gather_axis_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                             int *ndim, int32_t *shape) {
  (void)node, (void)nin, (void)p;
  *ndim = in[1]->ndim;
  if (*ndim) memcpy(shape, in[1]->shape, sizeof *shape * (size_t)*ndim);
  return 0;
}

const cm_prim cm_prim_gather = {.name = "Gather",
                                .export = &cm_export_gather,
                                CM_PARAMS_OF(cm_gather_params),
                                .output_shape = gather_shape,
                                .vjp = gather_vjp,
                                .jvp = gather_jvp,
                                .vmap = gather_vmap};

/* ---- Scatter ---- */

static const char *const scatter_names[CM_SCATTER_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_SCATTER_##CODE] = Name,
    CM_SCATTER_OPS(CM_X)
#undef CM_X
};

static const char *scatter_name(const cm_params *p, size_t size) {
  unsigned op = cm_scatter_params_of_block(p, size)->op;
  return op < CM_SCATTER_NUM_OPS ? scatter_names[op] : "Scatter";
}

/* gather(x, indices) with the scatter's window: the updates' shape. */
static cm_array *gather_window(cm_array *x, cm_array *const *in, int nin, const int *axes,
                               int naxes, cm_stream s) {
  return cm_gather(x, in + 1, nin - 2, axes, naxes, cm_scatter_window(in, nin), x->ndim, s);
}

static cm_array *scatter_vjp_a(cm_array *out, cm_array *const *in, int nin,
                               const cm_scatter_params *sp, const int *axes, cm_array *cotan,
                               cm_stream s) {
  cm_array *upd = in[nin - 1];
  switch (sp->op) {
  case CM_SCATTER_NONE: {
    cm_array *z = cm_zeros(upd->ndim, upd->shape, cotan->dtype, s);
    cm_array *g =
        z ? cm_scatter(cotan, in + 1, nin - 2, z, axes, sp->naxes, CM_SCATTER_NONE, s) : NULL;
    cm_release(z);
    return g;
  }
  case CM_SCATTER_SUM: return cm_retain(cotan);
  default: { /* max / min */
    cm_array *eq = cm_equal(out, in[0], s);
    cm_array *z = eq ? cm_zeros(0, NULL, cotan->dtype, s) : NULL;
    cm_array *g = z ? cm_where(eq, cotan, z, s) : NULL;
    cm_release(eq);
    cm_release(z);
    return g;
  }
  }
}

static cm_array *scatter_vjp_updates(cm_array *out, cm_array *const *in, int nin,
                                     const cm_scatter_params *sp, const int *axes, cm_array *cotan,
                                     cm_stream s) {
  cm_array *g = gather_window(cotan, in, nin, axes, sp->naxes, s);
  if (!g || sp->op == CM_SCATTER_NONE || sp->op == CM_SCATTER_SUM) return g;
  /* max / min: where the gathered result equals the update */
  cm_array *res = gather_window(out, in, nin, axes, sp->naxes, s);
  cm_array *eq = res ? cm_equal(res, in[nin - 1], s) : NULL;
  cm_array *z = eq ? cm_zeros(0, NULL, cotan->dtype, s) : NULL;
  cm_array *r = z ? cm_where(eq, g, z, s) : NULL;
  cm_release(g);
  cm_release(res);
  cm_release(eq);
  cm_release(z);
  return r;
}

static int scatter_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)p;
  const cm_scatter_params *sp = cm_scatter_params_of(out);
  int axes[CM_MAX_DIMS];
  unpack_axes(sp->axes, sp->naxes, axes);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  if (sp->op == CM_SCATTER_PROD)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[scatter] VJP not implemented for scatter_prod.");
  for (int i = 0; i < nargs; i++)
    if (argnums[i] != 0 && argnums[i] != nin - 1)
      return index_grad_error("scatter", "VJP", "indices");
  for (int i = 0; i < nargs; i++) {
    cm_array *g = argnums[i] == 0 ? scatter_vjp_a(out, in, nin, sp, axes, cotan, s)
                                  : scatter_vjp_updates(out, in, nin, sp, axes, cotan, s);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int scatter_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  const cm_scatter_params *sp = cm_scatter_params_of(out);
  if (sp->op != CM_SCATTER_NONE && sp->op != CM_SCATTER_SUM)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[scatter] JVP not implemented for %s.",
                    scatter_name(p, out->params_size));
  if (check_index_tangents("scatter", tangents, 1, nin - 2, "indices")) return -1;
  return scatter_like_jvp(&cm_prim_scatter, p, sizeof *sp, out, in, nin, tangents, tangent, s);
}

/* Batching: the operand's batch axis goes in front (an unbatched operand
 * is broadcast to the batch).  Unbatched indices keep their axes and the
 * window gains the whole batch axis (the updates' batch axis then sits
 * right after the index axes); batched indices go in front with an arange
 * index over the batch axis and a window of 1 there. */
static int scatter_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  const cm_scatter_params *sp = cm_scatter_params_of(node);
  int nidx = nin - 2, k = sp->naxes;
  cm_array *a0 = in[0], *u0 = in[nin - 1];
  int ua = axes[nin - 1];
  int a_nd = a0->ndim - (axes[0] >= 0);
  int u_nd = u0->ndim - (ua >= 0);
  int i_nd = u_nd - a_nd;
  int32_t b = batch_size(in, nin, axes);
  bool idx_b = false;
  for (int i = 1; i < nin - 1; i++) idx_b |= axes[i] >= 0;
  /* The updates' per-example shape (I + U). */
  int32_t ush[CM_MAX_DIMS];
  for (int d = 0, e = 0; d < u0->ndim; d++)
    if (d != ua) ush[e++] = u0->shape[d];
  cm_rt t = {.n = 0};
  cm_array *a;
  if (axes[0] >= 0) {
    a = RT(&t, cm_moveaxis(a0, axes[0], 0, s));
  } else {
    int32_t ash[CM_MAX_DIMS];
    ash[0] = b;
    for (int d = 0; d < a_nd; d++) ash[d + 1] = a0->shape[d];
    a = RT(&t, cm_broadcast_to(a0, a_nd + 1, ash, s));
  }
  cm_array *idx[CM_GATHER_MAX_AXES + 1];
  int ax[CM_GATHER_MAX_AXES + 1];
  int32_t tsh[CM_MAX_DIMS + 1];
  cm_array *u, *r;
  if (!idx_b) {
    for (int j = 0; j < nidx; j++) idx[j] = in[1 + j];
    for (int j = 0; j < k; j++) ax[j] = sp->axes[j] + 1;
    /* updates: I + [B] + U */
    if (ua >= 0) {
      u = RT(&t, cm_moveaxis(u0, ua, i_nd, s));
    } else {
      for (int d = 0, e = 0; d <= u_nd; d++) tsh[d] = d == i_nd ? b : ush[e++];
      int pos = i_nd;
      cm_array *x = RT(&t, cm_expand_dims(u0, 1, &pos, s));
      u = RT(&t, cm_broadcast_to(x, u_nd + 1, tsh, s));
    }
    r = RT(&t, cm_scatter(a, idx, nidx, u, ax, k, (cm_scatter_op)sp->op, s));
  } else {
    if (k + 1 > CM_GATHER_MAX_AXES)
      return cm_error(CM_ERR_VALUE, "[vmap] Too many index arrays for Scatter.");
    for (int j = 0; j < nidx; j++) idx[j] = batch_front(&t, in[1 + j], axes[1 + j], i_nd, s);
    idx[nidx] = batch_iota(&t, b, i_nd + 1, s);
    for (int j = 0; j < k; j++) ax[j] = sp->axes[j] + 1;
    ax[k] = 0;
    /* updates: [B] + I + [1] + U */
    tsh[0] = b;
    for (int d = 0, e = 0; d < u_nd + 1; d++) tsh[d + 1] = d == i_nd ? 1 : ush[e++];
    cm_array *x = ua >= 0 ? RT(&t, cm_moveaxis(u0, ua, 0, s)) : NULL;
    if (ua < 0) {
      int z = 0;
      x = RT(&t, cm_expand_dims(u0, 1, &z, s));
    }
    int pos = i_nd + 1;
    x = RT(&t, cm_expand_dims(x, 1, &pos, s));
    u = RT(&t, cm_broadcast_to(x, u_nd + 2, tsh, s));
    r = RT(&t, cm_scatter(a, idx, nidx + 1, u, ax, k + 1, (cm_scatter_op)sp->op, s));
  }
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

const cm_prim cm_prim_scatter = {.name = "Scatter",
                                 .export = &cm_export_scatter,
                                 CM_PARAMS_OF(cm_scatter_params),
                                 .op_name = scatter_name,
                                 .vjp = scatter_vjp,
                                 .jvp = scatter_jvp,
                                 .vmap = scatter_vmap};

/* ---- GatherAxis / ScatterAxis ---- */

static int gather_axis_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                           cm_stream s) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++)
    if (argnums[i] != 0) return index_grad_error("gather_axis", "VJP", "indices");
  for (int i = 0; i < nargs; i++) {
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *g = z ? cm_scatter_add_axis(z, in[1], cotan, ap->axis, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int gather_axis_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (check_index_tangents("gather_axis", tangents, 1, 1, "indices")) return -1;
  return gather_like_jvp(&cm_prim_gather_axis, p, sizeof(cm_axis_index_params), out, in, nin,
                         tangents, tangent, s);
}

/* Batching: every input's batch axis goes in front (a size-1 one where
 * unbatched, broadcast by the op), the axis shifts by one. */
static int gather_axis_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                            const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(node);
  int nd = in[0]->ndim - (axes[0] >= 0);
  cm_rt t = {.n = 0};
  cm_array *x = batch_front(&t, in[0], axes[0], nd, s);
  cm_array *i = batch_front(&t, in[1], axes[1], nd, s);
  cm_array *r = RT(&t, cm_take_along_axis(x, i, ap->axis + 1, s));
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

const cm_prim cm_prim_gather_axis = {.name = "GatherAxis",
                                     .export = &cm_export_gather_axis,
                                     .output_shape = gather_axis_shape,
                                     CM_PARAMS_OF(cm_axis_index_params),
                                     .vjp = gather_axis_vjp,
                                     .jvp = gather_axis_jvp,
                                     .vmap = gather_axis_vmap};

static const char *scatter_axis_name(const cm_params *p, size_t size) {
  return cm_axis_index_params_of_block(p, size)->op == CM_SCATTER_SUM ? "ScatterAxisSum"
                                                                      : "ScatterAxis";
}

static int scatter_axis_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                            cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                            cm_stream s) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++)
    if (argnums[i] == 1) return index_grad_error("scatter_axis", "VJP", "indices");
  for (int i = 0; i < nargs; i++) {
    cm_array *g = NULL;
    if (argnums[i] == 0) {
      if (ap->op == CM_SCATTER_SUM) {
        g = cm_retain(cotan);
      } else {
        cm_array *z = cm_zeros(in[2]->ndim, in[2]->shape, cotan->dtype, s);
        g = z ? cm_put_along_axis(cotan, in[1], z, ap->axis, s) : NULL;
        cm_release(z);
      }
    } else if (argnums[i] == 2) {
      g = cm_take_along_axis(cotan, in[1], ap->axis, s);
    } else {
      continue;
    }
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int scatter_axis_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                            cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (check_index_tangents("scatter_axis", tangents, 1, 1, "indices")) return -1;
  return scatter_like_jvp(&cm_prim_scatter_axis, p, sizeof(cm_axis_index_params), out, in, nin,
                          tangents, tangent, s);
}

static int scatter_axis_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                             const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_axis_index_params *ap = cm_axis_index_params_of(node);
  int nd = in[0]->ndim - (axes[0] >= 0);
  int32_t b = batch_size(in, 3, axes);
  cm_rt t = {.n = 0};
  cm_array *a = batch_front(&t, in[0], axes[0], nd, s);
  if (axes[0] < 0 && a) { /* the result carries the batch: broadcast the operand */
    int32_t sh[CM_MAX_DIMS];
    sh[0] = b;
    for (int d = 0; d < nd; d++) sh[d + 1] = in[0]->shape[d];
    a = RT(&t, cm_broadcast_to(a, nd + 1, sh, s));
  }
  cm_array *i = batch_front(&t, in[1], axes[1], nd, s);
  cm_array *u = batch_front(&t, in[2], axes[2], nd, s);
  cm_array *r = ap->op == CM_SCATTER_SUM ? RT(&t, cm_scatter_add_axis(a, i, u, ap->axis + 1, s))
                                         : RT(&t, cm_put_along_axis(a, i, u, ap->axis + 1, s));
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

const cm_prim cm_prim_scatter_axis = {.name = "ScatterAxis",
                                      .export = &cm_export_scatter_axis,
                                      CM_PARAMS_OF(cm_axis_index_params),
                                      .op_name = scatter_axis_name,
                                      .vjp = scatter_axis_vjp,
                                      .jvp = scatter_axis_jvp,
                                      .vmap = scatter_axis_vmap};

/* ---- MaskedScatter / MaskedGather ---- */

#define MASKED_PSIZE sizeof(cm_masked_params)

/* MaskedGather(x, mask) shaped like src: the masked entries of x in order. */
static cm_array *masked_gather(cm_array *x, cm_array *mask, const cm_array *src, const cm_params *p,
                               cm_stream s) {
  cm_array *ins[2] = {x, mask};
  return node(&cm_prim_masked_gather, p, MASKED_PSIZE, x->dtype, src->ndim, src->shape, ins, 2, s);
}

/* MaskedScatter(a, mask, src). */
static cm_array *masked_scatter(cm_array *a, cm_array *mask, cm_array *src, const cm_params *p,
                                cm_stream s) {
  cm_array *ins[3] = {a, mask, src};
  return node(&cm_prim_masked_scatter, p, MASKED_PSIZE, a->dtype, a->ndim, a->shape, ins, 3, s);
}

static int masked_scatter_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s) {
  (void)out, (void)nin;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++)
    if (argnums[i] == 1) return index_grad_error("masked_scatter", "VJP", "mask");
  for (int i = 0; i < nargs; i++) {
    cm_array *g = NULL;
    if (argnums[i] == 0) {
      cm_array *z = cm_zeros(0, NULL, cotan->dtype, s);
      g = z ? cm_where(in[1], z, cotan, s) : NULL;
      cm_release(z);
    } else {
      g = masked_gather(cotan, in[1], in[2], p, s);
    }
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int masked_scatter_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (check_index_tangents("masked_scatter", tangents, 1, 1, "mask")) return -1;
  return scatter_like_jvp(&cm_prim_masked_scatter, p, MASKED_PSIZE, out, in, nin, tangents, tangent,
                          s);
}

/* Batching (as MLX): every input's batch axis goes in front (an unbatched
 * one is broadcast to the batch) and the node becomes a batched one, so
 * each entry reads its source from the start.  A node that is batched
 * already (a nested vmap) gets its two leading axes merged into one, and
 * split again after. */
static int masked_vmap(const cm_array *node_, cm_array *const *in, int nin, const cm_params *p,
                       const int *axes, cm_array **out, int *out_axis, bool gather, cm_stream s) {
  (void)p;
  bool nested = cm_masked_params_of(node_)->batch != 0;
  int32_t b = batch_size(in, nin, axes);
  cm_rt t = {.n = 0};
  cm_array *v[3];
  for (int i = 0; i < nin; i++) {
    cm_array *x = in[i];
    if (axes[i] >= 0) {
      x = RT(&t, cm_moveaxis(x, axes[i], 0, s));
    } else {
      int32_t sh[CM_MAX_DIMS + 1];
      sh[0] = b;
      for (int d = 0; d < x->ndim; d++) sh[d + 1] = x->shape[d];
      int z = 0;
      cm_array *e = RT(&t, cm_expand_dims(x, 1, &z, s));
      x = RT(&t, cm_broadcast_to(e, x->ndim + 1, sh, s));
    }
    v[i] = nested ? RT(&t, cm_flatten(x, 0, 1, s)) : x;
  }
  cm_masked_params q = {.batch = 1};
  cm_array *r = NULL;
  if (!t.fail) {
    /* the per-example output shape, with the batch in front (merged) */
    int32_t sh[CM_MAX_DIMS + 1];
    int nd = node_->ndim + 1 - nested;
    sh[0] = nested ? b * node_->shape[0] : b;
    for (int d = nested; d < node_->ndim; d++) sh[d + 1 - nested] = node_->shape[d];
    cm_array *ins[3] = {v[0], v[1], nin > 2 ? v[2] : NULL};
    const cm_prim *prim = gather ? &cm_prim_masked_gather : &cm_prim_masked_scatter;
    r = RT(&t, node(prim, &q, sizeof q, v[0]->dtype, nd, sh, ins, nin, s));
  }
  if (nested) {
    int32_t split[2] = {b, node_->shape[0]};
    r = RT(&t, cm_unflatten(r, 0, 2, split, s));
  }
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

static int masked_scatter_vmap(const cm_array *node_, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s) {
  return masked_vmap(node_, in, nin, p, axes, out, out_axis, false, s);
}

const cm_prim cm_prim_masked_scatter = {.name = "MaskedScatter",
                                        .export = &cm_export_masked_scatter,
                                        CM_PARAMS_OF(cm_masked_params),
                                        .vjp = masked_scatter_vjp,
                                        .jvp = masked_scatter_jvp,
                                        .vmap = masked_scatter_vmap};

static int masked_gather_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                             cm_stream s) {
  (void)out, (void)nin;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++)
    if (argnums[i] != 0) return index_grad_error("masked_scatter", "VJP", "mask");
  for (int i = 0; i < nargs; i++) {
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *g = z ? masked_scatter(z, in[1], cotan, p, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int masked_gather_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (check_index_tangents("masked_scatter", tangents, 1, 1, "mask")) return -1;
  return gather_like_jvp(&cm_prim_masked_gather, p, MASKED_PSIZE, out, in, nin, tangents, tangent,
                         s);
}

static int masked_gather_vmap(const cm_array *node_, cm_array *const *in, int nin,
                              const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                              cm_stream s) {
  return masked_vmap(node_, in, nin, p, axes, out, out_axis, true, s);
}

const cm_prim cm_prim_masked_gather = {.name = "MaskedGather",
                                       CM_PARAMS_OF(cm_masked_params),
                                       .vjp = masked_gather_vjp,
                                       .jvp = masked_gather_jvp,
                                       .vmap = masked_gather_vmap};
