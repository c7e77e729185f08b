#include "primitives/layout.h"

#include "backend/cpu/layout.h"

const cm_prim cm_prim_broadcast = {.name = "Broadcast", .eval_cpu = cm_cpu_broadcast};
const cm_prim cm_prim_astype = {.name = "AsType", .eval_cpu = cm_cpu_copy};
const cm_prim cm_prim_copy = {.name = "Copy", .eval_cpu = cm_cpu_copy};
const cm_prim cm_prim_full = {.name = "Full", .eval_cpu = cm_cpu_copy};
