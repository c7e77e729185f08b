#include "primitives/compiled.h"

#include "backend/cpu/fused.h"
#include "primitives/rules_util.h"

/* The block holds a pointer into this process: it cannot be exported. */
static int compiled_save(const cm_params *p, size_t size, cm_bytes *out) {
  (void)p, (void)size, (void)out;
  return cm_error(CM_ERR_VALUE, "[Compiled] A fused kernel cannot be exported.");
}

static const char *compiled_name(const cm_params *p) {
  const cm_compiled_params *c = (const cm_compiled_params *)p;
  return c->label[0] ? c->label : "Compiled";
}

/* Shapeless compile: the inputs' common shape (fuse.c checked that it is
 * the region's); a region feeding a reduction is never in such a trace. */
static int compiled_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                          int *ndim, int32_t *shape) {
  if (((const cm_compiled_params *)p)->red_op)
    return cm_error(CM_ERR_VALUE, "[Compiled] Cannot infer the shape of a fused reduction.");
  return cm_shape_of_broadcast(node, in, nin, p, ndim, shape);
}

const cm_prim cm_prim_compiled = {.name = "Compiled",
                                  .output_shape = compiled_shape,
                                  .op_name = compiled_name,
                                  .params_size = sizeof(cm_compiled_params),
                                  .params_save = compiled_save};
