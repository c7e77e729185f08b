/* Indexing primitives: descriptors, printed names and the derivative
 * rules (MLX's, built from the indexing ops themselves):
 *   Gather:  vjp = scatter_add of the cotangent into zeros; jvp = gather.
 *   Scatter: none: d/da = cotangent with the written windows zeroed,
 *            d/dupdates = gather of the cotangent; sum: d/da = cotangent;
 *            max/min: the cotangent flows where the result equals the
 *            operand.  jvp for none and sum (linear in both inputs).
 *   GatherAxis / ScatterAxis: the same along one axis.
 *   MaskedScatter: d/da = cotangent off the mask, d/dsrc = the
 *            cotangent's masked entries in order (MaskedGather).
 * Indices get no gradient (NULL: zero). */
#include "primitives/indexing.h"

#include "backend/cpu/gather.h"
#include "backend/cpu/scatter.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/binary.h"
#include "ops/ternary.h"

_Static_assert(sizeof(cm_gather_params) <= sizeof(cm_params), "gather params");
_Static_assert(sizeof(cm_scatter_params) <= sizeof(cm_params), "scatter params");

const int32_t *cm_gather_slice_sizes(const cm_array *out, cm_array *const *in, int nin) {
  return out->shape + (nin > 1 ? in[1]->ndim : 0);
}

const int32_t *cm_scatter_window(cm_array *const *in, int nin) {
  const cm_array *upd = in[nin - 1];
  return upd->shape + (upd->ndim - in[0]->ndim);
}

/* ---- small helpers ---- */

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
  cm_array *r = ins[nin - 1]
                    ? node(prim, p, psize, out->dtype, out->ndim, out->shape, ins, nin, s)
                    : NULL;
  cm_release(ins[0]);
  cm_release(ins[nin - 1]);
  return set(tangent, r);
}

/* ---- Gather ---- */

static int gather_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                      const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)out;
  const cm_gather_params *gp = (const cm_gather_params *)p;
  int axes[CM_MAX_DIMS];
  unpack_axes(gp->axes, gp->naxes, axes);
  for (int i = 0; i < nargs; i++) {
    grads[i] = NULL;
    if (argnums[i] != 0) continue;
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *g = z ? cm_scatter(z, in + 1, nin - 1, cotan, axes, gp->naxes, CM_SCATTER_SUM, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int gather_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  return gather_like_jvp(&cm_prim_gather, p, sizeof(cm_gather_params), out, in, nin, tangents, tangent,
                         s);
}

const cm_prim cm_prim_gather = {
    .name = "Gather", .eval_cpu = cm_cpu_gather, .vjp = gather_vjp, .jvp = gather_jvp};

/* ---- Scatter ---- */

static const char *scatter_name(const cm_params *p) {
  switch (((const cm_scatter_params *)p)->op) {
  case CM_SCATTER_SUM: return "ScatterSum";
  case CM_SCATTER_PROD: return "ScatterProd";
  case CM_SCATTER_MAX: return "ScatterMax";
  case CM_SCATTER_MIN: return "ScatterMin";
  default: return "Scatter";
  }
}

/* gather(x, indices) with the scatter's window: the updates' shape. */
static cm_array *gather_window(cm_array *x, cm_array *const *in, int nin, const int *axes, int naxes,
                               cm_stream s) {
  return cm_gather(x, in + 1, nin - 2, axes, naxes, cm_scatter_window(in, nin), x->ndim, s);
}

static cm_array *scatter_vjp_a(cm_array *out, cm_array *const *in, int nin, const cm_scatter_params *sp,
                               const int *axes, cm_array *cotan, cm_stream s) {
  cm_array *upd = in[nin - 1];
  switch (sp->op) {
  case CM_SCATTER_NONE: {
    cm_array *z = cm_zeros(upd->ndim, upd->shape, cotan->dtype, s);
    cm_array *g = z ? cm_scatter(cotan, in + 1, nin - 2, z, axes, sp->naxes, CM_SCATTER_NONE, s) : NULL;
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

static int scatter_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                       const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  const cm_scatter_params *sp = (const cm_scatter_params *)p;
  int axes[CM_MAX_DIMS];
  unpack_axes(sp->axes, sp->naxes, axes);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    if (argnums[i] != 0 && argnums[i] != nin - 1) continue;
    if (sp->op == CM_SCATTER_PROD)
      return cm_error(CM_ERR_NOT_IMPLEMENTED, "[scatter] VJP not implemented for scatter_prod.");
    cm_array *g = argnums[i] == 0 ? scatter_vjp_a(out, in, nin, sp, axes, cotan, s)
                                  : scatter_vjp_updates(out, in, nin, sp, axes, cotan, s);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int scatter_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  const cm_scatter_params *sp = (const cm_scatter_params *)p;
  if (sp->op != CM_SCATTER_NONE && sp->op != CM_SCATTER_SUM)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[scatter] JVP not implemented for %s.", scatter_name(p));
  return scatter_like_jvp(&cm_prim_scatter, p, sizeof *sp, out, in, nin, tangents, tangent, s);
}

const cm_prim cm_prim_scatter = {.name = "Scatter",
                                 .op_name = scatter_name,
                                 .eval_cpu = cm_cpu_scatter,
                                 .vjp = scatter_vjp,
                                 .jvp = scatter_jvp};

/* ---- GatherAxis / ScatterAxis ---- */

static int gather_axis_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                           cm_stream s) {
  (void)out, (void)nin;
  const cm_axis_index_params *ap = (const cm_axis_index_params *)p;
  for (int i = 0; i < nargs; i++) {
    grads[i] = NULL;
    if (argnums[i] != 0) continue;
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *g = z ? cm_scatter_add_axis(z, in[1], cotan, ap->axis, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int gather_axis_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  return gather_like_jvp(&cm_prim_gather_axis, p, sizeof(cm_axis_index_params), out, in, nin, tangents,
                         tangent, s);
}

const cm_prim cm_prim_gather_axis = {
    .name = "GatherAxis", .eval_cpu = cm_cpu_gather_axis, .vjp = gather_axis_vjp, .jvp = gather_axis_jvp};

static const char *scatter_axis_name(const cm_params *p) {
  return ((const cm_axis_index_params *)p)->op == CM_SCATTER_SUM ? "ScatterAxisSum" : "ScatterAxis";
}

static int scatter_axis_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                            cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                            cm_stream s) {
  (void)out, (void)nin;
  const cm_axis_index_params *ap = (const cm_axis_index_params *)p;
  for (int i = 0; i < nargs; i++) {
    grads[i] = NULL;
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
  return scatter_like_jvp(&cm_prim_scatter_axis, p, sizeof(cm_axis_index_params), out, in, nin,
                          tangents, tangent, s);
}

const cm_prim cm_prim_scatter_axis = {.name = "ScatterAxis",
                                      .op_name = scatter_axis_name,
                                      .eval_cpu = cm_cpu_scatter_axis,
                                      .vjp = scatter_axis_vjp,
                                      .jvp = scatter_axis_jvp};

/* ---- MaskedScatter / MaskedGather ---- */

static int masked_scatter_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s) {
  (void)out, (void)nin, (void)p;
  for (int i = 0; i < nargs; i++) {
    grads[i] = NULL;
    cm_array *g = NULL;
    if (argnums[i] == 0) {
      cm_array *z = cm_zeros(0, NULL, cotan->dtype, s);
      g = z ? cm_where(in[1], z, cotan, s) : NULL;
      cm_release(z);
    } else if (argnums[i] == 2) {
      cm_array *ins[2] = {cotan, in[1]};
      g = node(&cm_prim_masked_gather, NULL, 0, cotan->dtype, in[2]->ndim, in[2]->shape, ins, 2, s);
    } else {
      continue;
    }
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int masked_scatter_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)p;
  return scatter_like_jvp(&cm_prim_masked_scatter, NULL, 0, out, in, nin, tangents, tangent, s);
}

const cm_prim cm_prim_masked_scatter = {.name = "MaskedScatter",
                                        .eval_cpu = cm_cpu_masked_scatter,
                                        .vjp = masked_scatter_vjp,
                                        .jvp = masked_scatter_jvp};

static int masked_gather_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                             cm_stream s) {
  (void)out, (void)nin, (void)p;
  for (int i = 0; i < nargs; i++) {
    grads[i] = NULL;
    if (argnums[i] != 0) continue;
    cm_array *z = cm_zeros_like(in[0], s);
    cm_array *ins[3] = {z, in[1], cotan};
    cm_array *g = z ? node(&cm_prim_masked_scatter, NULL, 0, z->dtype, z->ndim, z->shape, ins, 3, s) : NULL;
    cm_release(z);
    if (set(&grads[i], g)) return -1;
  }
  return 0;
}

static int masked_gather_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)p;
  return gather_like_jvp(&cm_prim_masked_gather, NULL, 0, out, in, nin, tangents, tangent, s);
}

const cm_prim cm_prim_masked_gather = {.name = "MaskedGather",
                                       .eval_cpu = cm_cpu_masked_gather,
                                       .vjp = masked_gather_vjp,
                                       .jvp = masked_gather_jvp};
