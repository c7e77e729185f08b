/* mx.fast.metal_kernel without Metal, as MLX's CPU build
 * (mlx/backend/common/metal_kernel.cpp): a call outside export tracing is
 * MLX's RuntimeError "[metal_kernel] No Metal back-end."; inside it (see
 * cm_in_export_tracing) the generated kernel source and name are made as
 * MLX makes them and the call is recorded as a lazy CustomKernel node
 * (primitives/custom_kernel.h) on a placeholder GPU stream. */
#ifndef CMLX_OPS_METAL_KERNEL_H
#define CMLX_OPS_METAL_KERNEL_H

#include "ops/common.h"

/* What metal_kernel(...) was given (math_mode: MLX's MathMode, 0 safe,
 * 1 relaxed, 2 fast). */
typedef struct cm_metal_kernel_def {
  const char *name, *source, *header;
  const char *const *input_names;
  int ninput_names;
  const char *const *output_names;
  int noutput_names;
  bool ensure_row_contiguous, atomic_outputs;
  int math_mode;
} cm_metal_kernel_def;

typedef enum { CM_TEMPLATE_INT, CM_TEMPLATE_BOOL, CM_TEMPLATE_DTYPE } cm_template_kind;
typedef struct cm_template_arg {
  const char *name;
  cm_template_kind kind;
  int value; /* the int, the bool, or the cm_dtype */
} cm_template_arg;

/* One call: outs gets nout new references.  MLX's checks and messages. */
int cm_fast_metal_kernel(const cm_metal_kernel_def *k, cm_array *const *inputs, int nin,
                         const int *out_ndims, const int32_t *const *out_shapes,
                         const cm_dtype *out_dtypes, int nout, const int grid[3],
                         const int threadgroup[3], const cm_template_arg *targs, int ntargs,
                         bool has_init, float init_value, bool verbose, cm_stream s,
                         cm_array **outs);

/* A CustomKernel node from its state (the importer's constructor): p is
 * a whole parameter block (primitives/custom_kernel.h), s its stream. */
int cm_custom_kernel(const void *p, size_t size, cm_array *const *inputs, int nin,
                     const int *out_ndims, const int32_t *const *out_shapes,
                     const cm_dtype *out_dtypes, int nout, cm_stream s, cm_array **outs);

#endif
