#include "primitives/load.h"

static void load_destroy(cm_params *p) { cm_reader_release(((cm_load_params *)p)->reader); }

const cm_prim cm_prim_load = {
    .name = "Load",
    .params_size = sizeof(cm_load_params),
    .params_destroy = load_destroy,
};
