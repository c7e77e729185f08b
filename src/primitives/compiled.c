#include "primitives/compiled.h"

#include "backend/cpu/fused.h"

/* The block holds a pointer into this process: it cannot be exported. */
static int compiled_save(const cm_params *p, size_t size, cm_bytes *out) {
  (void)p, (void)size, (void)out;
  return cm_error(CM_ERR_VALUE, "[Compiled] A fused kernel cannot be exported.");
}

static const char *compiled_name(const cm_params *p) {
  const cm_compiled_params *c = (const cm_compiled_params *)p;
  return c->label[0] ? c->label : "Compiled";
}

const cm_prim cm_prim_compiled = {.name = "Compiled",
                                  .op_name = compiled_name,
                                  .params_size = sizeof(cm_compiled_params),
                                  .params_save = compiled_save,
                                  .eval_cpu = cm_cpu_fused};
