#include "primitives/count.h"
#include "primitives/export_desc.h"

#include "ops/common.h"

static int count_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                       int *ndim, int32_t *shape) {
  (void)node, (void)in, (void)nin, (void)p, (void)shape;
  *ndim = 0;
  return 0;
}

/* The batch axis is not counted: the counted axes at or past it move up. */
static int count_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_count_params q = *cm_count_params_of(node);
  uint64_t low = ((uint64_t)1 << axes[0]) - 1;
  q.axes = (q.axes & low) | ((q.axes & ~low) << 1);
  *out = cm_op_node(node->dtype, 0, NULL, &cm_prim_number_of_elements, &q, sizeof q, in, 1, s);
  *out_axis = -1;
  return *out ? 0 : -1;
}

const cm_prim cm_prim_number_of_elements = {.name = "NumberOfElements",
                                            .export = &cm_export_number_of_elements,
                                            CM_PARAMS_OF(cm_count_params),
                                            .output_shape = count_shape,
                                            .vmap = count_vmap};
