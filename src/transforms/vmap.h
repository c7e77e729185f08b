/* Vectorising map.  The function is traced once on placeholders that stand
 * for one slice of each batched input; the traced graph is then replayed
 * in topological order, each primitive's vmap rule turning the node into
 * its batched form and reporting where the batch axis went. */
#ifndef CMLX_TRANSFORMS_VMAP_H
#define CMLX_TRANSFORMS_VMAP_H

#include "transforms/autodiff.h"

/* outputs = vmap(f, in_axes, out_axes)(inputs).  in_axes[i] is the batch
 * axis of inputs[i] (negative counts from the end; CM_VMAP_NONE: not
 * batched).  out_axes has nout_axes entries, or one entry used for every
 * output.  *outputs is a malloc'd array of *nout new references. */
#define CM_VMAP_NONE INT32_MIN
int cm_vmap(cm_closure f, cm_array *const *inputs, int nin, const int *in_axes,
            const int *out_axes, int nout_axes, cm_array ***outputs, int *nout);

#endif
