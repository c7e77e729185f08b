/* Functions with their own transformation rules (MLX's custom_function,
 * custom_vjp and checkpoint), behind a plain C callback interface that the
 * C API and the Python front door both use.
 *
 * Calling a custom function runs it, cuts its outputs off the graph with
 * stop_gradient, and builds one CustomTransforms node with an output per
 * function output (inputs: primals..., stopped outputs...; output k's data
 * is stopped output k's), as MLX's CustomTransforms primitive does.  The
 * node's parameter block owns the callbacks' state (its destructor runs
 * destroy), so the state lives exactly as long as the node's graph.
 * Differentiating or batching the node calls the callbacks below, once
 * for all outputs, instead of walking the function's graph. */
#ifndef CMLX_TRANSFORMS_CUSTOM_H
#define CMLX_TRANSFORMS_CUSTOM_H

#include "transforms/autodiff.h"

typedef struct cm_custom_rules {
  /* grads[i]: the cotangent of primals[i] (*ngrads must be nprimals) given
   * one cotangent per output and the outputs.  Malloc'd new references. */
  int (*vjp)(void *ctx, cm_array *const *primals, int nprimals, cm_array *const *cotangents,
             cm_array *const *outputs, int nout, cm_array ***grads, int *ngrads);
  /* One tangent per output, given the tangents of primals[argnums[k]]
   * (ntangents entries, increasing argnums; the others are zero). */
  int (*jvp)(void *ctx, cm_array *const *primals, int nprimals, cm_array *const *tangents,
             const int *argnums, int ntangents, cm_array ***out, int *nout);
  /* The batched outputs and their batch axes (-1: not batched) given the
   * inputs and their batch axes (-1: not batched).  *out and *out_axes are
   * malloc'd (new references in *out). */
  int (*vmap)(void *ctx, cm_array *const *inputs, int nin, const int *axes, cm_array ***out,
              int **out_axes, int *nout);
  void *ctx;
  /* Runs once, on whatever thread drops the last node of the call (a
   * stream worker after evaluation, for example): it must not block on
   * the caller.  May be NULL. */
  void (*destroy)(void *ctx);
} cm_custom_rules;

/* outputs = fun(inputs) as CustomTransforms nodes.  A NULL callback takes
 * the default rule computed from fun with the engines (vjp / jvp / vmap of
 * fun, re-running it), which is what makes checkpoint a custom function
 * with no callbacks.  fun and rules->ctx must stay valid until destroy
 * runs; ownership of rules->ctx passes to the call (destroy runs at once if
 * it fails).  *outputs is a malloc'd array of *nout new references. */
int cm_custom_function(cm_closure fun, const cm_custom_rules *rules, cm_array *const *inputs,
                       int nin, cm_array ***outputs, int *nout);

/* The primitive, for front doors that want to recognise its nodes. */
extern const struct cm_prim cm_prim_custom_transforms;

#endif
