/* DivMod: one node with two outputs, floor_divide(a, b) and remainder(a,
 * b), computed in one pass (MLX's DivMod).  Like MLX it is treated as
 * piecewise constant: zero derivatives for both inputs and outputs. */
#include "primitives/divmod.h"
#include "primitives/export_desc.h"

#include "ops/ops.h"
#include "primitives/rules_util.h"

static int divmod_vjp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                      const cm_params *p, cm_array *const *cotans, const int *argnums, int nargs,
                      cm_array **grads, cm_stream s) {
  (void)outs, (void)nout, (void)nin, (void)p, (void)cotans;
  for (int k = 0; k < nargs; k++)
    if (!(grads[k] = cm_zeros_like(in[argnums[k]], s))) return -1;
  return 0;
}

static int divmod_jvp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                      const cm_params *p, cm_array *const *tangents, cm_array **tangents_out,
                      cm_stream s) {
  (void)in, (void)nin, (void)p, (void)tangents;
  for (int k = 0; k < nout; k++)
    if (!(tangents_out[k] = cm_zeros_like(outs[k], s))) return -1;
  return 0;
}

/* Batching: align the operands as any elementwise op, divmod again. */
static int divmod_vmap(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                       const cm_params *p, const int *axes, cm_array **outs_b, int *out_axes,
                       cm_stream s) {
  (void)outs, (void)nout, (void)nin, (void)p;
  cm_array *x[2];
  int axis;
  if (cm_rule_align(in, 2, axes, x, &axis, s)) return -1;
  int rc = cm_divmod(x[0], x[1], &outs_b[0], &outs_b[1], s);
  cm_release(x[0]);
  cm_release(x[1]);
  out_axes[0] = out_axes[1] = axis;
  return rc;
}

const cm_prim cm_prim_divmod = {.name = "DivMod",
                                .export = &cm_export_divmod,
                                .vjp_multi = divmod_vjp,
                                .jvp_multi = divmod_jvp,
                                .vmap_multi = divmod_vmap};
