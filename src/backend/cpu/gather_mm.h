/* CPU kernels of GatherMM, SegmentedMM and BlockMaskedMM (inputs as in
 * primitives/gather_mm.h; every operand has out's dtype, indices and
 * segments are uint32, masks bool or out's dtype). */
#ifndef CMLX_BACKEND_CPU_GATHER_MM_H
#define CMLX_BACKEND_CPU_GATHER_MM_H

#include "primitives/primitive.h"

int cm_cpu_gather_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_segmented_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_block_masked_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
