/* Vectorising map.  The function is traced once on placeholders that stand
 * for one slice of each batched input; the traced graph is then replayed
 * in topological order, each primitive's vmap rule turning the node into
 * its batched form and reporting where the batch axis went. */
#ifndef CMLX_TRANSFORMS_VMAP_H
#define CMLX_TRANSFORMS_VMAP_H

#include <stdint.h>

#include "transforms/autodiff.h"

#define CM_VMAP_NONE INT32_MIN

/* vmap in two halves: trace f on placeholders, then replay the traced
 * graph with batched inputs.  The front doors choose the out axes only
 * after seeing the traced outputs (Python's vmap with an out_axes tree,
 * mlx_detail_vmap_trace / mlx_detail_vmap_replace).  in_axes[i] is the
 * batch axis of inputs[i] (negative counts from the end; CM_VMAP_NONE: not
 * batched); out_axes has nout_axes entries, or one entry used for every
 * output.
 *
 * trace: *s_inputs (nin entries) are the placeholders, one slice of each
 * batched input (a batched input's placeholder; an unbatched input
 * itself), and *s_outputs (*nout entries) f's outputs on them; both are
 * malloc'd arrays of new references.
 *
 * replace: replays the graph between s_inputs and s_outputs on the real
 * inputs.  An out axis may be CM_VMAP_NONE (MLX's -1): an output that does
 * not depend on a batched input then gets its new axis last; a batched
 * output is an error. */
int cm_vmap_trace(cm_closure f, cm_array *const *inputs, int nin, const int *in_axes,
                  cm_array ***s_inputs, cm_array ***s_outputs, int *nout);
int cm_vmap_replace(cm_array *const *inputs, cm_array *const *s_inputs, int nin,
                    cm_array *const *s_outputs, int nout, const int *in_axes,
                    const int *out_axes, int nout_axes, cm_array ***outputs);

#endif
