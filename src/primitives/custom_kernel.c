/* The CustomKernel primitive (see custom_kernel.h). */
#include "primitives/custom_kernel.h"
#include "primitives/export_desc.h"

#include "core/error.h"

size_t cm_custom_kernel_params_size(const cm_params *p) {
  const cm_custom_kernel_params *k = (const cm_custom_kernel_params *)p;
  return sizeof *k + 3 * (size_t)k->ninfos + k->name_len + k->source_len;
}

/* MLX's CustomKernel::eval_cpu. */
static int custom_kernel_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_RUNTIME, "Custom kernels only run on GPU.");
}

/* No output_shape hook: a shapeless replay cannot infer its outputs. */
const cm_prim cm_prim_custom_kernel = {.name = "CustomKernel",
                                       .export = &cm_export_custom_kernel,
                                       .params_size = sizeof(cm_custom_kernel_params),
                                       .params_extent = cm_custom_kernel_params_size,
                                       .eval_cpu = custom_kernel_eval};
