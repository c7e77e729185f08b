/* CPU kernels for the indexing primitives that write: Scatter,
 * ScatterAxis, MaskedScatter, and MaskedGather (primitives/indexing.h).
 *
 * Determinism: updates that land on the same element are applied in the
 * row-major order of their index positions, whatever the thread count, so
 * "none" keeps the last write and sums round the same way every run.  Work
 * is split so that one destination is only ever touched by one thread
 * (by window element, by destination range, or by fibre along the axis). */
#ifndef CMLX_BACKEND_CPU_SCATTER_H
#define CMLX_BACKEND_CPU_SCATTER_H

#include "primitives/primitive.h"

int cm_cpu_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_scatter_axis(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_masked_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_masked_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
