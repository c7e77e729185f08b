#include "primitives/ternary.h"

#include "backend/cpu/ternary.h"

const cm_prim cm_prim_select = {.name = "Select", .eval_cpu = cm_cpu_select};
