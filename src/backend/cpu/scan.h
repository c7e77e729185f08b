/* CPU kernels of the Scan primitive. */
#ifndef CMLX_BACKEND_CPU_SCAN_H
#define CMLX_BACKEND_CPU_SCAN_H

#include "primitives/primitive.h"

/* The forward scans (one input, already in the output dtype) and the
 * derivative scans (two inputs); p is a cm_scan_params.  The output is
 * row-contiguous. */
int cm_cpu_scan(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
