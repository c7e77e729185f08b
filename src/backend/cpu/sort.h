/* CPU kernels of the Sort family (sort, argsort, partition, argpartition,
 * searchsorted). */
#ifndef CMLX_BACKEND_CPU_SORT_H
#define CMLX_BACKEND_CPU_SORT_H

#include "primitives/primitive.h"

/* The Sort primitive's kernel; the op, axis and kth are in p (a
 * cm_sort_params).  The axis ops take one input; searchsorted takes the
 * 1-D sorted sequence and the values (same dtype).  The output is
 * row-contiguous. */
int cm_cpu_sort(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
