/* The CustomKernel primitive (see custom_kernel.h). */
#include "primitives/custom_kernel.h"
#include "primitives/export_desc.h"

size_t cm_custom_kernel_params_size(const cm_params *p) {
  const cm_custom_kernel_params *k =
      cm_custom_kernel_params_of_block(p, cm_prim_custom_kernel.params_size);
  return sizeof *k + 3 * (size_t)k->ninfos + k->name_len + k->source_len;
}

/* No output_shape hook: a shapeless replay cannot infer its outputs.  Its
 * kernels are the backends' (the CPU's reports that it has none). */
const cm_prim cm_prim_custom_kernel = {.name = "CustomKernel",
                                       .export = &cm_export_custom_kernel,
                                       CM_PARAMS_OF(cm_custom_kernel_params),
                                       .params_extent = cm_custom_kernel_params_size};
