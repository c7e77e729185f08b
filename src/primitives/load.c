#include "primitives/load.h"

static void load_destroy(cm_params *p) {
  cm_reader_release(cm_load_params_of_block(p, cm_prim_load.params_size)->reader);
}

const cm_prim cm_prim_load = {
    .name = "Load",
    CM_PARAMS_OF(cm_load_params),
    .params_destroy = load_destroy,
};
