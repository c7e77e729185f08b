/* Graph walks shared by the transforms: the nodes between a function's
 * traced inputs and its outputs, in topological order. */
#ifndef CMLX_TRANSFORMS_GRAPH_H
#define CMLX_TRANSFORMS_GRAPH_H

#include "core/array.h"
#include "transforms/ptrmap.h"

typedef struct cm_graph_walk {
  cm_array **order; /* topological: inputs before consumers */
  size_t len, cap;
  cm_ptrmap marks;  /* node -> visited / on the path */
  cm_ptrmap inputs; /* traced input node -> its index + 1 */
  /* Derivatives (vjp, jvp): a StopGradient node is never on the path, so
   * nothing after it asks for a derivative through it (as MLX's tapes
   * leave it out).  vmap batches through it. */
  bool stop_gradients;
} cm_graph_walk;

static inline bool cm_has_graph(const cm_array *a) { return a->prim != NULL; }

/* Register a traced input (index is the caller's, >= 0). */
int cm_graph_add_input(cm_graph_walk *w, cm_array *a, int index);
/* Index of a traced input, or -1. */
int cm_graph_input_index(const cm_graph_walk *w, const cm_array *a);
/* Iterative post-order DFS from the outputs through nodes that still have
 * their graph, stopping at the traced inputs.  A node is on the path when
 * it is a traced input or one of its inputs is (and, with stop_gradients,
 * it is not a StopGradient). */
int cm_graph_sort(cm_graph_walk *w, cm_array *const *outs, int nout);
bool cm_graph_on_path(const cm_graph_walk *w, const cm_array *a);
void cm_graph_walk_free(cm_graph_walk *w);

#endif
