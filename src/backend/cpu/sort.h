/* CPU kernels of the Sort family (sort, argsort, partition, argpartition,
 * searchsorted). */
#ifndef CMLX_BACKEND_CPU_SORT_H
#define CMLX_BACKEND_CPU_SORT_H

#include "primitives/primitive.h"

/* One input; the op, axis and kth are in p (a cm_sort_params).  The
 * output is row-contiguous. */
int cm_cpu_sort(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* in[0]: the 1-D sorted sequence, in[1]: the values (same dtype). */
int cm_cpu_searchsorted(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
