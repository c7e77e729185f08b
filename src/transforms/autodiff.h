/* Reverse and forward mode differentiation over the lazy graph.
 *
 * A function of arrays is a cm_closure.  To differentiate it we call it on
 * fresh Identity nodes wrapping the primals, so that the inputs are
 * recognisable in the graph it builds, then walk that graph: backwards
 * with each primitive's vjp rule, or forwards with its jvp rule. */
#ifndef CMLX_TRANSFORMS_AUTODIFF_H
#define CMLX_TRANSFORMS_AUTODIFF_H

#include "core/array.h"

typedef struct cm_closure {
  /* Call the function: set *out to a malloc'd array of *nout new
   * references.  Returns 0, or -1 with the error set. */
  int (*call)(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout);
  void *ctx;
} cm_closure;

/* Free an output array list as returned through a closure or below. */
void cm_array_list_free(cm_array **list, int n);

/* outputs = f(primals); grads[i] = d<outputs, cotangents>/d primals[i].
 * *outputs (nout entries) and *grads (nprimals entries) are malloc'd
 * arrays of new references. */
int cm_vjp(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *cotangents,
           int ncotangents, cm_array ***outputs, int *nout, cm_array ***grads);

/* outputs = f(primals); out_tangents[j] = the directional derivative of
 * outputs[j] along tangents. */
int cm_jvp(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *tangents,
           int ntangents, cm_array ***outputs, int *nout, cm_array ***out_tangents);

#endif
