/* Graph rewrites that mx.compile applies to a trace after tracing it
 * (MLX's compile_simplify and compile_fuse): the trace is a tape, its
 * nodes in topological order plus the function's outputs.  The rewrites
 * replace nodes, so the tape's arrays change; every array in it is a
 * reference the tape holds.  Results stay bit for bit what the op-by-op
 * replay gives. */
#ifndef CMLX_TRANSFORMS_SIMPLIFY_H
#define CMLX_TRANSFORMS_SIMPLIFY_H

#include <stddef.h>

#include "core/array.h"

typedef struct cm_tape {
  cm_array **order; /* inputs before consumers; placeholders (tracers) included */
  size_t len;
  cm_array **outputs;
  int nout;
} cm_tape;

/* Merge equivalent nodes (same primitive, parameters, inputs, dtype and
 * shape; never random, loading or nodes without inputs), merge equal
 * scalar constants, fold size-one elementwise nodes on constants into
 * constants, and drop Copy and StopGradient nodes.  0, or -1 with the
 * error set (the tape is then still consistent). */
int cm_simplify_tape(cm_tape *t);

/* Replace regions of elementwise nodes by Compiled nodes whose kernel is
 * generated C (transforms/fuse.c).  A region whose kernel cannot be built
 * (no compiler) stays as it is.  In a shapeless trace the regions take
 * in its dynamic broadcasts and their kernels assume nothing about the
 * inputs' sizes. */
int cm_fuse_tape(cm_tape *t, bool shapeless);

/* ---- helpers shared by the two rewrites ---- */
/* Point input i of node a (its group's shared inputs) at x. */
void cm_tape_set_input(cm_array *a, int i, cm_array *x);
/* Keep only the nodes that the outputs reach (and every placeholder);
 * replaced nodes are released. */
int cm_tape_prune(cm_tape *t);
/* Replace every use of x (inputs of the tape's nodes, outputs) by y. */
void cm_tape_replace_uses(cm_tape *t, cm_array *x, cm_array *y);

#endif
