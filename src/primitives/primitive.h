/* Primitive descriptors.  A primitive is one function table shared by a
 * family (Unary, Binary, Reduce, ...) plus a small parameter block on the
 * node that carries the op code and settings.  Per-op facts (the kernel,
 * the derivative rule, the printed name) live in the family's tables. */
#ifndef CMLX_PRIMITIVES_PRIMITIVE_H
#define CMLX_PRIMITIVES_PRIMITIVE_H

#include "core/array.h"

/* Fill out's data from its inputs.  Returns 0, or -1 with the error set. */
typedef int (*cm_eval_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

struct cm_prim {
  const char *name; /* family name, e.g. "Unary" */
  /* Printed name of one node, e.g. "Exp"; NULL means use name. */
  const char *(*op_name)(const cm_params *p);
  cm_eval_fn eval_cpu;
  cm_eval_fn eval_gpu; /* NULL until the CUDA backend exists */
  /* Transform rules (vjp, jvp, vmap) join this table with the transforms
   * work; a primitive without one must make the transform fail with an
   * error naming it. */
};

static inline const char *cm_prim_name(const cm_prim *p, const cm_params *params) {
  return p->op_name ? p->op_name(params) : p->name;
}

#endif
