/* Primitive descriptors.  A primitive is one function table shared by a
 * family (Unary, Binary, Reduce, ...) plus a small parameter block on the
 * node that carries the op code and settings.  Per-op facts (the kernel,
 * the derivative rule, the printed name) live in the family's tables. */
#ifndef CMLX_PRIMITIVES_PRIMITIVE_H
#define CMLX_PRIMITIVES_PRIMITIVE_H

#include "core/array.h"

/* Fill out's data from its inputs.  Returns 0, or -1 with the error set. */
typedef int (*cm_eval_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Reverse mode: given the node out = prim(in) and the cotangent of out,
 * set grads[i] to the cotangent of in[argnums[i]] (a new reference; NULL
 * means zero).  Builds graph nodes only. */
typedef int (*cm_vjp_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                         cm_stream s);
/* Forward mode: tangents[i] is in[i]'s tangent (NULL: zero, and at least
 * one is non-NULL); set *tangent to out's tangent (a new reference). */
typedef int (*cm_jvp_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *const *tangents, cm_array **tangent, cm_stream s);
/* Batching: p always points into the traced node's own parameter block,
 * so a rule that needs the node's output shape or dtype may recover it
 * (rules_util.h: cm_rule_node).  in[i] carries its batch on axis axes[i] (-1: not batched, at
 * least one is batched).  Set *out to the batched result (new reference)
 * and *out_axis to where its batch axis is. */
typedef int (*cm_vmap_fn)(cm_array *const *in, int nin, const cm_params *p, const int *axes,
                          cm_array **out, int *out_axis, cm_stream s);

struct cm_prim {
  const char *name; /* family name, e.g. "Unary" */
  /* Printed name of one node, e.g. "Exp"; NULL means use name. */
  const char *(*op_name)(const cm_params *p);
  cm_eval_fn eval_cpu;
  cm_eval_fn eval_gpu; /* NULL until the CUDA backend exists */
  /* Transform rules; NULL makes the transform fail with an error naming
   * the primitive. */
  cm_vjp_fn vjp;
  cm_jvp_fn jvp;
  cm_vmap_fn vmap;
};

static inline const char *cm_prim_name(const cm_prim *p, const cm_params *params) {
  return p->op_name ? p->op_name(params) : p->name;
}

#endif
