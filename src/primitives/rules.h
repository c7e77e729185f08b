/* Transform rules (vjp, jvp, vmap) of the elementwise, layout and shape
 * primitives, referenced by the descriptors in unary.c, binary.c,
 * ternary.c, layout.c and shape.c.  The signatures are primitive.h's
 * cm_vjp_fn / cm_jvp_fn / cm_vmap_fn.  Defined in the *_rules.c files. */
#ifndef CMLX_PRIMITIVES_RULES_H
#define CMLX_PRIMITIVES_RULES_H

#include "primitives/primitive.h"

#define CM_DECLARE_RULES(NAME)                                                               \
  int NAME##_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,             \
                 cm_array *cotan, const int *argnums, int nargs, cm_array **grads,           \
                 cm_stream s);                                                              \
  int NAME##_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,             \
                 cm_array *const *tangents, cm_array **tangent, cm_stream s);                \
  int NAME##_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,      \
                  const int *axes, cm_array **out, int *out_axis, cm_stream s);

CM_DECLARE_RULES(cm_rule_unary)          /* Unary, every op code */
CM_DECLARE_RULES(cm_rule_stop_gradient)  /* StopGradient */
CM_DECLARE_RULES(cm_rule_binary)         /* Binary, every op code */
CM_DECLARE_RULES(cm_rule_select)         /* Select (where) */
CM_DECLARE_RULES(cm_rule_broadcast)      /* Broadcast */
CM_DECLARE_RULES(cm_rule_astype)         /* AsType */
CM_DECLARE_RULES(cm_rule_copy)           /* Copy */
CM_DECLARE_RULES(cm_rule_full)           /* Full */

/* Shape primitives whose rules shape.c does not define itself. */
int cm_rule_as_strided_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                           cm_stream s);
int cm_rule_dynamic_slice_vmap(const cm_array *node, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s);

#undef CM_DECLARE_RULES

#endif
