/* Helpers shared by op constructors: stream resolution, broadcasting and
 * promotion.  Op constructors take borrowed inputs and return a new
 * reference, or NULL with the error set (they never touch raw buffers). */
#ifndef CMLX_OPS_COMMON_H
#define CMLX_OPS_COMMON_H

#include "core/array.h"
#include "primitives/primitive.h"

/* Resolve s in place; -1 (ValueError) if its device is unavailable. */
int cm_op_stream(cm_stream *s);

/* NumPy-style broadcast of two shapes into out (room for CM_MAX_DIMS);
 * ValueError naming both shapes when they do not broadcast. */
int cm_broadcast_shapes(int na, const int32_t *a, int nb, const int32_t *b, int *nout,
                        int32_t *out);

/* Build a node and report "[op] ..." errors; a thin wrapper that also
 * checks the shape. */
cm_array *cm_op_node(cm_dtype dtype, int ndim, const int32_t *shape, const cm_prim *prim,
                     const void *params, size_t params_size, cm_array *const *inputs, int nin,
                     cm_stream s);

/* Broadcast a to a shape (a view).  Returns a new reference to a itself
 * when the shape already matches. */
cm_array *cm_broadcast_to(cm_array *a, int ndim, const int32_t *shape, cm_stream s);

/* Broadcast n arrays to their common shape, converting them to dtype unless
 * dtype is -1.  outs[i] are new references; on failure none are left. */
int cm_broadcast_and_cast(cm_array *const *ins, int n, int dtype, cm_array **outs, cm_stream s);

/* Broadcast n arrays against each other except for their last nignore
 * axes, which each keeps (MLX's broadcast_arrays with ignore_axes
 * {-nignore, ..., -1}; matmul's batch axes with nignore 2).  outs[i] are
 * new references; on failure none are left. */
int cm_broadcast_axes(cm_array *const *ins, int n, int nignore, cm_array **outs, cm_stream s);

/* Cast (astype): a new reference to a when the dtype already matches. */
cm_array *cm_astype(cm_array *a, cm_dtype dtype, cm_stream s);
/* A row-contiguous copy (or a if already so); allow_col_major also accepts
 * column-contiguous input. */
cm_array *cm_contiguous(cm_array *a, bool allow_col_major, cm_stream s);

/* MLX's depends: outs[i] (nin of them, new references) hold inputs[i]'s
 * values, and evaluating any of them first evaluates every dependency.
 * Gradients flow to the inputs; the dependencies get zeros. */
int cm_depends(int nin, cm_array *const *inputs, int ndeps, cm_array *const *deps, cm_stream s,
               cm_array **outs);

/* While a shapeless compile traces (MLX's dynamic tracing), broadcasts of
 * several inputs keep every input as a Broadcast input (the one broadcast
 * first, the others behind stop_gradient), so a replay on other shapes can
 * recompute the common shape. */
void cm_dynamic_shapes_push(void);
void cm_dynamic_shapes_pop(void);
bool cm_dynamic_shapes(void);

#endif
