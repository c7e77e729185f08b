/* Transform rules of the Select primitive (where; clip is built from
 * maximum and minimum and needs no rules of its own).
 *
 * The condition gets no gradient.  As in MLX, the cotangent goes to x
 * multiplied by the condition (cast to the cotangent's dtype) and to y
 * multiplied by its negation; the inputs already share the output's shape
 * (the op inserts Broadcast nodes).  vmap aligns the three batch axes and
 * selects again. */
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* g masked by the condition (i == 1: where it holds; i == 2: elsewhere). */
static cm_array *masked(cm_rt *t, cm_array *cond, int i, cm_array *g, cm_stream s) {
  cm_array *c = i == 1 ? cond : RT(t, cm_logical_not(cond, s));
  cm_array *m = RT(t, cm_astype(c, g->dtype, s));
  return RT(t, cm_multiply(m, g, s));
}

int cm_rule_select_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)out, (void)nin, (void)p;
  for (int k = 0; k < nargs; k++) {
    if (argnums[k] == 0) continue; /* the condition: zero */
    cm_rt t = {.n = 0};
    cm_array *r = masked(&t, in[0], argnums[k], cotan, s);
    if (cm_rt_done(&t, r, &grads[k])) return -1;
  }
  return 0;
}

int cm_rule_select_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  if (!tangents[1] && !tangents[2]) /* only the condition moves: zero */
    return (*tangent = cm_rule_zeros(out, tangents[0]->dtype, s)) ? 0 : -1;
  cm_rt t = {.n = 0};
  cm_array *sum = NULL;
  for (int i = 1; i < 3; i++) {
    if (!tangents[i]) continue;
    cm_array *r = masked(&t, in[0], i, tangents[i], s);
    sum = sum ? RT(&t, cm_add(sum, r, s)) : r;
  }
  return cm_rt_done(&t, sum, tangent);
}

int cm_rule_select_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node, (void)nin, (void)p;
  cm_array *x[3];
  if (cm_rule_align(in, 3, axes, x, out_axis, s)) return -1;
  *out = cm_where(x[0], x[1], x[2], s);
  for (int i = 0; i < 3; i++) cm_release(x[i]);
  return *out ? 0 : -1;
}
